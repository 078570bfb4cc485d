import { parseMetal3IPPool } from '@tally-ipam/api-types';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Metal3PoolSpecInput, type Metal3RangeInput, translateIPPoolSpec } from '../src/index.js';

/**
 * What admission accepts and what the translation serves must agree: a spec the CRD rules (their zod twins) refuse is
 * never served, and a spec they accept is served unless it hits one of the few cross-field problems only the
 * translation sees (listed below, each documented in the README and the design note).
 */
const TRANSLATION_ONLY = [
  /is not inside the pool's subnet/, // a range crossing the network of its own prefix
  /is IPv[46] but spec\.pools\[\d+\] is IPv[46]/, // the pool-level gateway of the other family than a range
  /is longer than 32, the maximum for the IPv4 range/, // the pool-level prefix on an IPv4 range
  /leaves no address after the one it names/, // a subnet-only range whose written address is its last
  /is outside the subnet/, // subnet-only: the written address plus one leaves the subnet
];

const FAMILY_VALUES = {
  4: {
    addresses: ['10.0.0.0', '10.0.0.1', '10.0.0.9', '10.0.0.10', '10.0.0.255', '10.0.1.5'],
    subnets: ['10.0.0.0/24', '10.0.0.0/30', '10.0.0.255/24', '10.0.1.0/24'],
    gateway: '10.0.0.1',
    other: 'fd00::1',
  },
  6: {
    addresses: ['fd00::', 'fd00::1', 'fd00::1:0:0:9', 'fd00::ffff', 'fd00:1::1', 'FD00::A'],
    subnets: ['fd00::/64', 'fd00::/120', 'fd00:1::/64'],
    gateway: 'fd00::1',
    other: '10.0.0.1',
  },
} as const;
const INVALID_ADDRESSES = ['10.0.0.010', 'nonsense', '10.0.0.0/24'];
const INVALID_SUBNETS = ['10.0.0.0/33', 'fd00::/129', '10.0.0.0'];
/** Mostly values of the range's family, sometimes of the other one, rarely not an address at all. */
const mostly = (usual: readonly string[], others: readonly string[]) =>
  fc.oneof({ arbitrary: fc.constantFrom(...usual), weight: 12 }, { arbitrary: fc.constantFrom(...others), weight: 1 });
const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined, freq: 2 });

const rangeArbitrary: fc.Arbitrary<Metal3RangeInput> = fc.constantFrom(4 as const, 6 as const).chain((family) => {
  const values = FAMILY_VALUES[family];
  return fc
    .record({
      start: maybe(mostly(values.addresses, [...INVALID_ADDRESSES, values.other])),
      end: maybe(mostly(values.addresses, [...INVALID_ADDRESSES, values.other])),
      subnet: maybe(mostly(values.subnets, INVALID_SUBNETS)),
      prefix: maybe(fc.constantFrom(0, 16, 24, 32, 33, 64, 128)),
      gateway: maybe(mostly([values.gateway], [values.other, 'bad'])),
    })
    .map((fields) => Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)));
});

const specArbitrary = fc
  .record({
    pools: fc.array(rangeArbitrary, { minLength: 1, maxLength: 2 }),
    prefix: maybe(fc.constantFrom(0, 24, 64, 129)),
    gateway: maybe(fc.constantFrom('10.0.0.1', 'fd00::1')),
  })
  .map(
    (fields): Metal3PoolSpecInput => ({
      namePrefix: 'pool',
      ...Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)),
    }),
  );

describe('admission (the CRD rules, through their zod twins) and the translation agree', () => {
  it('never serves what admission refuses; refuses what admission accepts only for the listed reasons', () => {
    const verdicts = { bothRefuse: 0, bothAccept: 0, translationOnly: 0 };
    fc.assert(
      fc.property(specArbitrary, (spec) => {
        const admitted = parseMetal3IPPool({
          apiVersion: 'ipam.metal3.io/v1alpha1',
          kind: 'IPPool',
          metadata: { name: 'p' },
          spec,
        }).success;
        const translation = translateIPPoolSpec(spec);
        if (!admitted) {
          expect(translation.ok, JSON.stringify(spec)).toBe(false);
          verdicts.bothRefuse += 1;
        } else if (translation.ok) {
          verdicts.bothAccept += 1;
        } else {
          for (const issue of translation.issues) {
            expect(
              TRANSLATION_ONLY.some((pattern) => pattern.test(issue.message)),
              `${JSON.stringify(spec)}: ${issue.field}: ${issue.message}`,
            ).toBe(true);
          }
          verdicts.translationOnly += 1;
        }
      }),
      { numRuns: 3000 },
    );
    // Each branch must actually be reached for the property to say anything (typical counts, 3,000 runs: about
    // 2,550 / 310 / 140; the bounds are far below them so that no seed makes the test fail).
    expect(verdicts.bothRefuse).toBeGreaterThan(100);
    expect(verdicts.bothAccept).toBeGreaterThan(100);
    expect(verdicts.translationOnly).toBeGreaterThan(10);
  });
});
