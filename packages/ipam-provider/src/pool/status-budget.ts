/**
 * Counts-only pool status writes of every pool of a process share one budget: at most `perSecond` of them, each pool
 * getting a slot of its own. With one pool busy nothing changes (its own interval, `POOL_STATUS_COALESCE_MS`, is the
 * tighter bound); with twenty pools allocating at once each pool's counts are written every twenty slots instead of
 * twenty writes every interval — the measured many-pools burst made 0.13 pool status writes per claim before.
 * A status that changes more than its counts (a condition, a generation) is written at once and takes no slot.
 */

/** Counts-only pool status writes per second, all pools of the process together. */
export const POOL_STATUS_WRITES_PER_SECOND = 2;

export class PoolStatusBudget {
  private readonly intervalMs: number;
  /** When the next unbooked slot starts (monotonic ms). */
  private nextSlotAt = Number.NEGATIVE_INFINITY;
  /** Pool key → the slot booked for its deferred write. */
  private readonly booked = new Map<string, number>();

  constructor(perSecond: number = POOL_STATUS_WRITES_PER_SECOND) {
    if (!(Number.isFinite(perSecond) && perSecond > 0)) {
      throw new Error(`pool status writes per second must be a positive number, got ${perSecond}`);
    }
    this.intervalMs = 1_000 / perSecond;
  }

  /**
   * How long the pool's counts-only write must wait, in ms: 0 means write now (the slot is taken). Otherwise a slot is
   * booked for the pool (once: asking again before it returns the same slot), and the caller re-queues for it.
   */
  take(poolKey: string, now: number): number {
    const booked = this.booked.get(poolKey);
    if (booked !== undefined) {
      if (booked > now) return booked - now;
      this.booked.delete(poolKey);
      return 0;
    }
    if (this.nextSlotAt <= now) {
      this.nextSlotAt = now + this.intervalMs;
      return 0;
    }
    const slot = this.nextSlotAt;
    this.nextSlotAt = slot + this.intervalMs;
    this.booked.set(poolKey, slot);
    return slot - now;
  }

  /** The pool is gone, or wrote its status for another reason: its booked slot, if any, is not needed. */
  forget(poolKey: string): void {
    this.booked.delete(poolKey);
  }
}
