import type { SharedInformer } from '@tally-ipam/controller-kit';
import type { Holding } from '@tally-ipam/ledger';
import type { Logger } from 'pino';
import { POOL_STATE_REBUILD_INTERVAL_MS } from './constants.js';
import { POOL_ADDRESS_INDEX, POOL_INDEX, poolAddressKey } from './indexes.js';
import { type AllocationUnit, buildPoolAllocation } from './pool-allocation.js';
import { type PoolRef, poolKey, poolRefOfAddress, poolRefOfHolding } from './pool-ref.js';
import { PoolState } from './pool-state.js';
import type { HoldingSource, StoredAddress, StoredPool } from './resources.js';

export type PoolStateLookup =
  | { readonly status: 'ready'; readonly state: PoolState }
  | { readonly status: 'invalid'; readonly message: string };

export interface PoolStatesOptions {
  readonly pools: (ref: PoolRef) => StoredPool | undefined;
  readonly addresses: SharedInformer<StoredAddress>;
  readonly holdings: HoldingSource;
  readonly clock: () => number;
  readonly logger: Logger;
  /** Called when addresses of a pool became free, so claims waiting on it can be re-queued. */
  readonly onSpaceFreed: (poolKey: string, waitingClaims: readonly string[]) => void;
}

function releasedAtMs(holding: Holding): number | undefined {
  return holding.spec.releasedAt === undefined ? undefined : Date.parse(holding.spec.releasedAt);
}

/**
 * Every pool's state, built on first use from the pool spec, the pool's IPAddresses and its holdings (never from a
 * status), rebuilt when the pool's generation changes, and kept current otherwise from IPAddress and holding events.
 */
export class PoolStates {
  private readonly states = new Map<string, PoolState>();
  private readonly waiting = new Map<string, Set<string>>();
  private readonly rebuiltAt = new Map<string, number>();

  constructor(private readonly options: PoolStatesOptions) {
    options.addresses.addEventHandler({
      onAdd: (address) => this.addressSeen(address),
      onUpdate: (_, address) => this.addressSeen(address),
      onDelete: (address) => this.addressGone(address),
    });
    options.holdings.addEventHandler({
      onAdd: (holding) => this.holdingSeen(holding),
      onUpdate: (_, holding) => this.holdingSeen(holding),
      onDelete: (holding) => this.holdingGone(holding),
    });
  }

  /** The state of a pool, (re)built as needed; undefined when the pool does not exist. */
  lookup(ref: PoolRef): PoolStateLookup | undefined {
    const key = poolKey(ref);
    const pool = this.options.pools(ref);
    if (!pool) {
      this.states.delete(key);
      return undefined;
    }
    const existing = this.states.get(key);
    if (existing && existing.uid === pool.metadata.uid && existing.generation === pool.metadata.generation) {
      return { status: 'ready', state: existing };
    }
    const built = this.build(ref, pool);
    if (built.status === 'ready') this.states.set(key, built.state);
    else this.states.delete(key);
    return built;
  }

  /**
   * Rebuilds a pool's state from the informers' stores and returns it — when `current` says the pool has nothing left
   * for a claim — at most once per `POOL_STATE_REBUILD_INTERVAL_MS` per pool (undefined otherwise). The state follows
   * holding and IPAddress events, and an entry written and dropped while a watch was down (a kube-apiserver restart) sends
   * none, so an address can stay used in memory with nothing holding it; the stores, relisted, are exact. In-flight
   * assumptions carry over. When the rebuild frees addresses, the claims waiting on the pool are woken.
   */
  rebuildFromCaches(ref: PoolRef, current: PoolState): PoolState | undefined {
    const key = poolKey(ref);
    const latest = this.states.get(key);
    if (latest !== undefined && latest !== current) return latest;
    const now = this.options.clock();
    const last = this.rebuiltAt.get(key);
    if (last !== undefined && now - last < POOL_STATE_REBUILD_INTERVAL_MS) return undefined;
    const pool = this.options.pools(ref);
    if (!pool) return undefined;
    this.rebuiltAt.set(key, now);
    const built = this.build(ref, pool);
    if (built.status !== 'ready') return undefined;
    built.state.adoptAssumptions(current);
    this.states.set(key, built.state);
    const freed = built.state.counts().free - current.counts().free;
    if (freed > 0n) {
      this.options.logger.info(
        { pool: key, freed: String(freed) },
        'pool state rebuilt from the caches freed addresses nothing holds (events missed across a relist)',
      );
      this.notifyFreed(key);
    }
    return built.state;
  }

  /** States built so far (for metrics and the read-only view). */
  builtStates(): PoolState[] {
    return [...this.states.values()];
  }

  /** Drops a pool's state (the pool is gone); its waiting claims are forgotten with it. */
  forget(ref: PoolRef): void {
    this.states.delete(poolKey(ref));
    this.waiting.delete(poolKey(ref));
  }

  addWaiting(ref: PoolRef, claimKey: string): void {
    const key = poolKey(ref);
    let set = this.waiting.get(key);
    if (!set) {
      set = new Set();
      this.waiting.set(key, set);
    }
    set.add(claimKey);
  }

  removeWaiting(ref: PoolRef, claimKey: string): void {
    this.waiting.get(poolKey(ref))?.delete(claimKey);
  }

