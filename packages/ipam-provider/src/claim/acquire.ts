/**
 * Step 2: make the chosen address the claim's in a way the API server decides — the ledger write — resuming a holding a
 * crashed reconcile took, holding the holding of an IPAddress that exists without one (clusterctl move), and giving back
 * holdings a lost race left to the claim.
 */
import { IPADDRESSCLAIM_ALLOCATION_FAILED_REASON } from '@tally-ipam/api-types';
import type { ReconcileContext, Result } from '@tally-ipam/controller-kit';
import { type Holding, unreadableLedgerMessage } from '@tally-ipam/ledger';
import {
  EVENT_DUPLICATE_ADDRESS,
  MAX_HOLD_ATTEMPTS,
  POOL_EXHAUSTED_RECHECK_MS,
  UNREADABLE_LEDGER_RECHECK_MS,
} from '../constants.js';
import { type AcquireResult, holderOf } from '../holds.js';
import { HOLDING_CLAIM_UID_INDEX } from '../indexes.js';
import type { AllocationUnit } from '../pool-allocation.js';
import { type PoolRef, poolRefOfHolding, samePool } from '../pool-ref.js';
import type { PoolState } from '../pool-state.js';
import type { StoredAddress, StoredClaim } from '../resources.js';
import { chooseAddress, eventNote } from './choose.js';
import type { ClaimReconcilerDeps } from './deps.js';
import { type ExistingEntry, holdExistingAddress } from './existing-address.js';
import { finishClaim, liveAddress } from './materialise.js';
import { notReady } from './status.js';

/**
 * A claim with an IPAddress needs exactly one holding: that address's. Any other holding held for its uid was taken by a
 * reconcile that lost a race (another replica created the IPAddress first) or whose answer was lost (the API server
 * went away mid-request), and could not give it back; no IPAddress can ever be created with it (the claim's
 * IPAddress name is taken), so it is deleted — otherwise it would hold an address of the pool for as long as the
 * claim lives.
 */
/**
 * The result for a claim left waiting for an address: looked at again after the recheck interval (plus up to 20 %, so
 * that claims which began waiting together do not come back together), unless finishing it asked for a requeue already.
 */
export function whileWaiting(result: Result): Result {
  if (result.requeue || result.requeueAfterMs !== undefined) return result;
  return { requeueAfterMs: POOL_EXHAUSTED_RECHECK_MS * (1 + Math.random() / 5) };
}

export async function releaseSurplusHoldings(
  deps: ClaimReconcilerDeps,
  claim: StoredClaim,
  keptEntryKey: string,
  context: ReconcileContext,
): Promise<void> {
  const uid = claim.metadata.uid ?? '';
  const surplus = new Map<string, Holding>();
  for (const holding of [
    ...deps.holdings.store.byIndex(HOLDING_CLAIM_UID_INDEX, uid),
    ...deps.assumed.holdings.pending(),
  ]) {
    const current = deps.assumed.holdings.get(holding.metadata.name) ?? holding;
    if (current.metadata.name === keptEntryKey || current.spec.claimRef.uid !== uid) continue;
    if (current.spec.releasedAt !== undefined) continue;
    surplus.set(current.metadata.name, current);
  }
  for (const holding of surplus.values()) {
    const ref = poolRefOfHolding(holding);
    if (ref) deps.holdAhead?.contended(ref);
    await deps.holds.release(holding, false, new Date(deps.now()), context.signal);
    deps.assumed.holdings.forget(holding.metadata.name);
    context.logger.info({ holding: holding.metadata.name }, 'surplus holding of an allocated claim released');
  }
}

/** What acquiring a unit for a claim ended in. */
export type Acquisition =
  /** The claim holds the holding of `unit` (taken now, or resumed after a crash); `state` may have been rebuilt. */
  | { readonly kind: 'acquired'; readonly unit: AllocationUnit; readonly state: PoolState }
  /** Another replica gave the claim an IPAddress meanwhile: adopt it. */
  | { readonly kind: 'adopt'; readonly existing: StoredAddress; readonly state: PoolState }
  /** Nothing to allocate now (exhausted, requested address held, every candidate lost): the reconcile's result. */
  | { readonly kind: 'done'; readonly result: Result };

