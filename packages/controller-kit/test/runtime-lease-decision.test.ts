import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { microTime } from '../src/client/events.js';
import { validateLeaderElectionTimings } from '../src/manager/leader-election.js';
import { decideLease, type LeaseSpec, leaseSpecOf, recordFingerprint } from '../src/manager/lease.js';

const identity = fc.constantFrom('me', 'other-a', 'other-b');
const holder = fc.constantFrom<string | null | undefined>('me', 'other-a', '', null, undefined);
const instant = fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }).map((ms) => new Date(ms));
const spec: fc.Arbitrary<LeaseSpec | undefined> = fc.option(
  fc.record({
    holderIdentity: holder,
    leaseDurationSeconds: fc.option(fc.integer({ min: 1, max: 60 }), { nil: undefined }),
    acquireTime: fc.option(instant.map(microTime), { nil: undefined }),
    renewTime: fc.option(instant.map(microTime), { nil: undefined }),
    leaseTransitions: fc.option(fc.nat({ max: 100 }), { nil: undefined }),
  }),
  { nil: undefined },
);

describe('decideLease (client-go tryAcquireOrRenew)', () => {
  it('never takes a Lease another live holder has', () => {
    fc.assert(
      fc.property(spec, identity, instant, fc.boolean(), (current, me, now, expired) => {
        const decision = decideLease(current, {
          identity: me,
          now,
          leaseDurationSeconds: 15,
          observedExpired: expired,
        });
        const currentHolder = current?.holderIdentity ?? '';
        const othersLive = currentHolder !== '' && currentHolder !== me && !expired;
        expect(decision.kind).toBe(othersLive ? 'wait' : 'write');
        if (decision.kind === 'wait') expect(decision.holder).toBe(currentHolder);
      }),
    );
  });

  it('writes this candidate as holder, renewed now, counting a transition only when the holder changes', () => {
    fc.assert(
      fc.property(spec, identity, instant, fc.boolean(), (current, me, now, expired) => {
        const decision = decideLease(current, { identity: me, now, leaseDurationSeconds: 7, observedExpired: expired });
        if (decision.kind !== 'write') return;
        const { record } = decision;
        const renewing = (current?.holderIdentity ?? '') === me;
        expect(record.holderIdentity).toBe(me);
        expect(record.renewTime).toEqual(now);
        expect(record.leaseDurationSeconds).toBe(7);
        expect(record.leaseTransitions).toBe((current?.leaseTransitions ?? 0) + (renewing ? 0 : 1));
        const expectedAcquire = renewing && current?.acquireTime ? new Date(current.acquireTime) : now;
        expect(record.acquireTime).toEqual(expectedAcquire);
      }),
    );
  });

  it('writes MicroTime with exactly six fractional digits and a changed fingerprint on every renewal', () => {
    fc.assert(
      fc.property(instant, fc.integer({ min: 1, max: 10_000 }), (now, laterMs) => {
        const first = decideLease(undefined, { identity: 'me', now, leaseDurationSeconds: 15, observedExpired: false });
        if (first.kind !== 'write') throw new Error('an absent lease is always taken');
        const written = leaseSpecOf(first.record);
        expect(written.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
        const renewed = decideLease(written as LeaseSpec, {
          identity: 'me',
          now: new Date(now.getTime() + laterMs),
          leaseDurationSeconds: 15,
          observedExpired: false,
        });
        if (renewed.kind !== 'write') throw new Error('the holder always renews');
        const rewritten = leaseSpecOf(renewed.record);
        expect(rewritten.acquireTime).toBe(written.acquireTime);
        expect(recordFingerprint(rewritten as LeaseSpec)).not.toBe(recordFingerprint(written as LeaseSpec));
      }),
    );
  });
});

describe('validateLeaderElectionTimings', () => {
  it('accepts exactly the timings where the leader gives up before a follower may take over', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1_000, max: 60_000 }),
        fc.integer({ min: 1, max: 60_000 }),
        fc.integer({ min: 1, max: 60_000 }),
        (leaseDurationMs, renewDeadlineMs, retryPeriodMs) => {
          const valid = leaseDurationMs > renewDeadlineMs && renewDeadlineMs > 1.2 * retryPeriodMs;
          const check = (): void => validateLeaderElectionTimings({ leaseDurationMs, renewDeadlineMs, retryPeriodMs });
          if (valid) expect(check).not.toThrow();
          else expect(check).toThrow(/^leader election: /);
        },
      ),
    );
  });
});