  private build(ref: PoolRef, pool: StoredPool): PoolStateLookup {
    const built = buildPoolAllocation(ref.kind, pool, this.options.clock);
    if (!built.ok) return { status: 'invalid', message: built.message };
    const allocation = built.allocation;
    const state = new PoolState(ref, pool.metadata.uid, pool.metadata.generation, allocation);
    state.holdReservations();
    const key = state.key;
    for (const address of this.options.addresses.store.byIndex(POOL_INDEX, key)) {
      const unit = allocation.unitOf(address.spec.address, address.spec.prefix);
      if (unit) allocation.markAllocated(unit);
    }
    for (const holding of this.options.holdings.store.byIndex(POOL_INDEX, key)) {
      const unit = allocation.unitOf(holding.spec.address, holding.spec.prefix ?? 0);
      if (!unit) continue;
      const released = releasedAtMs(holding);
      if (released === undefined) allocation.markAllocated(unit);
      else if (!allocation.isAllocated(unit)) allocation.markReleased(unit, released);
    }
    // Holdings of other pools on addresses this pool could hand out: the pools overlap, and the holding wins.
    for (const holding of this.options.holdings.store.list()) {
      if (holding.spec.releasedAt !== undefined) continue;
      const holdingRef = poolRefOfHolding(holding);
      if (holdingRef && poolKey(holdingRef) === key) continue;
      const unit = allocation.unitOf(holding.spec.address, holding.spec.prefix ?? 0);
      if (unit && unit.entryKey === holding.metadata.name && allocation.covers(unit) && !allocation.isAllocated(unit)) {
        state.markForeign(unit);
      }
    }
    this.options.logger.debug({ pool: key, counts: String(state.counts().used) }, 'pool state built');
    return { status: 'ready', state };
  }

  /**
   * Ends a reconcile's assumption of `unit` without it having taken the address (its ledger write lost, or it gave the
   * holding back). Normally the holding's own events keep the address right; but a deletion seen while the address was
   * assumed was skipped, and nothing else would free the address: free it now unless a holding or IPAddress still holds
   * it, and wake the claims waiting for space. Freeing too eagerly costs at most a 409 (the holding decides), holding on
   * would lose the address until the pool's state is rebuilt.
   */
  settleAssumed(state: PoolState, unit: AllocationUnit): void {
    if (!state.forgetAssumed(unit.entryKey) || this.stillHeld(state, unit)) return;
    state.release(unit, this.options.clock());
    this.notifyFreed(state.key);
  }

  private notifyFreed(key: string): void {
    const waiting = this.waiting.get(key);
    if (!waiting || waiting.size === 0) return;
    this.options.onSpaceFreed(key, [...waiting]);
  }

  private addressSeen(address: StoredAddress): void {
    const ref = poolRefOfAddress(address);
    const state = ref ? this.states.get(poolKey(ref)) : undefined;
    if (!state) return;
    const unit = state.allocation.unitOf(address.spec.address, address.spec.prefix);
    if (unit) state.allocation.markAllocated(unit);
  }

  private addressGone(address: StoredAddress): void {
    const ref = poolRefOfAddress(address);
    const state = ref ? this.states.get(poolKey(ref)) : undefined;
    if (!state) return;
    const unit = state.allocation.unitOf(address.spec.address, address.spec.prefix);
    if (!unit) return;
    if (state.isAssumed(unit.entryKey)) {
      state.noteGoneWhileAssumed(unit.entryKey);
      return;
    }
    if (this.stillHeld(state, unit)) return;
    const holding = this.options.holdings.store.get(unit.entryKey);
    state.release(unit, (holding && releasedAtMs(holding)) ?? this.options.clock());
    this.notifyFreed(state.key);
  }

  /** An address stays allocated while any IPAddress of the pool carries it or a held holding of the pool names it. */
  private stillHeld(state: PoolState, unit: AllocationUnit): boolean {
    if (this.options.addresses.store.byIndex(POOL_ADDRESS_INDEX, poolAddressKey(state.key, unit.address)).length > 0) {
      return true;
    }
    const holding = this.options.holdings.store.get(unit.entryKey);
    if (!holding || holding.spec.releasedAt !== undefined) return false;
    const holdingRef = poolRefOfHolding(holding);
    return holdingRef !== undefined && poolKey(holdingRef) === state.key;
  }

  private holdingSeen(holding: Holding): void {
    const ref = poolRefOfHolding(holding);
    const ownKey = ref ? poolKey(ref) : undefined;
    const released = releasedAtMs(holding);
    for (const state of this.states.values()) {
      const unit = state.allocation.unitOf(holding.spec.address, holding.spec.prefix ?? 0);
      if (!unit || unit.entryKey !== holding.metadata.name) continue;
      if (state.key === ownKey) {
        state.forgetAssumed(unit.entryKey);
        if (released === undefined) {
          state.allocation.markAllocated(unit);
        } else if (!this.stillHeld(state, unit)) {
          if (!state.release(unit, released) && !state.isReserved(unit.entryKey)) {
            state.allocation.markReleased(unit, released);
          }
          this.notifyFreed(state.key);
        }
      } else if (released === undefined) {
        if (state.allocation.covers(unit) && !state.allocation.isAllocated(unit)) state.markForeign(unit);
      } else if (state.releaseForeign(unit, released)) {
        this.notifyFreed(state.key);
      }
    }
  }

  private holdingGone(holding: Holding): void {
    const ref = poolRefOfHolding(holding);
    const ownKey = ref ? poolKey(ref) : undefined;
    const now = this.options.clock();
    for (const state of this.states.values()) {
      const unit = state.allocation.unitOf(holding.spec.address, holding.spec.prefix ?? 0);
      if (!unit || unit.entryKey !== holding.metadata.name) continue;
      if (state.key === ownKey) {
        if (state.isAssumed(unit.entryKey)) {
          state.noteGoneWhileAssumed(unit.entryKey);
          continue;
        }
        if (this.stillHeld(state, unit)) continue;
        state.release(unit, releasedAtMs(holding) ?? now);
        this.notifyFreed(state.key);
      } else if (state.releaseForeign(unit, now)) {
        this.notifyFreed(state.key);
      }
    }
  }
}
