import { setTimeout as delay } from 'node:timers/promises';
import { CLAIM_MAX_RETRY_DELAY_MS, ORPHAN_ENTRY_SAFETY_AGE_MS } from '@tally-ipam/ipam-provider';

/**
 * The longest two controller replicas may go without one more claim bound (or, releasing, one more object gone) while
 * the code works as designed, so the stall bound of the chaos tests: a watch that died silently is reopened within
 * 150 s (the kit's reflector: two missed bookmarks of 60 s, plus 30 s), a replica that cannot list exits after the
 * cache sync timeout (2 min), a claim's retry waits at most CLAIM_MAX_RETRY_DELAY_MS, an orphaned ledger entry is
 * collected after ORPHAN_ENTRY_SAFETY_AGE_MS. None of these is a time the machine's load sets.
 */
export const CONTROLLER_STALL_MS = 150_000 + 120_000 + CLAIM_MAX_RETRY_DELAY_MS + ORPHAN_ENTRY_SAFETY_AGE_MS;

/** Time as `untilNoneRemain` sees it; tests pass a manual one. */
export interface ProgressClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const realClock: ProgressClock = { now: () => Date.now(), sleep: (ms) => delay(ms) };

export interface ProgressOptions {
  /**
   * The longest stretch without progress that the code under test can still produce working as designed (its own
   * retry, resync and stall bounds). Past it the wait fails: that is a hang, whatever the machine's load.
   */
  readonly stallMs: number;
  /** How often `remaining` is read. Default 1 s. */
  readonly intervalMs?: number;
  /** Explains a failure: what the system says at that moment (appended to the error). */
  readonly report?: () => Promise<string>;
  readonly clock?: ProgressClock;
}

/** How a wait that ended with nothing remaining went. */
export interface ProgressSummary {
  readonly elapsedMs: number;
  /** The longest stretch in which `remaining` did not fall: how close the run came to `stallMs`. */
  readonly longestStallMs: number;
}

/**
 * Waits until `remaining()` is 0. It fails only when `remaining()` has not fallen below its lowest value so far for
 * `stallMs` — never because the whole took long: on a loaded machine a correct run is slow, not stuck, and a
 * deadline on the total measures the machine, not the code. A count that rises again (work added) is not progress;
 * only a new low is.
 */
export async function untilNoneRemain(
  what: string,
  remaining: () => number | Promise<number>,
  options: ProgressOptions,
): Promise<ProgressSummary> {
  const clock = options.clock ?? realClock;
  const intervalMs = options.intervalMs ?? 1_000;
  const startedAt = clock.now();
  let lowest = Number.POSITIVE_INFINITY;
  let lastProgressAt = startedAt;
  let longestStallMs = 0;
  for (;;) {
    const left = await remaining();
    const now = clock.now();
    if (left < lowest) {
      longestStallMs = Math.max(longestStallMs, now - lastProgressAt);
      lowest = left;
      lastProgressAt = now;
    }
    if (left <= 0) return { elapsedMs: now - startedAt, longestStallMs };
    const stalledMs = now - lastProgressAt;
    if (stalledMs >= options.stallMs) {
      const report = options.report ? `\n${await options.report()}` : '';
      throw new Error(
        `no progress towards ${what} for ${stalledMs} ms (the code's own bound: ${options.stallMs} ms): ${left} ` +
          `remain, ${Math.round((now - startedAt) / 1000)} s after the wait began${report}`,
      );
    }
    await clock.sleep(intervalMs);
  }
}
