import { describe, expect, it } from 'vitest';
import { parseAddressEntry, parseCIDR, parseIPRange } from '../src/entry.js';
import { AddressParseError, formatIP, isIPv4Mapped, isValidPrefixLength, parseIP } from '../src/ip.js';

function parseError(parse: () => unknown): AddressParseError {
  try {
    parse();
  } catch (error) {
    if (error instanceof AddressParseError) return error;
    throw error;
  }
  throw new Error('expected an AddressParseError, but parsing succeeded');
}

describe('parseIP', () => {
  it.each([
    ['0.0.0.0', 0n],
    ['10.0.0.1', 0x0a000001n],
    ['255.255.255.255', 0xffffffffn],
  ])('parses IPv4 %s', (text, value) => {
    expect(parseIP(text)).toEqual({ family: 4, value });
  });

  it.each([
    ['::', 0n],
    ['::1', 1n],
    ['2001:db8::1', 0x20010db8000000000000000000000001n],
    ['2001:DB8:0:0:0:0:0:1', 0x20010db8000000000000000000000001n],
    ['0001:0db8::', 0x00010db8000000000000000000000000n],
    ['1:2:3:4:5:6:7::', 0x00010002000300040005000600070000n],
    ['::2:3:4:5:6:7:8', 0x00000002000300040005000600070008n],
    ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', (1n << 128n) - 1n],
    ['::ffff:10.0.0.1', 0xffff0a000001n],
    ['::1.2.3.4', 0x01020304n],
    ['64:ff9b::192.0.2.33', 0x0064ff9b0000000000000000c0000221n],
    ['1:2:3:4:5:6:1.2.3.4', 0x00010002000300040005000601020304n],
  ])('parses IPv6 %s', (text, value) => {
    expect(parseIP(text)).toEqual({ family: 6, value });
  });

  it.each([
    ['010.0.0.1', 'leading zeros are not allowed'],
    ['10.0.0.01', 'leading zeros are not allowed'],
    ['0x0a.0.0.1', 'hexadecimal notation is not allowed'],
    ['10.1', 'an IPv4 address has exactly 4 dot-separated decimal octets, found 2'],
    ['10.0.0.1.5', 'an IPv4 address has exactly 4 dot-separated decimal octets, found 5'],
    ['10.0.0.256', 'octet 256 is greater than 255'],
    ['10..0.1', 'empty octet'],
    ['10.0.0.+1', 'octet "+1" is not a decimal number'],
    ['', 'empty string'],
    [' 10.0.0.1', 'leading or trailing whitespace is not allowed'],
    ['10.0.0.1\n', 'leading or trailing whitespace is not allowed'],
    ['10.0. 0.1', 'whitespace is not allowed'],
    ['fe80::1%eth0', 'zone IDs (%…) are not allowed'],
    ['1::2::3', "'::' may appear only once"],
    ['12345::', 'group "12345" is not 1 to 4 hexadecimal digits'],
    ['1:2:3:4:5:6:7:8:9', "expected 8 groups, found 9 (and no '::')"],
    ['1:2:3:4:5:6:7', "expected 8 groups, found 7 (and no '::')"],
    ['1::2:3:4:5:6:7:8', "'::' must stand for at least one zero group"],
    [':1::', "misplaced ':' (empty group)"],
    ['1:::2', "misplaced ':' (empty group)"],
    ['g::1', 'unexpected character "g"'],
    ['::ffff:010.0.0.1', 'embedded IPv4 part "010.0.0.1": leading zeros are not allowed'],
    ['::ffff:1.2.3', 'embedded IPv4 part "1.2.3": an IPv4 address has exactly 4 dot-separated decimal octets, found 3'],
    ['1.2.3.4::', 'embedded IPv4 part "": an IPv4 address has exactly 4 dot-separated decimal octets, found 1'],
    ['10.0.0.0/8', 'octet "0/8" is not a decimal number'],
  ])('rejects %j: %s', (text, reason) => {
    const error = parseError(() => parseIP(text));
    expect(error.entry).toBe(text);
    expect(error.reason).toBe(reason);
    expect(error.message).toBe(`invalid address "${text}": ${reason}`);
  });

  it('names the entry and the reason in the message', () => {
    expect(() => parseIP('010.0.0.1')).toThrow('invalid address "010.0.0.1": leading zeros are not allowed');
  });
});

