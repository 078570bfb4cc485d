import { parseMetal3IPPool } from '@tally-ipam/api-types';
import { describe, expect, it } from 'vitest';
import {
  allocateForClaim,
  buildMetal3PoolPlan,
  Metal3AllocationError,
  Metal3PoolSpecError,
  type Metal3PoolSpecInput,
  translateIPPoolSpec,
} from '../src/index.js';

/** The spec of the proposal's IPPool example, as printed there, read through api-types' parser. */
function proposalPoolSpec(): Metal3PoolSpecInput {
  const parsed = parseMetal3IPPool({
    apiVersion: 'ipam.metal3.io/v1alpha1',
    kind: 'IPPool',
    metadata: { name: 'pool-1', namespace: 'default' },
    spec: {
      clusterName: 'cluster-1',
      pools: [
        { start: '192.168.0.10', end: '192.168.0.15', subnet: '192.168.0.0/24', gateway: '192.168.0.1', prefix: 24 },
        { start: '192.168.1.10', end: '192.168.1.15', subnet: '192.168.1.0/24', gateway: '192.168.1.1', prefix: 24 },
      ],
      gateway: '192.168.1.1',
      prefix: 24,
      preAllocations: { 'RenderedData-10': '192.168.0.9', 'RenderedData-9': '192.168.0.8' },
      namePrefix: 'provisioning',
    },
  });
  if (!parsed.success) throw parsed.error;
  return parsed.data.spec;
}

function issuesOf(spec: Metal3PoolSpecInput): { field: string; message: string }[] {
  const result = translateIPPoolSpec(spec);
  if (result.ok) throw new Error('expected the spec to be refused');
  return result.issues.map(({ field, message }) => ({ field, message }));
}

describe('the proposal example IPPool', () => {
  const plan = buildMetal3PoolPlan(proposalPoolSpec());

  it('gives two ranges with their own prefix and gateway overriding the pool’s', () => {
    expect(
      plan.ranges.map((range) => ({
        index: range.index,
        size: range.pool.allocatable.size,
        prefix: range.prefix,
        gateway: range.gateway,
      })),
    ).toEqual([
      { index: 0, size: 6n, prefix: 24, gateway: '192.168.0.1' },
      { index: 1, size: 6n, prefix: 24, gateway: '192.168.1.1' },
    ]);
  });

  it('cannot honour its pre-allocations: 192.168.0.9 and .8 lie outside both ranges (.10–.15)', () => {
    expect(plan.preAllocations.size).toBe(0);
    expect([...plan.preAllocationIssues.values()]).toEqual([
      {
        field: 'spec.preAllocations[RenderedData-10]',
        value: '192.168.0.9',
        message: '192.168.0.9 is outside every range of spec.pools',
      },
      {
        field: 'spec.preAllocations[RenderedData-9]',
        value: '192.168.0.8',
        message: '192.168.0.8 is outside every range of spec.pools',
      },
    ]);
    expect(() => allocateForClaim(plan, 'RenderedData-10', [])).toThrow(
      new Metal3AllocationError(
        'pre-allocation-invalid',
        'spec.preAllocations[RenderedData-10]: 192.168.0.9 is outside every range of spec.pools',
      ),
    );
  });

  it('hands the first claim an address of the first range, named from namePrefix and the address', () => {
    expect(allocateForClaim(plan, 'rendereddata-1', [])).toEqual({
      name: 'provisioning-192-168-0-10',
      address: '192.168.0.10',
      prefix: 24,
      gateway: '192.168.0.1',
      dnsServers: [],
      rangeIndex: 0,
    });
  });

  it('moves on to the second range when the first is full', () => {
    const held = ['10', '11', '12', '13', '14', '15'].map((last) => ({ address: `192.168.0.${last}` }));
    expect(allocateForClaim(plan, 'c', held)).toMatchObject({ address: '192.168.1.10', gateway: '192.168.1.1' });
  });
});

