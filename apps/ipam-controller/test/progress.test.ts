import { describe, expect, it } from 'vitest';
import { type ProgressClock, untilNoneRemain } from './progress.js';

/** A clock that only moves when the waiter sleeps. */
function manualClock(): ProgressClock {
  let now = 0;
  return {
    now: () => now,
    sleep: async (ms) => {
      now += ms;
    },
  };
}

/** `remaining()` answers from a script of values, one per read, and keeps the last one. */
function scripted(values: readonly number[]): () => number {
  let read = 0;
  return () => values[Math.min(read++, values.length - 1)] as number;
}

describe('untilNoneRemain', () => {
  it('passes a run that is slow but never stuck, however long it takes in all', async () => {
    // 2 000 items, one done every 50 s: 100 000 s in all, far past any deadline on the total, never stalled 60 s.
    let left = 2_000;
    let reads = 0;
    const summary = await untilNoneRemain(
      'the slow run',
      () => {
        reads += 1;
        if (reads % 50 === 0) left -= 1;
        return left;
      },
      { stallMs: 60_000, intervalMs: 1_000, clock: manualClock() },
    );
    expect(summary.elapsedMs).toBeGreaterThan(99_000_000);
    expect(summary.longestStallMs).toBe(50_000);
  });

  it('fails once nothing was done for the stall bound, saying how many remain and what the report says', async () => {
    const wait = untilNoneRemain('every claim bound', scripted([10, 9, 8]), {
      stallMs: 30_000,
      intervalMs: 1_000,
      clock: manualClock(),
      report: async () => 'replica a: queue depth 0',
    });
    await expect(wait).rejects.toThrow(
      /^no progress towards every claim bound for 30000 ms \(the code's own bound: 30000 ms\): 8 remain, 32 s after the wait began\nreplica a: queue depth 0$/,
    );
  });

  it('counts only a new low as progress: work that comes back does not reset the stall', async () => {
    // 5 → 3, then it swings between 4 and 3 (claims unbound again, bound again) without ever going below 3.
    const swinging = scripted([5, 3, 4, 3, 4, 3, 4, 3, 4, 3, 4, 3, 4, 3, 4]);
    await expect(
      untilNoneRemain('the swinging run', swinging, { stallMs: 10_000, intervalMs: 1_000, clock: manualClock() }),
    ).rejects.toThrow(/no progress towards the swinging run for 10000 ms/);
  });

  it('returns at once when nothing remains', async () => {
    const summary = await untilNoneRemain('nothing', () => 0, { stallMs: 1, clock: manualClock() });
    expect(summary).toEqual({ elapsedMs: 0, longestStallMs: 0 });
  });
});
