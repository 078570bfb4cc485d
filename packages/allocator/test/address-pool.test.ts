import { describe, expect, it } from 'vitest';
import { type AddressPoolSpec, buildAddressPool, checkAllocatable, tryBuildAddressPool } from '../src/address-pool.js';
import { PoolSpecError } from '../src/errors.js';
import { formatIP, parseIP } from '../src/ip.js';

function allocatableText(spec: AddressPoolSpec): string[] {
  const pool = buildAddressPool(spec);
  return [...pool.allocatable.values()].map((value) => formatIP({ family: pool.family, value }));
}

function issuesOf(spec: AddressPoolSpec): { field: string; value: unknown; message: string }[] {
  const result = tryBuildAddressPool(spec);
  if (result.ok) throw new Error('expected the spec to be rejected');
  return [...result.issues];
}

describe('reserved addresses', () => {
  it('removes the IPv4 network and broadcast address of the subnet and the gateway', () => {
    expect(allocatableText({ addresses: ['10.0.0.0/29'], prefix: 29, gateway: '10.0.0.1' })).toEqual([
      '10.0.0.2',
      '10.0.0.3',
      '10.0.0.4',
      '10.0.0.5',
      '10.0.0.6',
    ]);
  });

  it('allocates network and broadcast when allocateReservedIPAddresses is set, but never the gateway', () => {
    expect(
      allocatableText({
        addresses: ['10.0.0.0/30'],
        prefix: 30,
        gateway: '10.0.0.1',
        allocateReservedIPAddresses: true,
      }),
    ).toEqual(['10.0.0.0', '10.0.0.2', '10.0.0.3']);
  });

  it('removes only the subnet-router anycast address for IPv6 (there is no broadcast)', () => {
    expect(allocatableText({ addresses: ['fd00::/126'], prefix: 126 })).toEqual(['fd00::1', 'fd00::2', 'fd00::3']);
  });

  it('computes the subnet from the lowest listed address and spec.prefix, not from each entry', () => {
    // The reference applies the prefix to the lowest address: 10.0.0.0/24 reserves .0 and .255 only.
    expect(
      allocatableText({ addresses: ['10.0.0.0-10.0.0.1', '10.0.0.127-10.0.0.128', '10.0.0.255'], prefix: 24 }),
    ).toEqual(['10.0.0.1', '10.0.0.127', '10.0.0.128']);
  });

  it('does not reserve anything when the listed range does not reach the subnet edges', () => {
    expect(allocatableText({ addresses: ['10.0.0.10-10.0.0.12'], prefix: 24 })).toEqual([
      '10.0.0.10',
      '10.0.0.11',
      '10.0.0.12',
    ]);
  });

  it.each([
    [{ addresses: ['10.0.0.4/31'], prefix: 31 }, ['10.0.0.4', '10.0.0.5']],
    [{ addresses: ['10.0.0.4'], prefix: 32 }, ['10.0.0.4']],
    [{ addresses: ['fd00::/127'], prefix: 127 }, ['fd00::', 'fd00::1']],
    [{ addresses: ['fd00::7'], prefix: 128 }, ['fd00::7']],
  ])('reserves nothing in point-to-point subnets: %j', (spec, expected) => {
    expect(allocatableText(spec)).toEqual(expected);
  });

  it('still never allocates the gateway of a /31', () => {
    expect(allocatableText({ addresses: ['10.0.0.4/31'], prefix: 31, gateway: '10.0.0.4' })).toEqual(['10.0.0.5']);
  });

  it('treats a pool of one address as one allocatable address', () => {
    const pool = buildAddressPool({ addresses: ['192.168.7.9'], prefix: 24 });
    expect(pool.allocatable.size).toBe(1n);
  });

  it('handles /0 pools without enumerating them', () => {
    const v4 = buildAddressPool({ addresses: ['0.0.0.0/0'], prefix: 0 });
    expect(v4.allocatable.size).toBe((1n << 32n) - 2n);
    const v6 = buildAddressPool({ addresses: ['::/0'], prefix: 0, gateway: '::1' });
    expect(v6.allocatable.size).toBe((1n << 128n) - 2n);
    expect(v6.allocatable.min).toBe(2n);
  });

  it('accepts a gateway outside the subnet; it simply removes nothing', () => {
    const pool = buildAddressPool({ addresses: ['10.0.0.0/30'], prefix: 30, gateway: '192.168.0.1' });
    expect(pool.gateway).toEqual(parseIP('192.168.0.1'));
    expect(pool.allocatable.size).toBe(2n);
  });

  it('leaves nothing when the exclusions cover everything', () => {
    const pool = buildAddressPool({
      addresses: ['10.0.0.0/24'],
      prefix: 24,
      excludedAddresses: ['10.0.0.0-10.0.0.100', '10.0.0.64/26', '10.0.0.128/25'],
    });
    expect(pool.allocatable.isEmpty).toBe(true);
  });

  it('treats an unmasked CIDR as its whole network', () => {
    expect(buildAddressPool({ addresses: ['192.168.1.77/24'], prefix: 24 }).allocatable.size).toBe(254n);
  });
});