describe('ranges', () => {
  it('a subnet without start begins at the subnet address plus one; gateway and broadcast are never handed out', () => {
    const plan = buildMetal3PoolPlan({ namePrefix: 'p', pools: [{ subnet: '10.0.0.0/29', gateway: '10.0.0.1' }] });
    const range = plan.ranges[0];
    expect(range?.pool.allocatable.size).toBe(5n); // .2–.6: .1 is the gateway, .7 the broadcast
    expect(range?.prefix).toBe(29); // no prefix given: the subnet's length
  });

  it('the range prefix overrides the pool prefix, and the pool prefix the subnet length', () => {
    const plan = buildMetal3PoolPlan({
      namePrefix: 'p',
      prefix: 16,
      pools: [
        { start: '10.0.0.10', end: '10.0.0.20', prefix: 24 },
        { start: '10.1.0.10', end: '10.1.0.20', subnet: '10.1.0.0/24' },
      ],
    });
    expect(plan.ranges.map((range) => range.prefix)).toEqual([24, 16]);
  });

  it('DNS servers: the range’s when it lists any, else the pool’s', () => {
    const plan = buildMetal3PoolPlan({
      namePrefix: 'p',
      dnsServers: ['8.8.8.8'],
      pools: [
        { start: '10.0.0.10', end: '10.0.0.20', dnsServers: ['10.0.0.2'] },
        { start: '10.0.1.10', end: '10.0.1.20', dnsServers: [] },
      ],
    });
    expect(plan.ranges.map((range) => range.dnsServers)).toEqual([['10.0.0.2'], ['8.8.8.8']]);
  });

  it('the pool gateway and every range gateway are kept out of every range', () => {
    const plan = buildMetal3PoolPlan({
      namePrefix: 'p',
      gateway: '10.0.0.11',
      pools: [
        { start: '10.0.0.10', end: '10.0.0.13' },
        { start: '10.0.0.12', end: '10.0.0.13', gateway: '10.0.0.12' },
      ],
    });
    expect(plan.ranges.map((range) => [...range.pool.allocatable.values()])).toEqual([
      [10n + 0x0a000000n, 13n + 0x0a000000n],
      [13n + 0x0a000000n],
    ]);
  });

  it('a single address: start equal to end', () => {
    const plan = buildMetal3PoolPlan({ namePrefix: 'p', pools: [{ start: 'fd00::5', end: 'fd00::5', prefix: 64 }] });
    expect(allocateForClaim(plan, 'c', [])).toMatchObject({ address: 'fd00::5', name: 'p-fd00--5', prefix: 64 });
  });
});

describe('specs that cannot be served are refused, naming the field and the value', () => {
  it.each([
    ['no start, no subnet', { pools: [{ end: '10.0.0.5' }] }, 'spec.pools[0]', 'a pool needs start or subnet'],
    [
      'start without end or subnet',
      { pools: [{ start: '10.0.0.5' }] },
      'spec.pools[0]',
      'start 10.0.0.5 needs end or subnet to stop at',
    ],
    [
      'end before start',
      { pools: [{ start: '10.0.0.9', end: '10.0.0.1' }] },
      'spec.pools[0].end',
      'is before start 10.0.0.9',
    ],
    [
      'start outside the subnet',
      { pools: [{ start: '10.0.1.1', end: '10.0.1.5', subnet: '10.0.0.0/24' }] },
      'spec.pools[0].start',
      'is outside the subnet 10.0.0.0/24',
    ],
    [
      'start not an address',
      { pools: [{ start: '10.0.0.256', end: '10.0.0.1' }] },
      'spec.pools[0].start',
      '"10.0.0.256" is not an IP address',
    ],
    ['subnet not a CIDR', { pools: [{ subnet: '10.0.0.0' }] }, 'spec.pools[0].subnet', '"10.0.0.0" is not a CIDR'],
    [
      'mixed families',
      { pools: [{ start: '10.0.0.1', end: 'fd00::1' }] },
      'spec.pools[0].end',
      'is not IPv4 like the range',
    ],
    [
      'a range crossing the network of its prefix',
      { pools: [{ start: '10.0.0.250', end: '10.0.1.5', prefix: 24 }] },
      'spec.pools[0]',
      "is not inside the pool's subnet 10.0.0.0/24",
    ],
    [
      'a gateway of the other family',
      { gateway: 'fd00::1', pools: [{ start: '10.0.0.1', end: '10.0.0.5' }] },
      'spec.gateway',
      'is IPv6 but spec.pools[0] is IPv4',
    ],
    [
      'a prefix out of range (objects written under Metal3’s CRD, which has no minimum)',
      { prefix: -1, pools: [{ start: '10.0.0.1', end: '10.0.0.5', prefix: 129 }] },
      'spec.pools[0].prefix',
      '129 is not a prefix length from 0 to 128',
    ],
    [
      'prefix 33 on IPv4',
      { prefix: 33, pools: [{ start: '10.0.0.1', end: '10.0.0.5' }] },
      'spec.prefix',
      '33 is longer than 32, the maximum for the IPv4 range spec.pools[0]',
    ],
  ] as const)('%s', (_, spec, field, message) => {
    const issues = issuesOf({ namePrefix: 'p', ...spec } as Metal3PoolSpecInput);
    expect(issues.map((issue) => issue.field)).toContain(field);
    expect(issues.find((issue) => issue.field === field)?.message).toContain(message);
  });

  it('buildMetal3PoolPlan throws every problem at once', () => {
    expect(() =>
      buildMetal3PoolPlan({ namePrefix: 'p', pools: [{ end: '10.0.0.5' }, { start: 'x', end: '10.0.0.1' }] }),
    ).toThrow(Metal3PoolSpecError);
    try {
      buildMetal3PoolPlan({ namePrefix: 'p', pools: [{ end: '10.0.0.5' }, { start: 'x', end: '10.0.0.1' }] });
    } catch (error) {
      expect((error as Metal3PoolSpecError).issues.map((issue) => issue.field)).toEqual([
        'spec.pools[0]',
        'spec.pools[1].start',
      ]);
    }
  });
});

