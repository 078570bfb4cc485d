/**
 * Holding ahead: when a claim's reconcile writes a ledger anyway, it also holds addresses for other claims of the same
 * pool that the cache shows waiting, in the same compare-and-swap write, so that their own reconciles find their
 * holding already made and write no ledger at all. In a burst this turns one ledger write per few claims into one per
 * `HOLD_AHEAD_LIMIT - HOLD_AHEAD_LOW_WATER` claims.
 *
 * Each entry is held for the waiting claim's real uid, so the API server's rules are the same as for any hold: an
 * entry is that claim's ("ours" on its reconcile, in any replica), and a claim deleted before its reconcile leaves an
 * orphan the garbage collector drops once its claim is gone and the safety age is over. Nothing here decides
 * uniqueness; a hold ahead that is refused (another replica or pool has the address) is simply forgotten.
 */
import { clusterNameOf, hasFinalizer, type SharedInformer } from '@tally-ipam/controller-kit';
import { REQUESTED_ADDRESS_ANNOTATION } from '../constants.js';
import { type AddressHolds, holderOf } from '../holds.js';
import { HOLDING_CLAIM_UID_INDEX, POOL_INDEX } from '../indexes.js';
import { pauseReason } from '../pause.js';
import type { AllocationUnit } from '../pool-allocation.js';
import { finalizersOf } from '../pool-kinds.js';
import { type PoolRef, poolKey, poolRefOfHolding, samePool } from '../pool-ref.js';
import type { PoolState } from '../pool-state.js';
import type { PoolStates } from '../pool-states.js';
import type { HoldingSource, StoredClaim, StoredCluster } from '../resources.js';
import type { AssumedWrites } from '../shared.js';

/**
 * What holding ahead reads and writes through: a part of the claim reconciler's deps (`ClaimReconcilerDeps`), which
 * the reconcile that tops a pool up hands in.
 */
export interface HoldAheadDeps {
  readonly claims: SharedInformer<StoredClaim>;
  readonly holdings: HoldingSource;
  readonly holds: AddressHolds;
  readonly clusters: SharedInformer<StoredCluster>;
  readonly assumed: AssumedWrites;
  readonly states: PoolStates;
  readonly now: () => number;
}

/** At most this many claims of one pool held ahead and not yet served, per process. */
export const HOLD_AHEAD_LIMIT = 64;
/**
 * A reconcile that would not write a ledger otherwise (its claim was held ahead) tops the pool up only when fewer than
 * this many remain held ahead: one write then serves `HOLD_AHEAD_LIMIT - HOLD_AHEAD_LOW_WATER` claims or more.
 */
export const HOLD_AHEAD_LOW_WATER = 32;
/**
 * A hold made ahead and answered this long ago whose claim has not come for it (paused meanwhile, its reconcile
 * failing) no longer counts against the pool's bound; the entry stays the claim's.
 */
export const HOLD_AHEAD_FORGET_MS = 30_000;
/**
 * How long a pool is not held ahead for once another writer is seen serving its claims (a surplus holding given back):
 * with two active replicas both would hold ahead for the same waiting claims, and every claim would cost a surplus
 * entry and its release — more ledger writes than holding ahead saves.
 */
export const HOLD_AHEAD_BACKOFF_MS = 30_000;

interface Pending {
  readonly claimKey: string;
  readonly pool: string;
  /** Settles (never rejects) once the API server answered the hold. */
  readonly settled: Promise<void>;
  /** `performance.now()` at the answer; undefined while in flight. */
  answeredAt: number | undefined;
}

/**
 * The holds this process made ahead for claims not yet reconciled, by claim uid: bounded per pool, forgotten when the
 * claim is served, refused, deleted or no longer waiting.
 */
export class HoldAhead {
  private readonly pending = new Map<string, Pending>();
  /** Claims (by uid) whose reconcile is running in this process: they choose for themselves. */
  private readonly reconciling = new Map<string, number>();
  /** Pools (by key) not held ahead for until this `performance.now()`. */
  private readonly backedOff = new Map<string, number>();

