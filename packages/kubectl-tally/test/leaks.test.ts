import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AddressRecord, type EntryRecord, findLeaks, type Leak, leaksOlderThan } from '../src/view/leaks.js';

function address(name: string, ip: string, claim: string | undefined, createdMs = 0): AddressRecord {
  return {
    namespace: 'ns',
    name,
    address: ip,
    claimName: claim,
    claimKey: claim && `g/ns/${claim}`,
    pool: 'TallyIPPool/p',
    createdMs,
  };
}

function entry(ip: string, claim: string, released = false, heldSinceMs = 0): EntryRecord {
  return {
    ledger: 'ip4-10.0.0.0.27',
    key: `ip4-${ip}`,
    address: ip,
    namespace: 'ns',
    claimName: claim,
    pool: 'TallyIPPool/p',
    heldSinceMs,
    released,
  };
}

describe('findLeaks', () => {
  it('finds IPAddresses whose claim is gone and held entries without an IPAddress, oldest first', () => {
    const leaks = findLeaks(
      [
        address('a', '10.0.0.1', 'alive', 5),
        address('b', '10.0.0.2', 'gone', 3),
        address('c', '10.0.0.3', undefined, 4),
      ],
      new Set(['g/ns/alive']),
      [entry('10.0.0.1', 'alive'), entry('10.0.0.9', 'x', false, 1), entry('10.0.0.8', 'y', true)],
    );
    expect(leaks.map((leak) => [leak.kind, leak.name, leak.why])).toEqual([
      ['LedgerEntry', 'ip4-10.0.0.0.27/ip4-10.0.0.9', 'no IPAddress of 10.0.0.9 in ns'],
      ['IPAddress', 'b', 'claim gone does not exist'],
      ['IPAddress', 'c', 'names no claim'],
    ]);
  });

  it('never reports what is whole: an IPAddress with its claim, an entry with its IPAddress, a released entry', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.nat(255), { maxLength: 30 }),
        fc.array(fc.boolean(), { minLength: 30, maxLength: 30 }),
        (hosts, flags) => {
          const addresses = hosts.map((host, index) => address(`a${index}`, `10.0.0.${host}`, `claim-${index}`));
          const claims = new Set(hosts.filter((_, index) => flags[index]).map((_, index) => `g/ns/claim-${index}`));
          const entries = hosts.map((host, index) => entry(`10.0.0.${host}`, `claim-${index}`, !flags[index]));
          const leaks = findLeaks(addresses, claims, entries);
          expect(leaks.every((leak) => leak.kind === 'IPAddress')).toBe(true);
          const claimed = new Set([...claims]);
          expect(leaks.map((leak) => leak.name).sort()).toEqual(
            addresses
              .filter((a) => !claimed.has(a.claimKey ?? ''))
              .map((a) => a.name)
              .sort(),
          );
        },
      ),
    );
  });
});

describe('leaksOlderThan', () => {
  const leak = (name: string, sinceMs: number | undefined): Leak => ({
    kind: 'IPAddress',
    namespace: 'ns',
    name,
    address: '10.0.0.1',
    pool: 'TallyIPPool/p',
    claim: 'c',
    sinceMs,
    why: 'claim c does not exist',
  });

  it('keeps exactly the leaks at least the minimum age old, and those of unknown age, in their order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.option(fc.integer({ min: 0, max: 10_000 }), { nil: undefined }), { maxLength: 30 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 20_000 }),
        (sinces, minAgeMs, nowMs) => {
          const leaks = sinces.map((since, index) => leak(`a${index}`, since));
          const kept = leaksOlderThan(leaks, nowMs, minAgeMs);
          expect(kept).toEqual(leaks.filter((each) => each.sinceMs === undefined || nowMs - each.sinceMs >= minAgeMs));
          if (minAgeMs === 0)
            expect(kept.filter((each) => each.sinceMs !== undefined && each.sinceMs <= nowMs)).toEqual(
              leaks.filter((each) => each.sinceMs !== undefined && each.sinceMs <= nowMs),
            );
        },
      ),
    );
  });

  it('leaves out a leak one millisecond younger than the minimum and keeps one exactly that old', () => {
    const kept = leaksOlderThan([leak('young', 1_001), leak('old', 1_000), leak('unknown', undefined)], 61_000, 60_000);
    expect(kept.map((each) => each.name)).toEqual(['old', 'unknown']);
  });
});
