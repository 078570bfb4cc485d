import { formatIP, type IP, parseIP } from '@tally-ipam/allocator';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  allocateForClaim,
  type HeldAddress,
  ipAddressName,
  Metal3AllocationError,
  type Metal3PoolSpecInput,
  type Metal3RangeInput,
  translateIPPoolSpec,
} from '../src/index.js';

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const v4 = (network: number, host: number): string => `10.${network}.0.${host}`;

/** Ranges in 10.0.0.0/24 … 10.3.0.0/24: written as start/end, start/end/subnet or subnet alone, with overrides. */
const rangeArbitrary: fc.Arbitrary<Metal3RangeInput> = fc
  .record({
    network: fc.integer({ min: 0, max: 3 }),
    first: fc.integer({ min: 1, max: 250 }),
    length: fc.integer({ min: 0, max: 12 }),
    form: fc.constantFrom('start-end', 'start-end-subnet', 'subnet'),
    prefix: fc.option(fc.constantFrom(24, 25, 16), { nil: undefined }),
    gateway: fc.option(fc.integer({ min: 1, max: 254 }), { nil: undefined }),
    dnsServers: fc.option(fc.constantFrom(['10.9.0.53'], [], ['10.9.0.53', '10.9.0.54']), { nil: undefined }),
  })
  .map(({ network, first, length, form, prefix, gateway, dnsServers }) => {
    const last = Math.min(first + length, 254);
    const range: Metal3RangeInput = {
      ...(form === 'subnet' ? {} : { start: v4(network, first), end: v4(network, last) }),
      ...(form === 'start-end' ? {} : { subnet: `10.${network}.0.0/${form === 'subnet' ? 28 : 24}` }),
      ...(prefix === undefined || form === 'subnet' ? {} : { prefix }),
      ...(gateway === undefined ? {} : { gateway: v4(network, form === 'subnet' ? gateway % 16 : gateway) }),
      ...(dnsServers === undefined ? {} : { dnsServers }),
    };
    return range;
  });

const specArbitrary: fc.Arbitrary<Metal3PoolSpecInput> = fc
  .record({
    pools: fc.array(rangeArbitrary, { minLength: 1, maxLength: 4 }),
    prefix: fc.option(fc.constantFrom(24, 20), { nil: undefined }),
    gateway: fc.option(
      fc.integer({ min: 1, max: 254 }).map((host) => v4(0, host)),
      { nil: undefined },
    ),
    dnsServers: fc.option(fc.constant(['8.8.8.8']), { nil: undefined }),
    preAllocations: fc.dictionary(
      fc.constantFrom('pre-0', 'pre-1', 'pre-2', 'pre-3'),
      // Half the hosts come from two values, so two claims often name one address.
      fc
        .tuple(fc.integer({ min: 0, max: 3 }), fc.oneof(fc.constantFrom(3, 5), fc.integer({ min: 0, max: 255 })))
        .map(([n, h]) => v4(n, h)),
      { maxKeys: 4 },
    ),
  })
  .map((fields) => {
    const spec: Metal3PoolSpecInput = {
      namePrefix: 'pool',
      pools: fields.pools,
      preAllocations: fields.preAllocations,
    };
    return {
      ...spec,
      ...(fields.prefix === undefined ? {} : { prefix: fields.prefix }),
      ...(fields.gateway === undefined ? {} : { gateway: fields.gateway }),
      ...(fields.dnsServers === undefined ? {} : { dnsServers: fields.dnsServers }),
    };
  });

const claimsArbitrary = fc.array(
  fc.oneof(
    fc.constantFrom('pre-0', 'pre-1', 'pre-2', 'pre-3'),
    fc.integer({ min: 0, max: 60 }).map((n) => `claim-${n}`),
  ),
  { minLength: 1, maxLength: 60 },
);

const ipOf = (text: string): IP => parseIP(text);
const same = (a: IP, b: IP): boolean => a.family === b.family && a.value === b.value;

function expectedPrefix(spec: Metal3PoolSpecInput, range: Metal3RangeInput): number | undefined {
  const subnetLength = range.subnet === undefined ? undefined : Number(range.subnet.split('/')[1]);
  return range.prefix || spec.prefix || subnetLength;
}