export interface AcquireOptions {
  /** This reconcile has just added the claim's finalizer: the API server showed it alive, not being deleted. */
  readonly claimJustConfirmed?: boolean | undefined;
}

/**
 * Takes the holding of an address for a claim that has no IPAddress: resumes the holding a crashed reconcile already took
 * for it, else chooses candidates (see `chooseAddress`) and holds them until one is won. The ledger write is
 * the step the API server decides: of all claims, pools and replicas racing for an address exactly one wins.
 */
export async function acquireUnit(
  deps: ClaimReconcilerDeps,
  claim: StoredClaim,
  ref: PoolRef,
  initialState: PoolState,
  context: ReconcileContext,
  options: AcquireOptions = {},
): Promise<Acquisition> {
  let state = initialState;
  let rebuilt = false;
  const claimKey = `${claim.metadata.namespace}/${claim.metadata.name}`;
  const holder = holderOf(claim);
  // A hold made ahead for this claim by another reconcile of this process and not answered yet: its answer first, so
  // the claim does not get a second address in a second write.
  await deps.holdAhead?.inFlight(holder.uid);
  deps.holdAhead?.served(holder.uid);
  // A holding already held for this claim (the reconcile that took it crashed before the IPAddress, or its IPAddress
  // create failed): reuse it. Holdings this process created are looked at too, before the informer shows them.
  const held = [...deps.holdings.store.byIndex(HOLDING_CLAIM_UID_INDEX, holder.uid), ...deps.assumed.holdings.pending()]
    .map((holding) => deps.assumed.holdings.get(holding.metadata.name) ?? holding)
    .find(
      (holding) =>
        holding.spec.claimRef.uid === holder.uid &&
        holding.spec.releasedAt === undefined &&
        samePool(poolRefOfHolding(holding), ref),
    );
  const resumed = held ? state.allocation.unitOf(held.spec.address, held.spec.prefix ?? 0) : undefined;
  if (held && resumed) {
    deps.holdAhead?.topUp(deps, claim, ref, state, context.signal, true);
    // A claim whose finalizer this reconcile has just added was alive, not being deleted, at that write: nothing can
    // have released its holding since but its own deletion (after this reconcile), a garbage collector that finds it
    // gone (it is not), or a replica that gave it an IPAddress (then the IPAddress create answers AlreadyExists). So
    // a holding this process saw is resumed as it is, as safe as the hold write of a first allocation.
    if (options.claimJustConfirmed && held.spec.releasedAt === undefined)
      return { kind: 'acquired', unit: resumed, state };
    // Otherwise the cache may be behind a release by another replica: only a holding that still exists live is resumed.
    const live = await deps.holds.live(held.metadata.name, context.signal);
    if (!live || live.spec.claimRef.uid !== holder.uid || live.spec.releasedAt !== undefined) {
      deps.assumed.holdings.forget(held.metadata.name);
      return { kind: 'done', result: { requeue: true } };
    }
    return { kind: 'acquired', unit: resumed, state };
  }

  for (let attempt = 0; ; attempt += 1) {
    if (attempt >= MAX_HOLD_ATTEMPTS) {
      deps.metrics.allocations.inc({ kind: ref.kind, result: 'conflict' });
      context.logger.info({ attempts: attempt }, 'every candidate address was held elsewhere, retrying');
      return { kind: 'done', result: { requeue: true } };
    }
    const choice = chooseAddress(deps, claim, ref, state);
    if (!choice.ok) {
      // Before telling the claim there is no address for it, make sure another replica did not give it one.
      const live = await liveAddress(deps, claim, context);
      if (live) return { kind: 'adopt', existing: live, state };
      // The in-memory state may have drifted (events missed across a relist): check it against the stores once.
      const fresh = rebuilt ? undefined : deps.states.rebuildFromCaches(ref, state);
      rebuilt = true;
      if (fresh) {
        state = fresh;
        continue;
      }
      deps.states.addWaiting(ref, claimKey);
      const result = await finishClaim(deps, claim, choice.outcome, context);
      if (choice.retryAfterMs !== undefined) return { kind: 'done', result: { requeueAfterMs: choice.retryAfterMs } };
      return { kind: 'done', result: whileWaiting(result) };
    }
    state.assume(choice.unit, holder.uid);
    // Submitted in this same turn as the claim's own hold below, so they share its ledger write.
    deps.holdAhead?.topUp(deps, claim, ref, state, context.signal, false);
    let acquired: AcquireResult;
    try {
      acquired = await deps.holds.acquire(
        choice.unit,
        ref,
        holder,
        state.allocation.reuseGracePeriodMs,
        context.signal,
      );
    } catch (error) {
      // No answer (the API server went away): the holding may or may not exist. Freeing the address here is safe — if
      // the holding exists, its event marks the address used again, and a create for another claim fails with 409 —
      // while keeping it assumed would hold it in this process's memory for good.
      state.forgetAssumed(choice.unit.entryKey);
      if (!deps.assumed.holdings.get(choice.unit.entryKey)) state.release(choice.unit, deps.now());
      // A ledger a person wrote wrong: the claim says why it waits, instead of only the log.
      const unreadable = unreadableLedgerMessage(error);
      if (unreadable === undefined) throw error;
      context.logger.error({ err: error }, 'the ledger of the chosen address cannot be read');
      const result = await finishClaim(
        deps,
        claim,
        notReady(IPADDRESSCLAIM_ALLOCATION_FAILED_REASON, unreadable),
        context,
      );
      return {
        kind: 'done',
        result:
          result.requeue || result.requeueAfterMs !== undefined
            ? result
            : { requeueAfterMs: UNREADABLE_LEDGER_RECHECK_MS },
      };
    }
    if (acquired.acquired) {
      deps.assumed.holdings.assume(acquired.holding);
      return { kind: 'acquired', unit: choice.unit, state };
    }
    // Someone else holds it (another replica, an overlapping pool): it stays marked used here; next candidate.
    deps.states.settleAssumed(state, choice.unit);
    if (!samePool(poolRefOfHolding(acquired.holder), ref)) state.markForeign(choice.unit);
    deps.metrics.allocations.inc({ kind: ref.kind, result: 'conflict' });
    if (choice.specific !== undefined) {
      const by = acquired.holder.spec.claimRef;
      const result = await finishClaim(
        deps,
        claim,
        notReady(
          IPADDRESSCLAIM_ALLOCATION_FAILED_REASON,
          `${choice.specific} cannot be allocated: it is held by IPAddressClaim ${by.namespace}/${by.name} ` +
            `(ledger entry ${acquired.holder.metadata.name}); release it there or ask for another address`,
        ),
        context,
      );
      return { kind: 'done', result };
    }
  }
}

