import { formatIP, parseIP } from '@tally-ipam/allocator';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeAllocations, poolAddressSpace, type TallyPool } from '../src/webhooks/index.js';

const ipPool = (spec: Record<string, unknown>): TallyPool =>
  ({
    apiVersion: 'ipam.cluster.x-k8s.io/v1alpha1',
    kind: 'TallyIPPool',
    metadata: { name: 'p', namespace: 'ns' },
    spec: { allocationStrategy: 'LowestFree', ...spec },
  }) as TallyPool;

const allocation = (address: string, prefix = 24) => ({ address, prefix, claimName: `claim-${address}` });

describe('describeAllocations', () => {
  it('merges host addresses into ranges, sorted, IPv4 before IPv6', () => {
    const text = describeAllocations(
      ['10.0.0.7', 'fd00::2', '10.0.0.5', '10.0.0.6', '10.0.0.9', 'fd00::1'].map((a) => allocation(a)),
      false,
    );
    expect(text).toBe('10.0.0.5-10.0.0.7 10.0.0.9 fd00::1-fd00::2');
  });

  it('shows prefixes as CIDRs and cuts long lists with a count', () => {
    const prefixes = Array.from({ length: 12 }, (_, index) => allocation(`fd00:0:0:${index.toString(16)}::`, 64));
    expect(describeAllocations(prefixes, true, 3)).toBe('fd00::/64 fd00:0:0:1::/64 fd00:0:0:2::/64 and 9 more');
  });

  it('names every allocated address exactly once (property)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 60 }), (octets) => {
        const text = describeAllocations(
          octets.map((octet) => allocation(`10.1.2.${octet}`)),
          false,
          1_000,
        );
        const covered = new Set<number>();
        for (const item of text.split(' ')) {
          const [first, last = first] = item.split('-').map((part) => Number(parseIP(part ?? '').value & 255n));
          for (let value = first ?? 0; value <= (last ?? 0); value += 1) covered.add(value);
        }
        expect([...covered].sort((a, b) => a - b)).toEqual([...octets].sort((a, b) => a - b));
      }),
    );
  });
});

describe('poolAddressSpace', () => {
  it('rejects allocations the new spec no longer hands out, saying why', () => {
    const built = poolAddressSpace(ipPool({ addresses: ['10.0.0.0/24'], prefix: 24, gateway: '10.0.0.1' }));
    if (!built.ok) throw new Error('spec should build');
    expect(built.space.rejects(allocation('10.0.0.9'))).toBeUndefined();
    expect(built.space.rejects(allocation('10.0.0.1'))).toBe("is the pool's gateway");
    expect(built.space.rejects(allocation('10.0.1.9'))).toBe("is not in the pool's addresses");
    expect(built.space.rejects(allocation('10.0.0.255'))).toBe('is the IPv4 broadcast address of 10.0.0.0/24');
    expect(built.space.rejects(allocation('not-an-ip'))).toMatch(/^is not a valid address/);
    expect(formatIP({ family: 4, value: built.space.addresses.min ?? 0n })).toBe('10.0.0.2');
  });

  it('reports a spec the allocator cannot build, with the field', () => {
    const built = poolAddressSpace(ipPool({ addresses: ['10.0.0.0/24', '10.9.0.1'], prefix: 24 }));
    expect(built.ok).toBe(false);
    if (!built.ok) expect(built.issues.map((issue) => issue.field)).toContain('spec.addresses[1]');
  });
});
