import { formatIP, ipFromValue } from '@tally-ipam/allocator';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addressEntryKey, parseEntryKey, prefixEntryKey } from '../src/index.js';

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function isValidName(name: string): boolean {
  return name.length <= 253 && DNS1123_SUBDOMAIN.test(name) && name.split('.').every((label) => label.length <= 63);
}

const ipv4 = fc.bigInt({ min: 0n, max: 2n ** 32n - 1n }).map((value) => ipFromValue(4, value));
// Bias towards the shapes that stress the encoding: runs of zero groups, trailing "::", IPv4-mapped addresses.
const ipv6 = fc
  .oneof(
    fc.bigInt({ min: 0n, max: 2n ** 128n - 1n }),
    fc.bigInt({ min: 0n, max: 2n ** 16n - 1n }).map((high) => high << 112n),
    fc.bigInt({ min: 0n, max: 2n ** 32n - 1n }).map((low) => 0xffff00000000n | low),
    fc
      .array(fc.constantFrom(0n, 1n, 0xffffn), { minLength: 8, maxLength: 8 })
      .map((groups) => groups.reduce<bigint>((acc, group) => (acc << 16n) | group, 0n)),
  )
  .map((value) => ipFromValue(6, value));
const anyIP = fc.oneof(ipv4, ipv6);

describe('address holding names', () => {
  it('are valid DNS-1123 subdomains and decode back to the address (so distinct addresses get distinct names)', () => {
    fc.assert(
      fc.property(anyIP, (ip) => {
        const name = addressEntryKey(ip);
        expect(isValidName(name), name).toBe(true);
        expect(parseEntryKey(name)).toEqual({ kind: 'address', address: formatIP(ip) });
      }),
      { numRuns: 5000 },
    );
  });

  it('distinct addresses never share a name, across families and against prefix names', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(anyIP, { minLength: 2, maxLength: 60, selector: (ip) => `${ip.family}/${ip.value}` }),
        (ips) => {
          const names = ips.map((ip) => addressEntryKey(ip));
          expect(new Set(names).size).toBe(ips.length);
          for (const ip of ips) {
            const prefixName = prefixEntryKey(ip, ip.family === 4 ? 32 : 128);
            expect(names).not.toContain(prefixName);
          }
        },
      ),
    );
  });

  it('prefix names are valid and decode back to network and length', () => {
    fc.assert(
      fc.property(anyIP, fc.nat({ max: 128 }), (ip, length) => {
        const prefixLength = ip.family === 4 ? length % 33 : length;
        const name = prefixEntryKey(ip, prefixLength);
        expect(isValidName(name), name).toBe(true);
        expect(parseEntryKey(name)).toEqual({ kind: 'prefix', address: formatIP(ip), prefixLength });
      }),
      { numRuns: 3000 },
    );
  });

  it('reads as the address: examples', () => {
    expect(addressEntryKey('10.0.0.5')).toBe('ip4-10.0.0.5');
    expect(addressEntryKey('fd00::1')).toBe('ip6-fd00--1');
    expect(addressEntryKey('FD00:0:0::1')).toBe('ip6-fd00--1');
    expect(addressEntryKey('fd00::')).toBe('ip6-fd00--0');
    expect(addressEntryKey('::')).toBe('ip6---0');
    expect(addressEntryKey('::ffff:10.0.0.1')).toBe('ip6---ffff-10.0.0.1');
    expect(prefixEntryKey('10.0.1.0', 24)).toBe('net4-10.0.1.0.24');
    expect(prefixEntryKey('fd00:1::', 64)).toBe('net6-fd00-1--0.64');
    expect(parseEntryKey('something-else')).toBeUndefined();
    expect(parseEntryKey('ip4-010.0.0.1')).toBeUndefined();
  });
});
