import { tryBuildAddressPool } from '@tally-ipam/allocator';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formatInClusterPoolIssues,
  IN_CLUSTER_SKIP_VALIDATE_DELETE_ANNOTATION,
  type InClusterIPPoolSpec,
  type InClusterPoolRule,
  inClusterAddressSpace,
  validateInClusterIPPoolCreate,
  validateInClusterIPPoolUpdate,
  validateInClusterPoolDelete,
} from '../src/index.js';
import { MAX_ECHOED_VALUE_LENGTH } from '../src/text/clip.js';
import { caseArbitrary, text } from './fixtures/incluster.js';

/**
 * The reference's webhook rules for InClusterIPPool / GlobalInClusterIPPool (v1.1.0,
 * internal/webhooks/inclusterippool.go): one test per rule, then properties.
 */

const valid: InClusterIPPoolSpec = { addresses: ['10.0.0.10-10.0.0.20', '10.0.0.30'], prefix: 24, gateway: '10.0.0.1' };
const rules = (spec: InClusterIPPoolSpec | undefined): InClusterPoolRule[] =>
  validateInClusterIPPoolCreate(spec).map((entry) => entry.rule);

describe('create and update: the spec rules', () => {
  it('a valid pool passes; the default webhook changes nothing (the reference defaults no field)', () => {
    expect(validateInClusterIPPoolCreate(valid)).toEqual([]);
    expect(validateInClusterIPPoolCreate({ addresses: ['fd00::/120'], prefix: 120, gateway: 'fd00::1' })).toEqual([]);
  });

  it.each<[string, InClusterIPPoolSpec | undefined, InClusterPoolRule, string]>([
    ['no addresses', { addresses: [], prefix: 24 }, 'addresses-required', 'spec.addresses'],
    ['no spec at all', undefined, 'addresses-required', 'spec.addresses'],
    ['a negative prefix', { ...valid, prefix: -1 }, 'prefix-valid', 'spec.prefix'],
    ['an unparsable address', { ...valid, addresses: ['10.0.0.256'] }, 'address-parses', 'spec.addresses'],
    ['a backwards range', { ...valid, addresses: ['10.0.0.9-10.0.0.2'] }, 'address-parses', 'spec.addresses'],
    [
      'leading zeros (Go netip refuses them)',
      { ...valid, addresses: ['10.0.0.010'] },
      'address-parses',
      'spec.addresses',
    ],
    [
      'mixed families',
      { ...valid, gateway: '', addresses: ['10.0.0.1', 'fd00::1'] },
      'addresses-one-family',
      'spec.addresses',
    ],
    ['an unparsable gateway', { ...valid, gateway: '10.0.0' }, 'gateway-parses', 'spec.gateway'],
    ['a gateway of the other family', { ...valid, gateway: 'fd00::1' }, 'gateway-family', 'spec.gateway'],
    [
      'an unparsable exclusion',
      { ...valid, excludedAddresses: ['10.0.0.1/33'] },
      'excluded-address-parses',
      'spec.excludedAddresses',
    ],
    [
      'exclusions of both families',
      { addresses: ['10.0.0.0/24', 'fd00::1'].slice(0, 1), prefix: 24, excludedAddresses: ['10.0.0.5', 'fd00::5'] },
      'excluded-one-family',
      'spec.excludedAddresses',
    ],
    [
      'exclusions of the other family',
      { ...valid, excludedAddresses: ['fd00::5'] },
      'excluded-family',
      'spec.excludedAddresses',
    ],
    [
      'a negative grace period',
      { ...valid, addressReuseGracePeriodSeconds: -5 },
      'grace-period-not-negative',
      'spec.addressReuseGracePeriodSeconds',
    ],
    ['an IPv4 prefix above 32', { ...valid, prefix: 33 }, 'prefix-fits-family', 'spec.prefix'],
    [
      'an address outside the subnet of the lowest one',
      { ...valid, addresses: ['10.0.0.10', '10.0.1.10'] },
      'address-in-subnet',
      'spec.addresses',
    ],
  ])('refuses %s', (_what, spec, rule, field) => {
    const issues = validateInClusterIPPoolCreate(spec);
    expect(issues.map((entry) => entry.rule)).toContain(rule);
    expect(issues.find((entry) => entry.rule === rule)?.field).toBe(field);
  });

  it('names the field and the value in the message', () => {
    const message = formatInClusterPoolIssues(validateInClusterIPPoolCreate({ ...valid, addresses: ['10.0.0.300'] }));
    expect(message).toBe('spec.addresses: provided address is not a valid IP, range, nor CIDR (value: "10.0.0.300")');
  });

  it('the subnet is the prefix on the lowest address, not the first written', () => {
    // 10.0.0.200 is written first but 10.0.0.5 is lowest: /25 on it is 10.0.0.0/25, which 10.0.0.200 is outside.
    const issues = validateInClusterIPPoolCreate({ addresses: ['10.0.0.200', '10.0.0.5'], prefix: 25 });
    expect(issues).toEqual([expect.objectContaining({ rule: 'address-in-subnet', value: '"10.0.0.200"' })]);
  });

  it('as in the reference, the prefix and subnet rules wait until every other rule passes', () => {
    expect(rules({ addresses: ['10.0.0.10', '10.0.1.10'], prefix: 33, gateway: 'nope' })).toEqual(['gateway-parses']);
  });

  it('a CIDR with host bits set stands for its whole network; the gateway may lie outside the subnet', () => {
    expect(validateInClusterIPPoolCreate({ addresses: ['10.0.0.77/24'], prefix: 24, gateway: '192.168.0.1' })).toEqual(
      [],
    );
  });

  it('IPv4-mapped IPv6 addresses are IPv6, as in Go', () => {
    expect(rules({ addresses: ['::ffff:10.0.0.1', '10.0.0.2'], prefix: 24 })).toEqual(['addresses-one-family']);
  });

  it('IPv6 zones are read as Go reads them: accepted on IPv6 addresses and range ends, refused elsewhere', () => {
    expect(rules({ addresses: ['fe80::1%eth0'], prefix: 64 })).toEqual([]);
    expect(rules({ addresses: ['fe80::4%a-fe80::9%b'], prefix: 64, gateway: 'fe80::1%eth0' })).toEqual([]);
    // Go splits a range at its first '-', so the last end's zone may hold more dashes.
    expect(rules({ addresses: ['fe80::4-fe80::9%x-y'], prefix: 64 })).toEqual([]);
    expect(rules({ addresses: ['10.0.0.1%eth0'], prefix: 24 })).toEqual(['address-parses']);
    expect(rules({ addresses: ['fe80::1%'], prefix: 64 })).toEqual(['address-parses']);
    expect(rules({ addresses: ['fe80::1%eth0/64'], prefix: 64 })).toEqual(['address-parses']);
    expect(rules({ addresses: ['fe80::1'], prefix: 64, gateway: 'fe80::1%' })).toEqual(['gateway-parses']);
  });

  it('values are cut in messages', () => {
    const long = `10.0.0.1-${'9'.repeat(10_000)}`;
    const [entry] = validateInClusterIPPoolCreate({ addresses: [long], prefix: 24 });
    expect(entry?.value.length).toBeLessThanOrEqual(MAX_ECHOED_VALUE_LENGTH + 10);
  });
});

