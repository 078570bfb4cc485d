import fc from 'fast-check';
import { Address4, Address6 } from 'ip-address';
import { describe, expect, it } from 'vitest';
import { parseAddressEntry, parseCIDR } from '../src/entry.js';
import { AddressParseError, formatIP, isIPv4Mapped, parseIP } from '../src/ip.js';

const ipv4Value = fc.bigInt({ min: 0n, max: (1n << 32n) - 1n });
const ipv6Value = fc.oneof(
  fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }),
  // Values with long zero runs and IPv4-mapped values are where formatting rules bite.
  fc
    .array(fc.constantFrom<bigint>(0n, 0n, 0n, 1n, 0xffffn, 0xabcn), { minLength: 8, maxLength: 8 })
    .map((groups) => groups.reduce((value, group) => (value << 16n) | group, 0n)),
  ipv4Value.map((v4) => (0xffffn << 32n) | v4),
);

const STRICT_DOTTED_QUAD = /^(0|[1-9][0-9]{0,2})(\.(0|[1-9][0-9]{0,2})){3}$/;

describe('parse(format(x)) round-trips and agrees with the ip-address oracle', () => {
  it('IPv4', () => {
    fc.assert(
      fc.property(ipv4Value, (value) => {
        const text = formatIP({ family: 4, value });
        expect(parseIP(text)).toEqual({ family: 4, value });
        expect(text).toBe(Address4.fromBigInt(value).correctForm());
      }),
    );
  });

  it('IPv6 (RFC 5952 text; IPv4-mapped in mixed notation)', () => {
    fc.assert(
      fc.property(ipv6Value, (value) => {
        const ip = { family: 6 as const, value };
        const text = formatIP(ip);
        expect(parseIP(text)).toEqual(ip);
        expect(new Address6(text).bigInt()).toBe(value);
        if (!isIPv4Mapped(ip)) expect(text).toBe(Address6.fromBigInt(value).correctForm());
        expect(text).toBe(text.toLowerCase());
      }),
    );
  });
});

describe('parsing agrees with the oracle on generated text', () => {
  it('accepts every address fast-check considers valid IPv4, with the oracle value', () => {
    fc.assert(
      fc.property(fc.ipV4(), (text) => {
        expect(parseIP(text).value).toBe(new Address4(text).bigInt());
      }),
    );
  });

  it('accepts every IPv6 text fast-check generates, with the oracle value', () => {
    fc.assert(
      fc.property(fc.ipV6(), (text) => {
        const ip = parseIP(text);
        expect(ip.family).toBe(6);
        expect(ip.value).toBe(new Address6(text).bigInt());
      }),
    );
  });

  it('accepts an extended IPv4 form only when it is a strict dotted quad', () => {
    fc.assert(
      fc.property(fc.ipV4Extended(), (text) => {
        if (STRICT_DOTTED_QUAD.test(text)) {
          expect(parseIP(text).value).toBe(new Address4(text).bigInt());
        } else {
          expect(() => parseIP(text)).toThrow(AddressParseError);
        }
      }),
    );
  });

  it('never throws anything but AddressParseError on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEFx:.%/- '.split('')) }), (text) => {
        for (const parse of [parseIP, parseCIDR, parseAddressEntry]) {
          try {
            parse(text);
          } catch (error) {
            expect(error).toBeInstanceOf(AddressParseError);
            expect((error as AddressParseError).entry).toBe(text);
          }
        }
      }),
    );
  });
});

describe('CIDR masking', () => {
  it('an unmasked CIDR covers exactly its network', () => {
    fc.assert(
      fc.property(ipv6Value, fc.integer({ min: 0, max: 128 }), (value, prefixLength) => {
        const text = `${formatIP({ family: 6, value })}/${prefixLength}`;
        const entry = parseAddressEntry(text);
        const size = 1n << BigInt(128 - prefixLength);
        expect(entry.last - entry.first + 1n).toBe(size);
        expect(entry.first % size).toBe(0n);
        expect(value >= entry.first && value <= entry.last).toBe(true);
        const oracle = new Address6(text);
        expect(entry.first).toBe(oracle.startAddress().bigInt());
        expect(entry.last).toBe(oracle.endAddress().bigInt());
      }),
    );
  });
});

describe('IPv6 validity agrees with the oracle on arbitrary hex-and-colon text', () => {
  it('accepts exactly what ip-address accepts, with the same value', () => {
    const unit = fc.constantFrom(...'0123456789abcdefABCDEF:::::'.split(''));
    const group = fc.oneof(fc.constant(''), fc.stringMatching(/^[0-9a-fA-F]{1,5}$/));
    // Near-valid text: 1..10 groups (some empty, some too long) joined by ':'.
    const nearValid = fc.array(group, { minLength: 1, maxLength: 10 }).map((groups) => groups.join(':'));
    let accepted = 0;
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit, minLength: 1, maxLength: 40 }), nearValid), (text) => {
        let ours: bigint | undefined;
        try {
          ours = parseIP(text).value;
        } catch (error) {
          expect(error).toBeInstanceOf(AddressParseError);
        }
        expect(ours !== undefined).toBe(Address6.isValid(text));
        if (ours !== undefined) {
          accepted += 1;
          expect(ours).toBe(new Address6(text).bigInt());
        }
      }),
      { numRuns: 3000 },
    );
    // Guard against a generator that only ever produces invalid text.
    expect(accepted).toBeGreaterThan(50);
  });
});
