import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  defaultInClusterPrefixPoolSpec,
  effectiveAllocationPrefixLength,
  type InClusterPoolRule,
  type InClusterPrefixPoolSpecInput,
  inClusterPrefixPoolWarnings,
  validateInClusterPrefixPoolSpec,
  validateInClusterPrefixPoolSpecUpdate,
} from '../src/index.js';
import { MAX_ECHOED_VALUE_LENGTH } from '../src/text/clip.js';

/** The reference's webhook rules for InClusterPrefixPool / GlobalInClusterPrefixPool (v1.1.0): one test per rule. */

const valid: InClusterPrefixPoolSpecInput = { prefixes: ['fd00::/48'], allocationPrefixLength: 64, gateway: 'fd00::1' };
const rules = (spec: InClusterPrefixPoolSpecInput | undefined): InClusterPoolRule[] =>
  validateInClusterPrefixPoolSpec(spec).map((entry) => entry.rule);

describe('defaulting', () => {
  it('0 or unset is 64; any other value stays', () => {
    expect(effectiveAllocationPrefixLength(undefined)).toBe(64);
    expect(effectiveAllocationPrefixLength(0)).toBe(64);
    expect(effectiveAllocationPrefixLength(80)).toBe(80);
    expect(defaultInClusterPrefixPoolSpec({ prefixes: ['fd00::/48'], allocationPrefixLength: 0 })).toEqual({
      prefixes: ['fd00::/48'],
      allocationPrefixLength: 64,
    });
  });
});

describe('the spec rules', () => {
  it('a valid pool passes; IPv4-mapped IPv6 prefixes are IPv6, as in Go', () => {
    expect(rules(valid)).toEqual([]);
    expect(rules({ prefixes: ['::ffff:10.0.0.0/120'], allocationPrefixLength: 124 })).toEqual([]);
  });

  it.each<[string, InClusterPrefixPoolSpecInput | undefined, InClusterPoolRule[]]>([
    ['no prefixes (and nothing else is checked)', { prefixes: [], gateway: '10.0.0.1' }, ['prefixes-required']],
    ['no spec', undefined, ['prefixes-required']],
    [
      'an allocation length of 129 (and nothing else)',
      { prefixes: ['x'], allocationPrefixLength: 129 },
      ['allocation-length-range'],
    ],
    [
      'a negative allocation length',
      { prefixes: ['fd00::/48'], allocationPrefixLength: -1 },
      ['allocation-length-range'],
    ],
    ['an unparsable prefix', { prefixes: ['fd00::1'] }, ['prefix-parses']],
    ['a zoned prefix', { prefixes: ['fd00::%eth0/48'] }, ['prefix-parses']],
    ['an IPv4 prefix', { prefixes: ['10.0.0.0/8'] }, ['prefix-ipv6']],
    ['host bits set', { prefixes: ['fd00::1/48'] }, ['prefix-aligned']],
    ['a prefix longer than the allocation length', { prefixes: ['fd00::/80'] }, ['prefix-length-fits']],
    ['unaligned and too long at once', { prefixes: ['fd00::1/80'] }, ['prefix-aligned', 'prefix-length-fits']],
    ['an unparsable gateway', { ...valid, gateway: 'fd00::g' }, ['prefix-gateway-parses']],
    ['an IPv4 gateway', { ...valid, gateway: '10.0.0.1' }, ['prefix-gateway-ipv6']],
    ['an unparsable exclusion', { ...valid, excludedPrefixes: ['fd00::/129'] }, ['excluded-prefix-parses']],
    ['an IPv4 exclusion', { ...valid, excludedPrefixes: ['10.0.0.1-10.0.0.9'] }, ['excluded-prefix-ipv6']],
  ])('refuses %s', (_what, spec, expected) => {
    expect(rules(spec)).toEqual(expected);
  });

  it('accepts a zoned gateway and zoned exclusions, as Go parses them', () => {
    expect(
      rules({ ...valid, gateway: 'fd00::1%eth0', excludedPrefixes: ['fd00::5%a-fd00::9%b', 'fd00::7%x'] }),
    ).toEqual([]);
  });

  it('refusals name the field and carry the value, cut (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom('fd00::/48', '10.0.0.0/8', 'fd00::1/48'), fc.string({ maxLength: 400 })), {
          minLength: 1,
          maxLength: 3,
        }),
        fc.integer({ min: 0, max: 130 }),
        (prefixes, allocationPrefixLength) => {
          for (const entry of validateInClusterPrefixPoolSpec({ prefixes, allocationPrefixLength })) {
            expect(entry.field).toMatch(/^spec\.(prefixes|allocationPrefixLength)$/);
            expect(entry.value.length).toBeLessThanOrEqual(MAX_ECHOED_VALUE_LENGTH + 10);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('update', () => {
  it('the effective allocation length is immutable: unset and 64 are the same', () => {
    expect(validateInClusterPrefixPoolSpecUpdate({ prefixes: ['fd00::/48'] }, valid)).toEqual([]);
    const issues = validateInClusterPrefixPoolSpecUpdate(valid, { ...valid, allocationPrefixLength: 96 });
    expect(issues.map((entry) => entry.rule)).toEqual(['allocation-length-immutable']);
    expect(issues[0]?.message).toContain('was 64');
  });

  it('the spec rules come first', () => {
    expect(validateInClusterPrefixPoolSpecUpdate(valid, { prefixes: [] }).map((entry) => entry.rule)).toEqual([
      'prefixes-required',
    ]);
  });
});

describe('warnings', () => {
  it('none below /128', () => {
    expect(inClusterPrefixPoolWarnings(valid)).toEqual([]);
  });

  it('/128: always the single-address warning; the gateway warning when it lies inside the prefixes', () => {
    const host = { prefixes: ['fd00::/120'], allocationPrefixLength: 128 };
    expect(inClusterPrefixPoolWarnings(host)).toHaveLength(1);
    expect(inClusterPrefixPoolWarnings({ ...host, gateway: 'fd00::1' })).toHaveLength(2);
    expect(inClusterPrefixPoolWarnings({ ...host, gateway: 'fd01::1' })).toHaveLength(1);
    // The reference's IPSet holds no zoned address, so a zoned gateway never collides.
    expect(inClusterPrefixPoolWarnings({ ...host, gateway: 'fd00::1%eth0' })).toHaveLength(1);
  });
});