  /**
   * @param serves whether this process serves a claim at all (Tally pool, watch filter): a claim another provider
   *   instance serves is never held for.
   */
  constructor(private readonly serves: (claim: StoredClaim) => boolean) {}

  /**
   * Runs a claim's reconcile with the claim marked as being reconciled: no hold is made ahead for it meanwhile, since
   * its reconcile may be choosing an address of its own (two holdings for one claim, one of them a surplus).
   */
  async whileReconciling<T>(claimUID: string | undefined, reconcile: () => Promise<T>): Promise<T> {
    if (!claimUID) return reconcile();
    this.reconciling.set(claimUID, (this.reconciling.get(claimUID) ?? 0) + 1);
    try {
      return await reconcile();
    } finally {
      const left = (this.reconciling.get(claimUID) ?? 1) - 1;
      if (left > 0) this.reconciling.set(claimUID, left);
      else this.reconciling.delete(claimUID);
    }
  }

  /**
   * The answer of a hold made ahead for this claim, if one is in flight: wait for it before choosing anew. Not a read of
   * the overlay of own writes (`deps.assumed.holdings`): the write is not answered yet, so there is nothing acknowledged
   * to read, and choosing meanwhile would give the claim a second address; once answered, the holding is assumed in the
   * overlay and the claim's reconcile finds it there.
   */
  inFlight(claimUID: string): Promise<void> | undefined {
    return this.pending.get(claimUID)?.settled;
  }

  /** The claim's reconcile has taken over its holding (or has none): it is no longer held ahead. */
  served(claimUID: string): void {
    this.pending.delete(claimUID);
  }

  /**
   * Another writer serves claims of the pool (a claim had two holdings, one given back as a surplus): no holding ahead
   * for the pool during `HOLD_AHEAD_BACKOFF_MS`, and what is held ahead is no longer counted.
   */
  contended(ref: PoolRef): void {
    const key = poolKey(ref);
    this.backedOff.set(key, performance.now() + HOLD_AHEAD_BACKOFF_MS);
    for (const [uid, entry] of this.pending)
      if (entry.pool === key && entry.answeredAt !== undefined) this.pending.delete(uid);
  }

  /** Claims of the pool held ahead and still waiting for their reconcile. */
  heldAheadFor(ref: PoolRef): number {
    const key = poolKey(ref);
    let count = 0;
    for (const entry of this.pending.values()) if (entry.pool === key) count += 1;
    return count;
  }

  /**
   * Holds addresses for waiting claims of the pool, up to `HOLD_AHEAD_LIMIT` per pool: synchronously submitted, so they
   * share the ledger write of the hold the caller makes in the same turn. `onlyBelowLowWater`: do nothing unless fewer
   * than `HOLD_AHEAD_LOW_WATER` are held ahead (the caller writes no ledger itself).
   */
  topUp(
    deps: HoldAheadDeps,
    current: StoredClaim,
    ref: PoolRef,
    state: PoolState,
    signal: AbortSignal,
    onlyBelowLowWater: boolean,
  ): void {
    const until = this.backedOff.get(poolKey(ref));
    if (until !== undefined) {
      if (performance.now() < until) return;
      this.backedOff.delete(poolKey(ref));
    }
    this.prune(deps, ref);
    const held = this.heldAheadFor(ref);
    if (onlyBelowLowWater && held >= HOLD_AHEAD_LOW_WATER) return;
    let room = HOLD_AHEAD_LIMIT - held;
    if (room <= 0) return;
    for (const claim of deps.claims.store.byIndex(POOL_INDEX, poolKey(ref))) {
      if (room <= 0) return;
      if (claim.metadata.uid === current.metadata.uid || !this.waiting(deps, claim, state)) continue;
      let unit: AllocationUnit;
      try {
        unit = state.allocation.allocate();
      } catch {
        return; // exhausted (or only addresses in their grace period left): the claims' own reconciles report it
      }
      const holder = holderOf(claim);
      state.assume(unit, holder.uid);
      const settled = deps.holds.acquire(unit, ref, holder, state.allocation.reuseGracePeriodMs, signal).then(
        (result) => {
          pending.answeredAt = performance.now();
          if (result.acquired) {
            deps.assumed.holdings.assume(result.holding);
            return;
          }
          this.pending.delete(holder.uid);
          deps.states.settleAssumed(state, unit);
          if (!samePool(poolRefOfHolding(result.holder), ref)) state.markForeign(unit);
        },
        () => {
          // No answer: as in acquireUnit, free the address unless the entry turns out to exist (its event marks it).
          this.pending.delete(holder.uid);
          state.forgetAssumed(unit.entryKey);
          if (!deps.assumed.holdings.get(unit.entryKey)) state.release(unit, deps.now());
        },
      );
      const pending: Pending = {
        claimKey: `${claim.metadata.namespace}/${claim.metadata.name}`,
        pool: poolKey(ref),
        settled,
        answeredAt: undefined,
      };
      this.pending.set(holder.uid, pending);
      room -= 1;
    }
  }