describe('update: allocated addresses must stay allocatable', () => {
  it('passes while every IPAddress of the pool is still handed out by the new spec', () => {
    expect(validateInClusterIPPoolUpdate(valid, ['10.0.0.10', '10.0.0.30'])).toEqual([]);
  });

  it.each([
    ['the range shrinks', { ...valid, addresses: ['10.0.0.11-10.0.0.20', '10.0.0.30'] }],
    ['the address is excluded', { ...valid, excludedAddresses: ['10.0.0.10'] }],
    ['the address becomes the gateway', { ...valid, gateway: '10.0.0.10' }],
  ])('refuses when %s, naming the address', (_what, spec) => {
    const issues = validateInClusterIPPoolUpdate(spec, ['10.0.0.10', '10.0.0.30']);
    expect(issues.map((entry) => entry.rule)).toEqual(['allocated-addresses-kept']);
    expect(issues[0]?.message).toContain('10.0.0.10');
    expect(issues[0]?.message).not.toContain('10.0.0.30');
  });

  it('skips unparsable addresses and still applies the spec rules first', () => {
    expect(validateInClusterIPPoolUpdate(valid, ['not-an-ip'])).toEqual([]);
    expect(validateInClusterIPPoolUpdate({ ...valid, addresses: [] }, ['10.0.0.10']).map((e) => e.rule)).toEqual([
      'addresses-required',
    ]);
  });
});

