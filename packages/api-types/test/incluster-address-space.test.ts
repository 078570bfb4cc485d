import { AddressAllocator } from '@tally-ipam/allocator';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type InClusterIPPoolSpec, inClusterAddressSpace, inClusterIPPoolStatusAddresses } from '../src/index.js';
import { BASE, BITS, type Case, caseArbitrary, text } from './fixtures/incluster.js';

/**
 * The mapping from an in-cluster pool spec to Tally's allocator against a model of the reference provider v1.1.0
 * (`poolutil.PoolSpecToIPSet` and `FindFreeAddress`), written from its documented behaviour as plain sets of
 * numbers: the listed addresses, minus the excluded ones, minus — unless allocateReservedIPAddresses — the first
 * address of the subnet (prefix applied to the lowest listed address) and, for IPv4, its last, whatever the subnet's
 * size; minus the gateway. Claims get the lowest free address first.
 */

/** The reference's allocatable set, ascending. */
function referenceSet(testCase: Case): bigint[] {
  const set = new Set<bigint>();
  for (const entry of testCase.listed) for (let value = entry.first; value <= entry.last; value += 1n) set.add(value);
  for (const entry of testCase.excluded)
    for (let value = entry.first; value <= entry.last; value += 1n) set.delete(value);
  if (testCase.spec.allocateReservedIPAddresses !== true) {
    // bigint: Math.min does not apply.
    let lowest = testCase.listed[0]!.first;
    for (const entry of testCase.listed) if (entry.first < lowest) lowest = entry.first;
    const size = 1n << BigInt(BITS[testCase.family] - testCase.spec.prefix);
    const first = (lowest / size) * size;
    set.delete(first);
    if (testCase.family === 4) set.delete(first + size - 1n);
  }
  if (testCase.gateway !== undefined) set.delete(testCase.gateway);
  return [...set].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function tallySet(spec: InClusterIPPoolSpec): bigint[] {
  const space = inClusterAddressSpace(spec);
  if (!space.ok) throw new Error(`expected a valid spec: ${JSON.stringify(space.issues)}`);
  return space.pool.allocatable.intervals.flatMap((interval) => {
    const values: bigint[] = [];
    for (let value = interval.first; value <= interval.last; value += 1n) values.push(value);
    return values;
  });
}

describe('inClusterAddressSpace hands out exactly the addresses the reference would', () => {
  it('the same set, for any valid spec of either family (property)', () => {
    fc.assert(
      fc.property(caseArbitrary, (testCase) => {
        expect(tallySet(testCase.spec)).toEqual(referenceSet(testCase));
      }),
      { numRuns: 500 },
    );
  });

  it('in the same order: LowestFree gives the reference FindFreeAddress sequence, around existing addresses (property)', () => {
    fc.assert(
      fc.property(caseArbitrary, fc.array(fc.nat(70), { maxLength: 6 }), (testCase, takenOffsets) => {
        const space = inClusterAddressSpace(testCase.spec);
        if (!space.ok) throw new Error('expected a valid spec');
        const expected = referenceSet(testCase);
        const taken = takenOffsets.map((offset) => BASE[testCase.family] + BigInt(offset));
        const allocator = new AddressAllocator(
          space.pool,
          { strategy: 'LowestFree' },
          { allocated: taken.map((value) => ({ family: testCase.family, value })) },
        );
        const takenSet = new Set(taken);
        const free = expected.filter((value) => !takenSet.has(value));
        const handedOut: bigint[] = [];
        for (let index = 0; index < free.length; index += 1) handedOut.push(allocator.allocate().value);
        expect(handedOut).toEqual(free);
        expect(() => allocator.allocate()).toThrow();
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    ['10.0.0.7/32', 32, []],
    ['10.0.0.6/31', 31, []],
    ['fd00::7/128', 128, []],
    ['fd00::6/127', 127, ['fd00::7']],
  ])('point-to-point %s: the reference still removes the first (and IPv4 last) address', (cidr, prefix, expected) => {
    const space = inClusterAddressSpace({ addresses: [cidr], prefix });
    expect(space.ok).toBe(true);
    if (!space.ok) return;
    const family = cidr.includes(':') ? 6 : 4;
    expect(tallySet({ addresses: [cidr], prefix }).map((value) => text(family, value))).toEqual(expected);
    // With allocateReservedIPAddresses every address of the subnet is handed out, as in the reference.
    expect(tallySet({ addresses: [cidr], prefix, allocateReservedIPAddresses: true }).length).toBe(
      2 ** ((family === 4 ? 32 : 128) - prefix),
    );
  });

  it('zones are dropped as the reference drops them: a zoned address hands out the unzoned one', () => {
    expect(
      tallySet({ addresses: ['fd00::4%a-fd00::6%b', 'fd00::9%eth0'], prefix: 120, gateway: 'fd00::5%eth0' }),
    ).toEqual(tallySet({ addresses: ['fd00::4-fd00::6', 'fd00::9'], prefix: 120, gateway: 'fd00::5' }));
  });

  it('an invalid spec is reported with the field, not mapped', () => {
    const space = inClusterAddressSpace({ addresses: ['10.0.0.1', 'fd00::1'], prefix: 24 });
    expect(space.ok).toBe(false);
    if (space.ok) return;
    expect(space.issues.map((issue) => issue.field)).toContain('spec.addresses[1]');
  });
});

describe('inClusterIPPoolStatusAddresses counts as the reference does', () => {
  const space = inClusterAddressSpace({ addresses: ['10.0.0.0/29'], prefix: 29, gateway: '10.0.0.1' });
  if (!space.ok) throw new Error('expected a valid spec');
  const { allocatable, family } = space.pool;

  it('total excludes network, broadcast and gateway; used counts IPAddresses; free is total − used', () => {
    expect(inClusterIPPoolStatusAddresses(allocatable, family, ['10.0.0.2', '10.0.0.3'])).toEqual({
      total: 5,
      used: 2,
      free: 3,
      outOfRange: 0,
    });
  });

  it('out-of-range addresses count as used and out of range (distinct); free can go below zero; unparsable skipped', () => {
    const inUse = ['10.0.0.2', '10.0.0.1', '10.9.9.9', '10.9.9.9', 'fd00::1', 'garbage', '10.0.0.3', '10.0.0.4'];
    expect(inClusterIPPoolStatusAddresses(allocatable, family, inUse)).toEqual({
      total: 5,
      used: 8,
      free: -3,
      outOfRange: 3,
    });
  });

  it('counts beyond a JSON integer are capped', () => {
    const big = inClusterAddressSpace({ addresses: ['fd00::/8'], prefix: 8 });
    if (!big.ok) throw new Error('expected a valid spec');
    expect(inClusterIPPoolStatusAddresses(big.pool.allocatable, 6, []).total).toBe(Number.MAX_SAFE_INTEGER);
  });
});
