import { formatIP, PrefixAllocator, parseIP } from '@tally-ipam/allocator';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type InClusterPrefixInUse,
  inClusterPrefixPoolStatusAddresses,
  inClusterPrefixSpace,
  prefixIsAllocatable,
  unallocatablePrefixes,
  validateInClusterPrefixPoolUpdate,
} from '../src/index.js';

/**
 * The prefix pools' address space, allocatable rule and counts against a model of the reference (v1.1.0,
 * `internal/poolutil/prefix.go`, `internal/controllers/inclusterprefixpool.go`) written from its behaviour: sets of
 * addresses as bigint intervals, every `/allocationPrefixLength` block tried lowest first.
 */

const BASE = parseIP('fd00::').value;
const ADDRESS_BITS = 128;

interface Block {
  readonly first: bigint;
  readonly last: bigint;
}

function blockOf(network: bigint, length: number): Block {
  const size = 1n << BigInt(ADDRESS_BITS - length);
  const first = (network / size) * size;
  return { first, last: first + size - 1n };
}

const overlaps = (a: Block, b: Block): boolean => a.first <= b.last && b.first <= a.last;
const inside = (a: Block, outer: Block): boolean => outer.first <= a.first && a.last <= outer.last;

/** A small IPv6 pool: prefixes of /116–/120 inside fd00::/112, allocation length /120–/124, exclusions anywhere. */
const poolArbitrary = fc
  .record({
    length: fc.integer({ min: 120, max: 124 }),
    prefixes: fc.array(
      fc.record({ offset: fc.integer({ min: 0, max: 15 }), length: fc.integer({ min: 116, max: 120 }) }),
      {
        minLength: 1,
        maxLength: 3,
      },
    ),
    excluded: fc.array(
      fc.record({ offset: fc.integer({ min: 0, max: 0xffff }), length: fc.integer({ min: 118, max: 128 }) }),
      {
        maxLength: 3,
      },
    ),
  })
  .map(({ length, prefixes, excluded }) => ({
    length,
    prefixes: prefixes.map(({ offset, length: bits }) => blockOf(BASE + (BigInt(offset) << 12n), bits)),
    prefixLengths: prefixes.map(({ length: bits }) => bits),
    excluded: excluded.map(({ offset, length: bits }) => blockOf(BASE + BigInt(offset), bits)),
    excludedLengths: excluded.map(({ length: bits }) => bits),
  }));

type ModelPool = typeof poolArbitrary extends fc.Arbitrary<infer T> ? T : never;

function specOf(pool: ModelPool): { prefixes: string[]; allocationPrefixLength: number; excludedPrefixes: string[] } {
  const text = (block: Block, bits: number): string => `${formatIP({ family: 6, value: block.first })}/${bits}`;
  return {
    prefixes: pool.prefixes.map((block, index) => text(block, pool.prefixLengths[index] ?? 128)),
    allocationPrefixLength: pool.length,
    excludedPrefixes: pool.excluded.map((block, index) => text(block, pool.excludedLengths[index] ?? 128)),
  };
}

/** The reference's candidates: every block of the allocation length inside a prefix, lowest first, none excluded. */
function candidates(pool: ModelPool): Block[] {
  const size = 1n << BigInt(ADDRESS_BITS - pool.length);
  const seen = new Map<bigint, Block>();
  for (const prefix of pool.prefixes) {
    for (let first = prefix.first; first <= prefix.last; first += size) {
      const block = { first, last: first + size - 1n };
      if (!pool.excluded.some((excluded) => overlaps(block, excluded))) seen.set(first, block);
    }
  }
  return [...seen.values()].sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
}

function modelAllocatable(pool: ModelPool, inUse: InClusterPrefixInUse): boolean {
  if (inUse.prefix !== pool.length) return false;
  const block = blockOf(parseIP(inUse.address).value, inUse.prefix);
  return (
    pool.prefixes.some((prefix) => inside(block, prefix)) &&
    !pool.excluded.some((excluded) => overlaps(block, excluded))
  );
}

const inUseArbitrary = fc.array(
  fc.record({
    offset: fc.integer({ min: 0, max: 0xffff }),
    prefix: fc.oneof(fc.integer({ min: 118, max: 126 }), fc.constant(undefined)),
  }),
  { maxLength: 6 },
);

const toInUse = (entries: { offset: number; prefix: number | undefined }[]): InClusterPrefixInUse[] =>
  entries.map(({ offset, prefix }) => ({ address: formatIP({ family: 6, value: BASE + BigInt(offset) }), prefix }));

describe('inClusterPrefixSpace and the reference allocation order', () => {
  it('the allocator hands out the model blocks, lowest first, around allocations of the pool length', () => {
    fc.assert(
      fc.property(poolArbitrary, fc.array(fc.nat(), { maxLength: 4 }), (pool, picks) => {
        const space = inClusterPrefixSpace(specOf(pool));
        if (!space.ok) throw new Error(space.issues.map((entry) => entry.message).join('; '));
        const all = candidates(pool);
        expect(space.pool.blocks.size).toBe(BigInt(all.length));
        // Some blocks already in use (as IPAddresses of the pool length), the rest handed out in the model's order.
        const used = new Set(picks.filter(() => all.length > 0).map((pick) => pick % Math.max(all.length, 1)));
        const allocator = new PrefixAllocator(space.pool, { strategy: 'LowestFree' });
        for (const index of used) {
          const block = all[index];
          if (block)
            allocator.markAllocated({
              address: formatIP({ family: 6, value: block.first }),
              prefixLength: pool.length,
            });
        }
        const expected = all.filter((_, index) => !used.has(index)).map((block) => block.first);
        const handedOut = expected.map(() => allocator.allocate().network);
        expect(handedOut).toEqual(expected);
        expect(() => allocator.allocate()).toThrow(/no free/);
      }),
    );
  });

  it('drops zones from exclusions as the reference does, and blocks nothing for the gateway', () => {
    const space = inClusterPrefixSpace({
      prefixes: ['fd00::/120'],
      allocationPrefixLength: 124,
      excludedPrefixes: ['fd00::1%eth0'],
      gateway: 'fd00::21',
    });
    expect(space.ok && space.pool.blocks.size).toBe(15n);
    expect(space.ok && space.spec.excludedPrefixes).toEqual(['fd00::1']);
  });

  it('an unusable spec gives the allocator issues', () => {
    const space = inClusterPrefixSpace({ prefixes: ['fd00::1/64'], allocationPrefixLength: 64 });
    expect(space.ok).toBe(false);
  });
});