  /**
   * A claim its own reconcile would allocate from the pool's strategy right now, and that has nothing yet: served by
   * this process, not being deleted, not paused (its Cluster known), no IPAddress or address reference, no requested
   * address, no reservation, no holding for its uid (ledger entry or one in flight).
   */
  private waiting(deps: HoldAheadDeps, claim: StoredClaim, state: PoolState): boolean {
    const uid = claim.metadata.uid;
    if (!uid || this.pending.has(uid) || this.reconciling.has(uid) || !this.serves(claim)) return false;
    if (claim.metadata.deletionTimestamp !== undefined || claim.status?.addressRef?.name) return false;
    // A claim Tally has seen before (finalizer on) may have an IPAddress the cache does not show yet: its own reconcile
    // looks; holding ahead is for claims that have never been reconciled.
    const key = `${claim.metadata.namespace}/${claim.metadata.name}`;
    // This process's own finalizer patch counts too, before the informer shows it.
    const finalizer = finalizersOf(state.ref.kind).claim;
    if (hasFinalizer(claim, finalizer) || hasFinalizer(deps.assumed.claims.get(key) ?? claim, finalizer)) {
      return false;
    }
    if (claim.metadata.annotations?.[REQUESTED_ADDRESS_ANNOTATION] !== undefined) return false;
    if (state.allocation.reservations.has(claim.metadata.name)) return false;
    if (deps.assumed.addresses.get(key)) return false;
    // A holding this process wrote for the claim that its informer does not show yet.
    if (deps.assumed.holdings.pending().some((holding) => holding.spec.claimRef.uid === uid)) return false;
    const clusterName = clusterNameOf(claim);
    const clusterOf = (namespace: string, name: string): StoredCluster | undefined =>
      deps.clusters.store.get(`${namespace}/${name}`);
    if (clusterName && !clusterOf(claim.metadata.namespace ?? '', clusterName)) return false;
    if (pauseReason(claim, clusterName, clusterOf) !== undefined) return false;
    return !deps.holdings.store
      .byIndex(HOLDING_CLAIM_UID_INDEX, uid)
      .some((holding) => holding.spec.releasedAt === undefined && holding.spec.claimRef.uid === uid);
  }

  /**
   * Forgets claims of the pool that are gone or no longer wait (served by another replica, deleted, re-created), or
   * that have not come for their holding within `HOLD_AHEAD_FORGET_MS`.
   */
  private prune(deps: HoldAheadDeps, ref: PoolRef): void {
    const key = poolKey(ref);
    const now = performance.now();
    for (const [uid, entry] of this.pending) {
      if (entry.pool !== key) continue;
      const claim = deps.claims.store.get(entry.claimKey);
      if (
        (entry.answeredAt !== undefined && now - entry.answeredAt > HOLD_AHEAD_FORGET_MS) ||
        !claim ||
        claim.metadata.uid !== uid ||
        claim.metadata.deletionTimestamp !== undefined ||
        claim.status?.addressRef?.name
      ) {
        this.pending.delete(uid);
      }
    }
  }
}