/**
 * An IPAddress of the claim exists (written by this or another replica, or moved here by clusterctl without any holding):
 * its address's holding must be the claim's. Taken if nobody holds it; held by another claim, the duplicate is reported on
 * the claim (Event and status) and the result returned — undefined when the claim holds the holding. `entry` is what
 * `examineExistingAddress` found in this process's copy of the ledger.
 */
export async function holdEntryOfExisting(
  deps: ClaimReconcilerDeps,
  claim: StoredClaim,
  ref: PoolRef,
  state: PoolState,
  existing: StoredAddress,
  unit: AllocationUnit,
  entry: ExistingEntry,
  context: ReconcileContext,
): Promise<Result | undefined> {
  if (entry === 'claim') return undefined;
  const acquired = await holdExistingAddress(deps, claim, ref, state, unit, context.signal);
  if (acquired.acquired) return undefined;
  const by = acquired.holder.spec.claimRef;
  const message =
    `duplicate address: ${existing.spec.address} of IPAddress ${existing.metadata.namespace}/${existing.metadata.name} ` +
    `is also held by IPAddressClaim ${by.namespace}/${by.name} (ledger entry ${acquired.holder.metadata.name}); ` +
    'delete one of the two claims so that each address has one owner';
  void deps.recorder.warning(claim, EVENT_DUPLICATE_ADDRESS, 'Allocate', eventNote(message));
  return finishClaim(deps, claim, notReady(IPADDRESSCLAIM_ALLOCATION_FAILED_REASON, message), context);
}
