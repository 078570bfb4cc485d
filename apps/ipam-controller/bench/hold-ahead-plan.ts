/**
 * How the `tally-writes` ceiling amortises its ledger writes: the decisions of Tally's holding ahead
 * (`@tally-ipam/ipam-provider`, `claim/hold-ahead.ts`), without its cache, pool state or back-off (one raw writer, no
 * other replica to back off from). A worker serving a claim:
 * - whose address was not held ahead holds its own address and, in the same ledger write, addresses for waiting
 *   claims of the pool until `limit` are held ahead;
 * - whose address was held ahead writes no ledger, unless fewer than `lowWater` remain held ahead: then it tops the
 *   pool up to `limit` in one write.
 * Pure, so the amortisation can be tested without a control plane.
 */

export interface HoldAheadLimits {
  /** Claims of one pool held ahead and not yet served, at most (Tally's `HOLD_AHEAD_LIMIT`). */
  readonly limit: number;
  /** A served claim that was held ahead tops up only below this many (Tally's `HOLD_AHEAD_LOW_WATER`). */
  readonly lowWater: number;
}

export interface HoldDecision {
  /** The claim's address was held ahead by an earlier write: wait for that hold, hold nothing for it. */
  readonly wasHeldAhead: boolean;
  /** Claims to hold in this worker's one ledger write, the served claim first when it holds for itself; empty: none. */
  readonly hold: readonly string[];
}

/** The claims of each pool held ahead and not yet served, and what each served claim holds. */
export class HoldAheadPlan {
  private readonly aheadByPool = new Map<string, Set<string>>();

  constructor(private readonly limits: HoldAheadLimits) {
    if (!Number.isInteger(limits.limit) || limits.limit < 1) {
      throw new Error(`hold-ahead limit must be a positive integer, got ${limits.limit}`);
    }
    if (!Number.isInteger(limits.lowWater) || limits.lowWater < 0 || limits.lowWater > limits.limit) {
      throw new Error(
        `hold-ahead low water must be an integer from 0 to the limit ${limits.limit}, got ${limits.lowWater}`,
      );
    }
  }

  /**
   * `claim` of `pool` is being served; `waiting` are the claims of that pool no worker has taken yet, in the order they
   * arrived (the served claim is not among them).
   */
  serve(pool: string, claim: string, waiting: readonly string[]): HoldDecision {
    let ahead = this.aheadByPool.get(pool);
    if (!ahead) {
      ahead = new Set();
      this.aheadByPool.set(pool, ahead);
    }
    const wasHeldAhead = ahead.delete(claim);
    const room = wasHeldAhead && ahead.size >= this.limits.lowWater ? 0 : this.limits.limit - ahead.size;
    const extra: string[] = [];
    for (const candidate of waiting) {
      if (extra.length >= room) break;
      if (candidate === claim || ahead.has(candidate)) continue;
      extra.push(candidate);
    }
    for (const candidate of extra) ahead.add(candidate);
    return { wasHeldAhead, hold: wasHeldAhead ? extra : [claim, ...extra] };
  }

  /** Claims of `pool` held ahead and not yet served. */
  heldAhead(pool: string): number {
    return this.aheadByPool.get(pool)?.size ?? 0;
  }
}