describe('formatIP', () => {
  it.each([
    ['10.0.0.1', '10.0.0.1'],
    ['0.0.0.0', '0.0.0.0'],
    ['::', '::'],
    ['::1', '::1'],
    ['1::', '1::'],
    ['2001:DB8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
    ['0:0:1:0:0:0:0:0', '0:0:1::'],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['1:0:0:2:0:0:0:3', '1:0:0:2::3'],
    ['::ffff:10.0.0.1', '::ffff:10.0.0.1'],
    ['::ffff:a00:1', '::ffff:10.0.0.1'],
    ['::1.2.3.4', '::102:304'],
    ['64:ff9b::192.0.2.33', '64:ff9b::c000:221'],
  ])('formats %s as %s', (text, canonical) => {
    expect(formatIP(parseIP(text))).toBe(canonical);
  });

  it('keeps an IPv4-mapped address IPv6', () => {
    const mapped = parseIP('::ffff:10.0.0.1');
    expect(mapped.family).toBe(6);
    expect(isIPv4Mapped(mapped)).toBe(true);
    expect(isIPv4Mapped(parseIP('10.0.0.1'))).toBe(false);
    expect(isIPv4Mapped(parseIP('::fffe:10.0.0.1'))).toBe(false);
  });

  it('rejects a value that does not fit the family', () => {
    expect(() => formatIP({ family: 4, value: 1n << 32n })).toThrow(RangeError);
    expect(() => formatIP({ family: 6, value: -1n })).toThrow(RangeError);
  });
});

describe('parseCIDR', () => {
  it('masks an unmasked CIDR to its whole network and keeps the written address', () => {
    expect(parseCIDR('192.168.1.1/24')).toEqual({
      family: 4,
      network: 0xc0a80100n,
      prefixLength: 24,
      address: 0xc0a80101n,
    });
  });

  it.each([
    ['0.0.0.0/0', 4, 0n, 0],
    ['10.0.0.1/32', 4, 0x0a000001n, 32],
    ['2001:db8::/32', 6, 0x20010db8n << 96n, 32],
    ['2001:db8::1/128', 6, (0x20010db8n << 96n) | 1n, 128],
    ['::/0', 6, 0n, 0],
  ])('parses %s', (text, family, network, prefixLength) => {
    expect(parseCIDR(text)).toMatchObject({ family, network, prefixLength });
  });

  it.each([
    ['10.0.0.0/33', 'prefix length 33 is out of range for IPv4 (0-32)'],
    ['2001:db8::/129', 'prefix length 129 is out of range for IPv6 (0-128)'],
    ['10.0.0.0/08', 'prefix length "08" is not a decimal number without leading zeros'],
    ['10.0.0.0/', 'prefix length "" is not a decimal number without leading zeros'],
    ['10.0.0.0/-1', 'prefix length "-1" is not a decimal number without leading zeros'],
    ['10.0.0.0/24/24', 'prefix length "24/24" is not a decimal number without leading zeros'],
    ['10.0.0.0', "missing '/<prefix length>'"],
    ['010.0.0.0/8', 'address "010.0.0.0": leading zeros are not allowed'],
    ['fe80::%eth0/64', 'address "fe80::%eth0": zone IDs (%…) are not allowed'],
  ])('rejects %j: %s', (text, reason) => {
    const error = parseError(() => parseCIDR(text));
    expect(error.reason).toBe(reason);
    expect(error.message).toBe(`invalid CIDR "${text}": ${reason}`);
  });
});

describe('parseIPRange', () => {
  it('parses an inclusive range, including a one-address range', () => {
    expect(parseIPRange('10.0.0.10-10.0.0.20')).toEqual({ family: 4, first: 0x0a00000an, last: 0x0a000014n });
    expect(parseIPRange('::1-::1')).toEqual({ family: 6, first: 1n, last: 1n });
  });

  it.each([
    ['10.0.0.1-::1', 'mixes IPv4 and IPv6'],
    ['10.0.0.2-10.0.0.1', 'the first address is greater than the last'],
    ['10.0.0.1-10.0.0.2-10.0.0.3', `a range is "<first>-<last>" with exactly one '-', found 2`],
    ['10.0.0.1 - 10.0.0.2', 'first address "10.0.0.1 ": leading or trailing whitespace is not allowed'],
    ['10.0.0.1-010.0.0.2', 'last address "010.0.0.2": leading zeros are not allowed'],
    ['-10.0.0.1', 'first address "": empty string'],
  ])('rejects %j: %s', (text, reason) => {
    const error = parseError(() => parseIPRange(text));
    expect(error.reason).toBe(reason);
    expect(error.message).toBe(`invalid range "${text}": ${reason}`);
  });
});

describe('parseAddressEntry', () => {
  it('accepts the three entry forms', () => {
    expect(parseAddressEntry('10.0.0.7')).toEqual({
      kind: 'address',
      family: 4,
      first: 0x0a000007n,
      last: 0x0a000007n,
    });
    expect(parseAddressEntry('10.0.0.7/30')).toEqual({
      kind: 'cidr',
      family: 4,
      first: 0x0a000004n,
      last: 0x0a000007n,
    });
    expect(parseAddressEntry('fd00::1-fd00::ff')).toEqual({
      kind: 'range',
      family: 6,
      first: (0xfd00n << 112n) | 1n,
      last: (0xfd00n << 112n) | 0xffn,
    });
  });

  it('reports a bad single address as an address error', () => {
    expect(() => parseAddressEntry('10.1')).toThrow(
      'invalid address "10.1": an IPv4 address has exactly 4 dot-separated decimal octets, found 2',
    );
  });
});

describe('isValidPrefixLength', () => {
  it('accepts 0..32 for IPv4 and 0..128 for IPv6 integers only', () => {
    expect(isValidPrefixLength(4, 0)).toBe(true);
    expect(isValidPrefixLength(4, 32)).toBe(true);
    expect(isValidPrefixLength(4, 33)).toBe(false);
    expect(isValidPrefixLength(6, 128)).toBe(true);
    expect(isValidPrefixLength(6, 129)).toBe(false);
    expect(isValidPrefixLength(6, -1)).toBe(false);
    expect(isValidPrefixLength(6, 64.5)).toBe(false);
    expect(isValidPrefixLength(4, Number.NaN)).toBe(false);
  });
});