describe('pre-allocations', () => {
  const spec: Metal3PoolSpecInput = {
    namePrefix: 'pool',
    gateway: '10.0.0.1',
    pools: [{ subnet: '10.0.0.0/29' }],
    preAllocations: { 'cp-0': '10.0.0.2', gw: '10.0.0.1', bcast: '10.0.0.7', far: '10.9.9.9', bad: '10.0.0.02' },
  };
  const plan = buildMetal3PoolPlan(spec);

  it('a claim with a pre-allocation gets exactly its address', () => {
    expect(allocateForClaim(plan, 'cp-0', [])).toMatchObject({ address: '10.0.0.2', name: 'pool-10-0-0-2' });
  });

  it('no other claim gets a pre-allocated address, honoured or not', () => {
    const first = allocateForClaim(plan, 'worker-0', []);
    expect(first.address).toBe('10.0.0.3');
  });

  it('unusable pre-allocations fail their own claim, naming field and value', () => {
    expect(Object.fromEntries([...plan.preAllocationIssues].map(([claim, issue]) => [claim, issue.message]))).toEqual({
      gw: '10.0.0.1 is a gateway of the pool and is never handed out',
      bcast: '10.0.0.7 is the IPv4 broadcast address of 10.0.0.0/29 (spec.pools[0])',
      far: '10.9.9.9 is outside every range of spec.pools',
      bad: '"10.0.0.02" is not an IP address: leading zeros are not allowed',
    });
  });

  it('a pre-allocated address held by another claim is an error naming both', () => {
    expect(() => allocateForClaim(plan, 'cp-0', [{ address: '10.0.0.2', claimName: 'intruder' }])).toThrow(
      'spec.preAllocations[cp-0]: 10.0.0.2 is held by claim intruder',
    );
  });

  it('one address pre-allocated to two claims: the second one fails', () => {
    const twice = buildMetal3PoolPlan({
      namePrefix: 'p',
      pools: [{ start: 'fd00::10', end: 'fd00::20' }],
      preAllocations: { a: 'fd00::11', b: 'FD00:0::11' },
    });
    expect(twice.preAllocations.get('a')?.text).toBe('fd00::11');
    expect(twice.preAllocationIssues.get('b')?.message).toBe('fd00::11 is pre-allocated to a too');
  });
});

describe('the IPAddress found for a claim is reused', () => {
  it('returns the held address of the claim, even with a different pre-allocation or a full pool', () => {
    const plan = buildMetal3PoolPlan({
      namePrefix: 'p',
      pools: [{ start: '10.0.0.10', end: '10.0.0.10' }],
      preAllocations: { c: '10.0.0.10' },
    });
    expect(allocateForClaim(plan, 'c', [{ address: '10.0.0.77', claimName: 'c' }])).toMatchObject({
      address: '10.0.0.77',
      rangeIndex: -1,
      name: 'p-10-0-0-77',
    });
  });

  it('exhaustion is an error naming the claim', () => {
    const plan = buildMetal3PoolPlan({ namePrefix: 'p', pools: [{ start: '10.0.0.10', end: '10.0.0.10' }] });
    expect(() => allocateForClaim(plan, 'late', [{ address: '10.0.0.10', claimName: 'early' }])).toThrow(
      new Metal3AllocationError('exhausted', 'no free address for claim late in the 1 range(s) of spec.pools'),
    );
  });
});
