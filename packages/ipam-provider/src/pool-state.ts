import type { AllocationUnit, PoolAllocation } from './pool-allocation.js';
import { type PoolRef, poolKey } from './pool-ref.js';

/**
 * The allocation state of one pool, kept in memory like kube-scheduler's "assume" cache: an allocation is marked
 * used the moment it is chosen (so concurrent reconciles of this process never pick the same address) and is
 * confirmed by the API server when the ledger entry is written. The state is only an optimisation — the holding is
 * what makes an address unique — so a stale state costs a retry (409 → next candidate), never a duplicate.
 *
 * `assume` here is not the process's read-your-own-writes overlay (`AssumedWrites`, controller-kit's `AssumedObjects`)
 * and does not go into it: it is a reservation taken before the ledger write, in the same turn as the choice, while
 * the overlay holds only what the API server has acknowledged and so is never ahead of the truth. Left to the overlay,
 * every reconcile of a burst that chooses while the first hold is in flight would choose the same lowest address, and
 * all but one would be refused (metal3-ipam, which has no pool state, shows that cost: its refused holds are bounded
 * by the reconciles in flight, not zero). Once the hold is answered, the holding is assumed in the overlay and the
 * reservation is settled (`PoolStates.settleAssumed`).
 */
export class PoolState {
  readonly key: string;
  /** Addresses chosen by a reconcile whose holding may not be in the cache yet, by holding name. */
  private readonly assumed = new Map<string, { readonly unit: AllocationUnit; readonly claimUID: string }>();
  /**
   * Assumed addresses whose holding or IPAddress was deleted while they were assumed: the deletion could not free them
   * then (the reconcile was still deciding), so settling the assumption must (see `PoolStates.settleAssumed`).
   */
  private readonly goneWhileAssumed = new Set<string>();
  /** Addresses this pool's spec allows but another pool holds (overlapping ranges). */
  private readonly foreign = new Set<string>();
  /** Static reservations: held for their claim, never handed to another, never freed by a release. */
  private readonly reserved = new Set<string>();

  constructor(
    readonly ref: PoolRef,
    readonly uid: string | undefined,
    readonly generation: number | undefined,
    readonly allocation: PoolAllocation,
  ) {
    this.key = poolKey(ref);
  }

  /** Holds the reservation addresses back from the strategy: only the named claim may have them. */
  holdReservations(): void {
    for (const address of this.allocation.reservations.values()) {
      const unit = this.allocation.unitOf(address, 0);
      if (!unit) continue;
      this.allocation.markAllocated(unit);
      this.reserved.add(unit.entryKey);
    }
  }

  isReserved(entryKey: string): boolean {
    return this.reserved.has(entryKey);
  }

  /** Frees an address of this pool unless it is a reservation (which stays held for its claim). */
  release(unit: AllocationUnit, atMs: number): boolean {
    if (this.reserved.has(unit.entryKey)) return false;
    return this.allocation.release(unit, atMs);
  }

  /** Records that a reconcile took `unit` for a claim (the allocator already marked it used). */
  assume(unit: AllocationUnit, claimUID: string): void {
    this.allocation.markAllocated(unit);
    this.assumed.set(unit.entryKey, { unit, claimUID });
  }

  /** Takes over the assumptions (and deletions seen during them) of the state this one replaces. */
  adoptAssumptions(previous: PoolState): void {
    for (const { unit, claimUID } of previous.assumed.values()) {
      if (!this.allocation.covers(unit)) continue;
      this.assume(unit, claimUID);
      if (previous.goneWhileAssumed.has(unit.entryKey)) this.goneWhileAssumed.add(unit.entryKey);
    }
  }

  isAssumed(entryKey: string): boolean {
    return this.assumed.has(entryKey);
  }

  /**
   * The holding is now visible in the cache (or the attempt failed): the holding itself speaks for the address. True when a
   * holding or IPAddress of this address was deleted while it was assumed (the caller must then decide whether to free it).
   */
  forgetAssumed(entryKey: string): boolean {
    this.assumed.delete(entryKey);
    return this.goneWhileAssumed.delete(entryKey);
  }

  /** A holding or IPAddress of an assumed address was deleted: remembered for when the assumption is settled. */
  noteGoneWhileAssumed(entryKey: string): void {
    if (this.assumed.has(entryKey)) this.goneWhileAssumed.add(entryKey);
  }

  /** Another pool holds the holding of an address this pool could hand out. */
  markForeign(unit: AllocationUnit): void {
    if (this.foreign.has(unit.entryKey)) return;
    this.allocation.markAllocated(unit);
    this.foreign.add(unit.entryKey);
  }

  /** Frees an address held by another pool's holding; true if it was one. */
  releaseForeign(unit: AllocationUnit, atMs: number): boolean {
    if (!this.foreign.delete(unit.entryKey)) return false;
    this.allocation.release(unit, atMs);
    return true;
  }

  /** Counts as the pool status reports them: addresses held by other pools are neither used by this pool nor free. */
  counts(): { total: bigint; used: bigint; free: bigint; outOfRange: bigint } {
    const counts = this.allocation.counts();
    const foreign = BigInt(this.foreign.size);
    return { ...counts, used: counts.used - foreign };
  }
}
