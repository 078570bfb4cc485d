import { describe, expect, it } from 'vitest';
import { AllocationError } from '../src/errors.js';
import { PrefixAllocator } from '../src/prefix-allocator.js';
import { buildPrefixPool, formatPrefix, type PrefixPoolSpec, tryBuildPrefixPool } from '../src/prefix-pool.js';

function allocator(spec: PrefixPoolSpec, allocated: string[] = []): PrefixAllocator {
  return new PrefixAllocator(buildPrefixPool(spec), { clock: () => 0 }, allocated);
}

function next(alloc: PrefixAllocator): string {
  return formatPrefix(alloc.allocate());
}

function failure(action: () => unknown): AllocationError {
  try {
    action();
  } catch (error) {
    if (error instanceof AllocationError) return error;
    throw error;
  }
  throw new Error('expected an AllocationError');
}

describe('prefix pools', () => {
  it('hands out the lowest free aligned /64 blocks of an IPv6 /62', () => {
    const alloc = allocator({ prefixes: ['2001:db8::/62'], allocationPrefixLength: 64 });
    expect([next(alloc), next(alloc), next(alloc), next(alloc)]).toEqual([
      '2001:db8::/64',
      '2001:db8:0:1::/64',
      '2001:db8:0:2::/64',
      '2001:db8:0:3::/64',
    ]);
    expect(failure(() => alloc.allocate()).reason).toBe('exhausted');
    expect(alloc.counts()).toEqual({ total: 4n, used: 4n, free: 0n, outOfRange: 0n, coolingDown: 0n });
  });

  it('skips every block that overlaps an excluded prefix, address or range', () => {
    const alloc = allocator({
      prefixes: ['10.0.0.0/24'],
      allocationPrefixLength: 26,
      excludedPrefixes: ['10.0.0.0/27', '10.0.0.130', '10.0.0.191-10.0.0.192'],
    });
    // Blocks .0/26 (excluded /27), .128/26 (.130) and .192/26 (the range crosses into it) are blocked.
    expect(alloc.counts().total).toBe(1n);
    expect(next(alloc)).toBe('10.0.0.64/26');
    expect(failure(() => alloc.allocate()).reason).toBe('exhausted');
  });

  it('counts a /48 pool of /64s as 65536 blocks and keeps out-of-range prefixes apart', () => {
    const alloc = allocator({ prefixes: ['fd00:1::/48', 'fd00:3::/48'], allocationPrefixLength: 64 }, [
      'fd00:1::/64',
      'fd00:1:0:1::/64',
      'fd00:2::/64',
      'fd00:1::/56',
    ]);
    expect(alloc.counts()).toEqual({ total: 131_072n, used: 4n, free: 131_070n, outOfRange: 2n, coolingDown: 0n });
    expect(alloc.outOfRangePrefixes().map(formatPrefix)).toEqual(['fd00:1::/56', 'fd00:2::/64']);
    expect(next(alloc)).toBe('fd00:1:0:2::/64');
  });

  it('allocates a specific prefix or says why not', () => {
    const alloc = allocator({
      prefixes: ['fd00::/60'],
      allocationPrefixLength: 64,
      excludedPrefixes: ['fd00:0:0:3::1'],
    });
    expect(formatPrefix(alloc.allocateSpecific('fd00:0:0:5::/64'))).toBe('fd00:0:0:5::/64');
    expect(formatPrefix(alloc.allocateSpecific({ address: 'fd00:0:0:6::', prefixLength: 64 }))).toBe('fd00:0:0:6::/64');
    const cases: [string, string, string][] = [
      ['fd00:0:0:5::/64', 'taken', 'prefix fd00:0:0:5::/64 is already allocated'],
      ['fd00:0:0:3::/64', 'excluded', "prefix fd00:0:0:3::/64 overlaps the pool's excludedPrefixes"],
      ['fd00:0:0:10::/64', 'outside-pool', "prefix fd00:0:0:10::/64 is not inside the pool's prefixes"],
      ['fd00::/63', 'misaligned', 'prefix fd00::/63 is a /63, the pool allocates /64 prefixes'],
      ['fd00::1/64', 'misaligned', 'prefix fd00::1/64 has host bits set (it is not network-aligned)'],
      ['10.0.0.0/24', 'outside-pool', 'prefix 10.0.0.0/24 is IPv4, the pool is IPv6'],
    ];
    for (const [prefix, reason, message] of cases) {
      const error = failure(() => alloc.allocateSpecific(prefix));
      expect([error.reason, error.message]).toEqual([reason, message]);
    }
    expect(next(alloc)).toBe('fd00::/64');
  });

  it('releases and re-allocates, masking host bits of an in-use prefix like the reference', () => {
    const alloc = allocator({ prefixes: ['fd00::/63'], allocationPrefixLength: 64 }, ['fd00::5/64']);
    expect(alloc.isAllocated('fd00::/64')).toBe(true);
    expect(next(alloc)).toBe('fd00:0:0:1::/64');
    expect(alloc.release('fd00::/64')).toBe(true);
    expect(alloc.release('fd00::/64')).toBe(false);
    expect(next(alloc)).toBe('fd00::/64');
  });

  it('supports /128 allocations (host-address-like) and a /0 aggregate', () => {
    const hosts = allocator({ prefixes: ['fd00::/127'], allocationPrefixLength: 128 });
    expect([next(hosts), next(hosts)]).toEqual(['fd00::/128', 'fd00::1/128']);
    const everything = allocator({ prefixes: ['::/0'], allocationPrefixLength: 0 });
    expect(next(everything)).toBe('::/0');
    expect(allocator({ prefixes: ['::/0'], allocationPrefixLength: 64 }).counts().total).toBe(1n << 64n);
  });

  it('reports every problem in a prefix pool spec', () => {
    const result = tryBuildPrefixPool({
      prefixes: ['fd00::1/64', 'fd01::/72', '10.0.0.0/8', 'fd02::/0x'],
      allocationPrefixLength: 64,
      excludedPrefixes: ['10.0.0.1', 'fd00::/129'],
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toEqual([
      { field: 'spec.prefixes[0]', value: 'fd00::1/64', message: 'is not network-aligned (the network is fd00::/64)' },
      {
        field: 'spec.prefixes[3]',
        value: 'fd02::/0x',
        message: 'invalid CIDR "fd02::/0x": prefix length "0x" is not a decimal number without leading zeros',
      },
      {
        field: 'spec.prefixes[1]',
        value: 'fd01::/72',
        message: 'is a /72, longer than spec.allocationPrefixLength 64',
      },
      { field: 'spec.prefixes[2]', value: '10.0.0.0/8', message: 'is IPv4 but spec.prefixes[0] is IPv6' },
      { field: 'spec.excludedPrefixes[0]', value: '10.0.0.1', message: 'is IPv4 but the pool is IPv6' },
      {
        field: 'spec.excludedPrefixes[1]',
        value: 'fd00::/129',
        message: 'invalid CIDR "fd00::/129": prefix length 129 is out of range for IPv6 (0-128)',
      },
    ]);
  });

  it('rejects an allocation length out of range and an empty prefix list', () => {
    expect(tryBuildPrefixPool({ prefixes: ['10.0.0.0/8'], allocationPrefixLength: 33 })).toEqual({
      ok: false,
      issues: [
        {
          field: 'spec.allocationPrefixLength',
          value: 33,
          message: 'must be an integer from 0 to 32 for an IPv4 pool',
        },
      ],
    });
    expect(tryBuildPrefixPool({ prefixes: [], allocationPrefixLength: 64 })).toEqual({
      ok: false,
      issues: [{ field: 'spec.prefixes', value: [], message: 'at least one prefix is required' }],
    });
  });

  it('applies the grace period and strategies to prefixes too', () => {
    let now = 10_000;
    const pool = buildPrefixPool({ prefixes: ['fd00::/63'], allocationPrefixLength: 64 });
    const alloc = new PrefixAllocator(pool, { reuseGracePeriodMs: 1_000, clock: () => now });
    expect([next(alloc), next(alloc)]).toEqual(['fd00::/64', 'fd00:0:0:1::/64']);
    alloc.release('fd00::/64');
    const exhausted = failure(() => alloc.allocate());
    expect([exhausted.reason, exhausted.availableAtMs]).toEqual(['exhausted', 11_000]);
    const cooling = failure(() => alloc.allocateSpecific('fd00::/64'));
    expect([cooling.reason, cooling.availableAtMs]).toEqual(['in-grace-period', 11_000]);
    expect(alloc.counts()).toEqual({ total: 2n, used: 1n, free: 0n, outOfRange: 0n, coolingDown: 1n });
    now += 1_000;
    expect(next(alloc)).toBe('fd00::/64');

    const random = new PrefixAllocator(pool, { strategy: 'Random', random: () => 0.75, clock: () => 0 });
    expect(next(random)).toBe('fd00:0:0:1::/64');
  });
});