describe('allocating claims one after another from a random IPPool spec', () => {
  it('hands out addresses inside their range, with the range’s prefix, gateway and DNS servers, each at most once', () => {
    let served = 0;
    fc.assert(
      fc.property(specArbitrary, claimsArbitrary, (spec, claims) => {
        const translation = translateIPPoolSpec(spec);
        if (!translation.ok) return; // a spec with an error is refused as a whole (the table tests cover those)
        const { plan } = translation;
        const held: HeldAddress[] = [];
        const gateways = [spec.gateway, ...(spec.pools ?? []).map((range) => range.gateway)]
          .filter((text): text is string => text !== undefined)
          .map(ipOf);
        const preAllocated = Object.entries(spec.preAllocations ?? {}).map(([claim, text]) => ({
          claim,
          ip: ipOf(text),
        }));
        for (const claim of claims) {
          let allocation: ReturnType<typeof allocateForClaim>;
          try {
            allocation = allocateForClaim(plan, claim, held);
          } catch (error) {
            if (!(error instanceof Metal3AllocationError)) throw error;
            if (error.reason === 'pre-allocation-held') throw error; // no other claim can ever hold one
            continue;
          }
          const ip = ipOf(allocation.address);
          const own = held.find((entry) => entry.claimName === claim);
          if (own !== undefined) {
            expect(allocation.address).toBe(own.address);
            continue;
          }
          // Inside the range it names, with that range's written fields.
          const range = plan.ranges.find((r) => r.index === allocation.rangeIndex);
          expect(range).toBeDefined();
          if (range === undefined) return;
          expect(ip.value >= range.first && ip.value <= range.last).toBe(true);
          const input = spec.pools?.[range.index] ?? {};
          expect(allocation.prefix).toBe(expectedPrefix(spec, input));
          expect(allocation.gateway).toBe(input.gateway ?? spec.gateway);
          expect(allocation.dnsServers).toEqual(
            (input.dnsServers ?? []).length > 0 ? input.dnsServers : (spec.dnsServers ?? []),
          );
          // Never a gateway. A claim with an honoured pre-allocation gets exactly it; any other address a
          // pre-allocation names (even one refused, say as another claim's duplicate) is never handed out.
          expect(gateways.some((gateway) => same(gateway, ip))).toBe(false);
          const honoured = plan.preAllocations.get(claim);
          if (honoured !== undefined) expect(same(honoured.address, ip)).toBe(true);
          for (const { ip: reserved } of preAllocated) {
            if (honoured === undefined || !same(honoured.address, reserved)) expect(same(reserved, ip)).toBe(false);
          }
          // Never twice, and named from namePrefix and the address.
          expect(held.some((entry) => same(ipOf(entry.address), ip))).toBe(false);
          expect(allocation.name).toBe(ipAddressName('pool', allocation.address));
          held.push({ address: allocation.address, claimName: claim });
          served += 1;
        }
      }),
      { numRuns: 300 },
    );
    // The property must have been exercised, not vacuously true.
    expect(served).toBeGreaterThan(1000);
  });

  it('fills every allocatable address of every range exactly once, then reports exhaustion', () => {
    fc.assert(
      fc.property(specArbitrary, (spec) => {
        const translation = translateIPPoolSpec({ ...spec, preAllocations: {} });
        if (!translation.ok) return;
        const { plan } = translation;
        const distinct = new Set<string>();
        for (const range of plan.ranges) {
          for (const value of range.pool.allocatable.values()) distinct.add(formatIP({ family: 4, value }));
        }
        const held: HeldAddress[] = [];
        for (let n = 0; n < distinct.size; n += 1) {
          held.push({ address: allocateForClaim(plan, `c-${n}`, held).address, claimName: `c-${n}` });
        }
        expect(new Set(held.map((entry) => entry.address))).toEqual(distinct);
        expect(() => allocateForClaim(plan, 'one-too-many', held)).toThrow(Metal3AllocationError);
      }),
      { numRuns: 200 },
    );
  });
});

describe('ipAddressName', () => {
  const prefixArbitrary = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/);
  const canonical = (text: string) => formatIP(parseIP(text));

  it('is a valid object name for a valid prefix and any canonical address, and one-to-one within a family', () => {
    fc.assert(
      fc.property(
        prefixArbitrary,
        fc.oneof(fc.ipV4().map(canonical), fc.ipV6().map(canonical)),
        fc.oneof(fc.ipV4().map(canonical), fc.ipV6().map(canonical)),
        (prefix, a, b) => {
          const name = ipAddressName(prefix, a);
          expect(name).toMatch(DNS1123_SUBDOMAIN);
          expect(name.length).toBeLessThanOrEqual(253);
          if (a !== b && a.includes(':') === b.includes(':')) expect(ipAddressName(prefix, b)).not.toBe(name);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('matches Metal3’s names, trailing dashes trimmed', () => {
    expect(ipAddressName('provisioning', '192.168.0.11')).toBe('provisioning-192-168-0-11');
    expect(ipAddressName('pool-1', 'fd00::1')).toBe('pool-1-fd00--1');
    expect(ipAddressName('pool-1', 'fd00::')).toBe('pool-1-fd00');
    expect(ipAddressName('p', '::')).toBe('p');
  });
});