describe('checkAllocatable', () => {
  const pool = buildAddressPool({
    addresses: ['10.0.0.0/24'],
    prefix: 24,
    gateway: '10.0.0.1',
    excludedAddresses: ['10.0.0.10-10.0.0.19'],
  });

  it.each([
    ['10.0.0.2', { allocatable: true }],
    ['10.0.1.2', { allocatable: false, reason: 'outside-pool', detail: "is not in the pool's addresses" }],
    ['::1', { allocatable: false, reason: 'outside-pool', detail: 'is IPv6, the pool is IPv4' }],
    ['10.0.0.1', { allocatable: false, reason: 'reserved', detail: "is the pool's gateway" }],
    ['10.0.0.0', { allocatable: false, reason: 'reserved', detail: 'is the IPv4 network address of 10.0.0.0/24' }],
    ['10.0.0.255', { allocatable: false, reason: 'reserved', detail: 'is the IPv4 broadcast address of 10.0.0.0/24' }],
    ['10.0.0.15', { allocatable: false, reason: 'excluded', detail: "is in the pool's excludedAddresses" }],
  ])('%s → %j', (address, verdict) => {
    expect(checkAllocatable(pool, parseIP(address))).toEqual(verdict);
  });

  it('names the IPv6 subnet-router anycast address', () => {
    const v6 = buildAddressPool({ addresses: ['fd00::/64'], prefix: 64 });
    expect(checkAllocatable(v6, parseIP('fd00::'))).toEqual({
      allocatable: false,
      reason: 'reserved',
      detail: 'is the IPv6 subnet-router anycast address of fd00::/64',
    });
  });
});

describe('spec validation', () => {
  it('reports every problem with its field path and value', () => {
    expect(
      issuesOf({
        addresses: ['10.0.0.0/24', '010.0.0.5', 'fd00::1', '10.0.0.9-10.0.0.1'],
        prefix: 24,
        gateway: '10.0.0.256',
        excludedAddresses: ['10.0.0.5', 'fe80::1%eth0', '::1'],
      }),
    ).toEqual([
      {
        field: 'spec.addresses[1]',
        value: '010.0.0.5',
        message: 'invalid address "010.0.0.5": leading zeros are not allowed',
      },
      {
        field: 'spec.addresses[3]',
        value: '10.0.0.9-10.0.0.1',
        message: 'invalid range "10.0.0.9-10.0.0.1": the first address is greater than the last',
      },
      {
        field: 'spec.excludedAddresses[1]',
        value: 'fe80::1%eth0',
        message: 'invalid address "fe80::1%eth0": zone IDs (%…) are not allowed',
      },
      {
        field: 'spec.addresses[2]',
        value: 'fd00::1',
        message: 'is IPv6 but the pool is IPv4 (from spec.addresses)',
      },
      {
        field: 'spec.excludedAddresses[2]',
        value: '::1',
        message: 'is IPv6 but the pool is IPv4 (from spec.addresses)',
      },
      {
        field: 'spec.gateway',
        value: '10.0.0.256',
        message: 'invalid address "10.0.0.256": octet 256 is greater than 255',
      },
    ]);
  });

  it('requires at least one address', () => {
    expect(issuesOf({ addresses: [], prefix: 24 })).toEqual([
      { field: 'spec.addresses', value: [], message: 'at least one address, range or CIDR is required' },
    ]);
  });

  it.each([
    [33, 'must be an integer from 0 to 32 for an IPv4 pool'],
    [-1, 'must be an integer from 0 to 32 for an IPv4 pool'],
    [24.5, 'must be an integer from 0 to 32 for an IPv4 pool'],
  ])('rejects prefix %d for IPv4', (prefix, message) => {
    expect(issuesOf({ addresses: ['10.0.0.1'], prefix })).toEqual([{ field: 'spec.prefix', value: prefix, message }]);
  });

  it('accepts prefix 128 for IPv6 and rejects 129', () => {
    expect(buildAddressPool({ addresses: ['fd00::1'], prefix: 128 }).allocatable.size).toBe(1n);
    expect(issuesOf({ addresses: ['fd00::1'], prefix: 129 })).toEqual([
      { field: 'spec.prefix', value: 129, message: 'must be an integer from 0 to 128 for an IPv6 pool' },
    ]);
  });

  it('rejects a gateway of the other family', () => {
    expect(issuesOf({ addresses: ['10.0.0.0/24'], prefix: 24, gateway: 'fd00::1' })).toEqual([
      { field: 'spec.gateway', value: 'fd00::1', message: 'is IPv6 but the pool is IPv4' },
    ]);
  });

  it('rejects entries that cross or lie outside the subnet derived from the lowest address', () => {
    expect(issuesOf({ addresses: ['10.0.0.200-10.0.1.5', '10.0.2.0/24', '10.0.0.7'], prefix: 24 })).toEqual([
      {
        field: 'spec.addresses[0]',
        value: '10.0.0.200-10.0.1.5',
        message: "is not inside the pool's subnet 10.0.0.0/24 (spec.prefix applied to the lowest address)",
      },
      {
        field: 'spec.addresses[1]',
        value: '10.0.2.0/24',
        message: "is not inside the pool's subnet 10.0.0.0/24 (spec.prefix applied to the lowest address)",
      },
    ]);
  });

  it('throws a PoolSpecError whose message lists every problem', () => {
    expect(() => buildAddressPool({ addresses: ['10.1', '10.0.0.1'], prefix: 40 })).toThrow(
      new PoolSpecError([
        {
          field: 'spec.addresses[0]',
          value: '10.1',
          message: 'invalid address "10.1": an IPv4 address has exactly 4 dot-separated decimal octets, found 2',
        },
        { field: 'spec.prefix', value: 40, message: 'must be an integer from 0 to 32 for an IPv4 pool' },
      ]).message,
    );
  });
});
