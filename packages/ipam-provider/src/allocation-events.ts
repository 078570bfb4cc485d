import { type PoolRef, poolKey } from './pool-ref.js';

export interface AllocationEventsOptions {
  /** AddressAllocated Events on claims recorded at once before the rate applies. */
  readonly burst: number;
  /** AddressAllocated Events on claims per second once the burst is spent. */
  readonly perSecond: number;
  /** At most one summary Event per pool in this interval. */
  readonly summaryIntervalMs: number;
  readonly now: () => number;
  /**
   * Called when an allocation of the pool was counted for a summary that counted none yet (the provider re-queues the
   * pool with it, and that reconcile records the summary or re-queues itself until it is due).
   */
  readonly onUnrecorded?: ((ref: PoolRef) => void) | undefined;
}

/**
 * client-go's event spam filter lets 25 events through at once per source, then one per 5 minutes per object; here 10
 * at once, then one every 10 s per process: a burst of thousands of claims must stay within a few hundredths of a write
 * per claim, and each claim's Ready condition already names its address.
 */
export const DEFAULT_ALLOCATION_EVENTS: Omit<AllocationEventsOptions, 'now' | 'onUnrecorded'> = {
  burst: 10,
  perSecond: 0.1,
  summaryIntervalMs: 30_000,
};

/**
 * The Events policy for routine allocations, in the spirit of client-go's EventCorrelator: an `AddressAllocated` Event
 * on a claim is a courtesy (the claim's `Ready` condition already names the address and the pool), and one Event per
 * claim in a burst of thousands would be the provider's largest API cost after the allocation writes themselves. So
 * the AddressAllocated Events of one process share a token bucket (`burst`, then `perSecond`); allocations past it
 * are counted per pool and summed up in one `AddressesAllocated` Event on the pool at most every `summaryIntervalMs`.
 * Everything that needs a person's attention — PoolExhausted, AllocationFailed, DuplicateAddress, AddressRecreated
 * — is always recorded on the claim.
 */
export class AllocationEvents {
  private tokens: number;
  private refilledAt: number;
  /** Pool key → allocations whose claim Event was not recorded and that no summary has counted yet. */
  private readonly unrecorded = new Map<string, number>();
  /** Pool key → when the last summary was recorded. */
  private readonly summarizedAt = new Map<string, number>();

  constructor(private readonly options: AllocationEventsOptions) {
    if (!(options.burst >= 1) || !(options.perSecond > 0)) {
      throw new Error(
        `allocation events need burst >= 1 and perSecond > 0, got burst ${options.burst}, perSecond ${options.perSecond}`,
      );
    }
    this.tokens = options.burst;
    this.refilledAt = options.now();
  }

  /** True when this allocation's Event may be recorded on the claim; otherwise it is counted for the pool summary. */
  recordOnClaim(ref: PoolRef): boolean {
    const now = this.options.now();
    this.tokens = Math.min(
      this.options.burst,
      this.tokens + (Math.max(0, now - this.refilledAt) / 1000) * this.options.perSecond,
    );
    this.refilledAt = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    const key = poolKey(ref);
    const earlier = this.unrecorded.get(key) ?? 0;
    this.unrecorded.set(key, earlier + 1);
    // Only the first allocation a summary will count: the pool reconcile that sees it records the summary or
    // re-queues itself until it is due, and that summary counts the later ones too.
    if (earlier === 0) this.options.onUnrecorded?.(ref);
    return false;
  }

  /**
   * The summary due for a pool: `count` allocations to report now (then counted as reported), or 0 with `dueInMs`
   * when one is pending but the interval since the last summary has not passed (undefined when none is pending).
   */
  takeSummary(ref: PoolRef): { readonly count: number; readonly dueInMs?: number | undefined } {
    const key = poolKey(ref);
    const count = this.unrecorded.get(key) ?? 0;
    if (count === 0) return { count: 0 };
    const now = this.options.now();
    const last = this.summarizedAt.get(key);
    if (last !== undefined && now - last < this.options.summaryIntervalMs) {
      return { count: 0, dueInMs: last + this.options.summaryIntervalMs - now };
    }
    this.unrecorded.delete(key);
    this.summarizedAt.set(key, now);
    return { count };
  }

  /** Forgets a pool that is gone. */
  forget(ref: PoolRef): void {
    this.unrecorded.delete(poolKey(ref));
    this.summarizedAt.delete(poolKey(ref));
  }
}
