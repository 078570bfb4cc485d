import { describe, expect, it } from 'vitest';
import { AllocationEvents } from '../src/index.js';

const POOL = { kind: 'TallyIPPool', name: 'pool', namespace: 'ns' } as const;
const OTHER = { kind: 'GlobalTallyIPPool', name: 'global' } as const;

function events(clock: { ms: number }): AllocationEvents {
  return new AllocationEvents({ burst: 3, perSecond: 2, summaryIntervalMs: 10_000, now: () => clock.ms });
}

describe('allocation Events policy', () => {
  it('records a burst on the claims, then the rate, and counts the rest per pool for the summary', () => {
    const clock = { ms: 0 };
    const policy = events(clock);
    const recorded = Array.from({ length: 5 }, () => policy.recordOnClaim(POOL));
    expect(recorded).toEqual([true, true, true, false, false]);
    expect(policy.recordOnClaim(OTHER)).toBe(false);
    clock.ms = 500; // one token back at 2 per second
    expect(policy.recordOnClaim(POOL)).toBe(true);
    expect(policy.recordOnClaim(POOL)).toBe(false);
    expect(policy.takeSummary(POOL)).toEqual({ count: 3 });
    expect(policy.takeSummary(OTHER)).toEqual({ count: 1 });
    expect(policy.takeSummary(POOL)).toEqual({ count: 0 });
  });

  it('sums up at most once per interval and says when the next summary is due', () => {
    const clock = { ms: 0 };
    const policy = events(clock);
    for (let index = 0; index < 4; index += 1) policy.recordOnClaim(POOL);
    expect(policy.takeSummary(POOL)).toEqual({ count: 1 });
    clock.ms = 4_000;
    for (let index = 0; index < 20; index += 1) policy.recordOnClaim(POOL);
    const early = policy.takeSummary(POOL);
    expect(early).toEqual({ count: 0, dueInMs: 6_000 });
    clock.ms = 10_000;
    // 8 tokens came back in 4 s, capped at the burst of 3: 17 of the 20 were counted.
    expect(policy.takeSummary(POOL)).toEqual({ count: 17 });
  });

  it('re-queues the pool for the first allocation a summary counts, not for every one', () => {
    const clock = { ms: 0 };
    const requeued: string[] = [];
    const policy = new AllocationEvents({
      burst: 1,
      perSecond: 1,
      summaryIntervalMs: 10_000,
      now: () => clock.ms,
      onUnrecorded: (ref) => requeued.push(ref.name),
    });
    for (let index = 0; index < 50; index += 1) policy.recordOnClaim(POOL);
    policy.recordOnClaim(OTHER);
    // 49 counted for POOL's summary: one re-queue of each pool, whose reconcile records the summary when it is due.
    expect(requeued).toEqual(['pool', 'global']);
    expect(policy.takeSummary(POOL)).toEqual({ count: 49 });
    policy.recordOnClaim(POOL);
    policy.recordOnClaim(POOL);
    expect(requeued).toEqual(['pool', 'global', 'pool']);
  });

  it('refuses a policy that could never record an Event', () => {
    expect(() => new AllocationEvents({ burst: 0, perSecond: 1, summaryIntervalMs: 0, now: () => 0 })).toThrow(
      /burst >= 1/,
    );
  });
});