describe('delete', () => {
  it('is refused while the pool has IPAddresses', () => {
    expect(validateInClusterPoolDelete(undefined, 0)).toEqual([]);
    expect(validateInClusterPoolDelete({}, 2).map((entry) => entry.rule)).toEqual(['no-addresses-on-delete']);
  });

  it('is allowed with the skip annotation, whatever its value (clusterctl move)', () => {
    expect(validateInClusterPoolDelete({ [IN_CLUSTER_SKIP_VALIDATE_DELETE_ANNOTATION]: '' }, 2)).toEqual([]);
    expect(validateInClusterPoolDelete({ [IN_CLUSTER_SKIP_VALIDATE_DELETE_ANNOTATION]: 'false' }, 2)).toEqual([]);
  });
});

/** Entry texts, valid and not, of both families, to mix into specs. */
const entryText = fc.oneof(
  fc.constantFrom('10.0.0.1', '10.0.0.0/30', '10.0.0.4-10.0.0.9', '10.0.1.1', '10.0.0.1/33', '10.0.0.9-10.0.0.4'),
  fc.constantFrom('fd00::1', 'fd00::/126', 'fd00::4-fd00::9', 'fd00::1:1', '::ffff:10.0.0.1', 'fd00::g', ''),
  fc.constantFrom('fd00::1%eth0', 'fd00::1%', '10.0.0.1%eth0', 'fd00::1%eth0/126', 'fd00::4%a-fd00::9%b'),
  fc.string({ maxLength: 12 }),
);

describe('properties', () => {
  it('every generated valid spec passes create, and an update keeping its allocated addresses passes', () => {
    fc.assert(
      fc.property(caseArbitrary, fc.nat(), (testCase, pick) => {
        expect(validateInClusterIPPoolCreate(testCase.spec)).toEqual([]);
        const space = inClusterAddressSpace(testCase.spec);
        if (!space.ok) throw new Error('expected a valid spec');
        const values = space.pool.allocatable.intervals.flatMap((interval) =>
          Array.from({ length: Number(interval.last - interval.first) + 1 }, (_, at) => interval.first + BigInt(at)),
        );
        const chosen = values[pick % Math.max(1, values.length)];
        const inUse = chosen === undefined ? [] : [text(testCase.family, chosen)];
        expect(validateInClusterIPPoolUpdate(testCase.spec, inUse)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('admission and the allocator agree: a spec passes exactly when Tally can build its address space', () => {
    fc.assert(
      fc.property(
        fc.array(entryText, { maxLength: 4 }),
        fc.array(entryText, { maxLength: 2 }),
        fc.integer({ min: 0, max: 128 }),
        fc.option(entryText, { nil: undefined }),
        (addresses, excludedAddresses, prefix, gateway) => {
          const spec: InClusterIPPoolSpec = { addresses, excludedAddresses, prefix, ...(gateway ? { gateway } : {}) };
          const admitted = validateInClusterIPPoolCreate(spec).length === 0;
          expect(admitted).toBe(inClusterAddressSpace(spec).ok);
          // Without zones the mapping passes the spec to the allocator unchanged (but for point-to-point exclusions).
          if (!JSON.stringify(spec).includes('%')) expect(admitted).toBe(tryBuildAddressPool(spec).ok);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('every refusal names a spec field or metadata, and carries the value cut to the echo limit', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(entryText, fc.string({ minLength: 300, maxLength: 400 })), { maxLength: 3 }),
        fc.integer({ min: -3, max: 140 }),
        (addresses, prefix) => {
          for (const entry of validateInClusterIPPoolCreate({ addresses, prefix })) {
            expect(entry.field).toMatch(/^spec\.(addresses|prefix|gateway|excludedAddresses)$/);
            expect(entry.value.length).toBeLessThanOrEqual(MAX_ECHOED_VALUE_LENGTH + 10);
            expect(entry.message.length).toBeGreaterThan(0);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