describe('prefixIsAllocatable (the reference PrefixIsAllocatable of an IPAddress)', () => {
  it('agrees with the model for every IPAddress, host bits cleared', () => {
    fc.assert(
      fc.property(poolArbitrary, inUseArbitrary, (pool, entries) => {
        const space = inClusterPrefixSpace(specOf(pool));
        if (!space.ok) throw new Error('the model pool must build');
        for (const entry of toInUse(entries)) {
          const expected = entry.prefix !== undefined && modelAllocatable(pool, entry);
          expect(prefixIsAllocatable(space.pool, entry)).toBe(expected);
        }
      }),
    );
  });

  it('an unparsable address, a zone, IPv4 or no prefix is not allocatable', () => {
    const space = inClusterPrefixSpace({ prefixes: ['fd00::/48'], allocationPrefixLength: 64 });
    if (!space.ok) throw new Error('valid spec');
    expect(prefixIsAllocatable(space.pool, { address: 'fd00:0:0:1::', prefix: 64 })).toBe(true);
    expect(prefixIsAllocatable(space.pool, { address: 'fd00:0:0:1::5', prefix: 64 })).toBe(true);
    for (const entry of [
      { address: 'fd00:0:0:1::', prefix: undefined },
      { address: 'fd00:0:0:1::%eth0', prefix: 64 },
      { address: 'not an address', prefix: 64 },
      { address: '10.0.0.0', prefix: 24 },
      { address: 'fd00:0:0:1::', prefix: 60 },
      { address: 'fd01::', prefix: 64 },
    ]) {
      expect(prefixIsAllocatable(space.pool, entry), JSON.stringify(entry)).toBe(false);
    }
  });
});

describe('inClusterPrefixPoolStatusAddresses (the reference counts)', () => {
  it('total is the candidates, used every IPAddress, outOfRange every unallocatable one, free max(0, total − used + outOfRange)', () => {
    fc.assert(
      fc.property(poolArbitrary, inUseArbitrary, (pool, entries) => {
        const space = inClusterPrefixSpace(specOf(pool));
        if (!space.ok) throw new Error('the model pool must build');
        const inUse = toInUse(entries);
        const total = candidates(pool).length;
        const outOfRange = inUse.filter((entry) => entry.prefix === undefined || !modelAllocatable(pool, entry)).length;
        expect(inClusterPrefixPoolStatusAddresses(space.pool, inUse)).toEqual({
          total,
          used: inUse.length,
          free: Math.max(0, total - inUse.length + outOfRange),
          outOfRange,
        });
      }),
    );
  });

  it('a duplicated allocation counts twice, as the reference counts objects', () => {
    const space = inClusterPrefixSpace({ prefixes: ['fd00::/62'], allocationPrefixLength: 64 });
    if (!space.ok) throw new Error('valid spec');
    const twice = [
      { address: 'fd00::', prefix: 64 },
      { address: 'fd00::', prefix: 64 },
    ];
    expect(inClusterPrefixPoolStatusAddresses(space.pool, twice)).toEqual({
      total: 4,
      used: 2,
      free: 2,
      outOfRange: 0,
    });
  });
});

describe('validateInClusterPrefixPoolUpdate', () => {
  const old = { prefixes: ['fd00::/48'], allocationPrefixLength: 64 };
  const inUse = [
    { address: 'fd00:0:0:2::', prefix: 64 },
    { address: 'fd00:0:0:1::', prefix: 64 },
  ];

  it('refuses a spec under which an IPAddress is no longer allocatable, naming them sorted', () => {
    const issues = validateInClusterPrefixPoolUpdate(
      old,
      { ...old, excludedPrefixes: ['fd00:0:0:1::5', 'fd00:0:0:2::/64'] },
      inUse,
    );
    expect(issues.map((entry) => entry.rule)).toEqual(['allocations-allocatable']);
    expect(issues[0]?.value).toBe(JSON.stringify(['fd00:0:0:1::', 'fd00:0:0:2::']));
    expect(unallocatablePrefixes({ prefixes: ['fd00:0:0:2::/63'] }, inUse)).toEqual(['fd00:0:0:1::']);
  });

  it('allows a spec that keeps every IPAddress, and checks the spec rules and the length first', () => {
    expect(validateInClusterPrefixPoolUpdate(old, { ...old, excludedPrefixes: ['fd00:0:0:3::/64'] }, inUse)).toEqual(
      [],
    );
    expect(validateInClusterPrefixPoolUpdate(old, { prefixes: [] }, inUse).map((entry) => entry.rule)).toEqual([
      'prefixes-required',
    ]);
    expect(
      validateInClusterPrefixPoolUpdate(old, { prefixes: ['fd00::/48'], allocationPrefixLength: 56 }, inUse).map(
        (entry) => entry.rule,
      ),
    ).toEqual(['allocation-length-immutable']);
  });
});
