/**
 * Strict text ⇄ value conversion for single IPv4 and IPv6 addresses.
 *
 * Addresses are plain bigints tagged with their family so that arithmetic over a /64 (or a /0) never loses
 * precision and never needs enumeration. The parser is deliberately stricter than `inet_aton` or ipaddr.js:
 * anything a human could read two ways (octal `010`, hex `0x0a`, short `10.1`, zone IDs) is rejected with a
 * reason, because an IPAM pool that silently reinterprets an address hands out the wrong one.
 */

export type IPFamily = 4 | 6;

export interface IP {
  readonly family: IPFamily;
  readonly value: bigint;
}

/** A text entry that is not a valid address, CIDR or range; `entry` is the whole offending text. */
export class AddressParseError extends Error {
  readonly entry: string;
  readonly reason: string;

  constructor(entry: string, reason: string, kind = 'address') {
    super(`invalid ${kind} "${entry}": ${reason}`);
    this.name = 'AddressParseError';
    this.entry = entry;
    this.reason = reason;
  }
}

export function addressBits(family: IPFamily): 32 | 128 {
  return family === 4 ? 32 : 128;
}

/** The highest address of a family: 255.255.255.255 or ffff:…:ffff. */
export function maxAddress(family: IPFamily): bigint {
  return (1n << BigInt(addressBits(family))) - 1n;
}

export function isValidPrefixLength(family: IPFamily, prefix: number): boolean {
  return Number.isInteger(prefix) && prefix >= 0 && prefix <= addressBits(family);
}

/** Thrown internally with just a reason; the public parsers attach the entry text. */
class Reason extends Error {}

const DECIMAL_OCTET = /^[0-9]+$/;
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;
const IPV6_ALPHABET = /^[0-9a-fA-F:.]+$/;

const STRICT_DOTTED_QUAD =
  /^(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$/;

function parseIPv4Value(text: string): bigint {
  // Fast path for the common, valid case; the checks below only run to explain a rejection.
  if (STRICT_DOTTED_QUAD.test(text)) {
    let value = 0;
    for (const octet of text.split('.')) value = value * 256 + Number(octet);
    return BigInt(value);
  }
  if (/0x/i.test(text)) throw new Reason('hexadecimal notation is not allowed');
  const octets = text.split('.');
  if (octets.length !== 4) {
    throw new Reason(`an IPv4 address has exactly 4 dot-separated decimal octets, found ${octets.length}`);
  }
  for (const octet of octets) {
    if (octet === '') throw new Reason('empty octet');
    if (!DECIMAL_OCTET.test(octet)) throw new Reason(`octet "${octet}" is not a decimal number`);
    if (octet.length > 1 && octet.startsWith('0')) throw new Reason('leading zeros are not allowed');
    if (Number(octet) > 255) throw new Reason(`octet ${octet} is greater than 255`);
  }
  throw new Reason('not a dotted-quad IPv4 address');
}

/** Groups as 4-digit hex strings, so that an address becomes one BigInt parse instead of eight. */
function parseHexGroups(part: string): string[] {
  if (part === '') return [];
  return part.split(':').map((group) => {
    if (group === '') throw new Reason("misplaced ':' (empty group)");
    if (!HEX_GROUP.test(group)) throw new Reason(`group "${group}" is not 1 to 4 hexadecimal digits`);
    return group.padStart(4, '0');
  });
}

/** Hex digit values by char code; -1 for anything else. */
const HEX_DIGIT = new Int8Array(128).fill(-1);
for (const [index, char] of [...'0123456789abcdef'].entries()) {
  HEX_DIGIT[char.charCodeAt(0)] = index;
  HEX_DIGIT[char.toUpperCase().charCodeAt(0)] = index;
}
const COLON = 58;

/**
 * Fast path for plain IPv6 text (hex groups and at most one '::', no embedded IPv4): one pass, no allocations per
 * group. Returns undefined for anything it does not fully accept, and the explaining parser takes over; it never
 * accepts text that parser would reject.
 */
function scanPlainIPv6(text: string): bigint | undefined {
  const groups: number[] = [];
  let compressAt = -1;
  let i = 0;
  const end = text.length;
  if (text.startsWith('::')) {
    compressAt = 0;
    i = 2;
  }
  while (i < end) {
    let value = 0;
    let digits = 0;
    for (; i < end; i += 1) {
      const code = text.charCodeAt(i);
      const digit = code < 128 ? HEX_DIGIT[code]! : -1;
      if (digit < 0) break;
      value = value * 16 + digit;
      digits += 1;
    }
    if (digits === 0 || digits > 4 || groups.length === 8) return undefined;
    groups.push(value);
    if (i === end) break;
    if (text.charCodeAt(i) !== COLON) return undefined;
    i += 1;
    if (i < end && text.charCodeAt(i) === COLON) {
      if (compressAt >= 0) return undefined;
      compressAt = groups.length;
      i += 1;
    } else if (i === end) {
      return undefined;
    }
  }
  if (compressAt < 0 ? groups.length !== 8 : groups.length > 7) return undefined;
  // Expand '::' in place while packing pairs of groups into four 32-bit words (no closures or temporary arrays).
  const missing = 8 - groups.length;
  const words = [0, 0, 0, 0];
  for (let index = 0; index < 8; index += 1) {
    let group = 0;
    if (compressAt < 0 || index < compressAt) group = groups[index]!;
    else if (index >= compressAt + missing) group = groups[index - missing]!;
    words[index >> 1] = words[index >> 1]! * 0x10000 + group;
  }
  return (BigInt(words[0]!) << 96n) | (BigInt(words[1]!) << 64n) | (BigInt(words[2]!) << 32n) | BigInt(words[3]!);
}

function parseIPv6Value(text: string): bigint {
  if (!IPV6_ALPHABET.test(text)) {
    const bad = [...text].find((char) => !IPV6_ALPHABET.test(char));
    throw new Reason(`unexpected character "${bad}"`);
  }
  let hexPart = text;
  let embeddedIPv4: bigint | undefined;
  if (text.includes('.')) {
    const lastColon = text.lastIndexOf(':');
    const dotted = text.slice(lastColon + 1);
    try {
      embeddedIPv4 = parseIPv4Value(dotted);
    } catch (error) {
      if (error instanceof Reason) throw new Reason(`embedded IPv4 part "${dotted}": ${error.message}`);
      throw error;
    }
    // Keep the colon when it belongs to a '::' so that "::1.2.3.4" still compresses.
    hexPart = text.endsWith(`::${dotted}`) ? text.slice(0, lastColon + 1) : text.slice(0, lastColon);
  }
  const compressions = hexPart.split('::').length - 1;
  if (compressions > 1) throw new Reason("'::' may appear only once");
  const explicitGroupsNeeded = embeddedIPv4 === undefined ? 8 : 6;
  let groups: string[];
  if (compressions === 1) {
    const [head = '', tail = ''] = hexPart.split('::');
    const headGroups = parseHexGroups(head);
    const tailGroups = parseHexGroups(tail);
    const missing = explicitGroupsNeeded - headGroups.length - tailGroups.length;
    if (missing < 1) throw new Reason("'::' must stand for at least one zero group");
    groups = [...headGroups, ...new Array<string>(missing).fill('0000'), ...tailGroups];
  } else {
    if (hexPart === '' && embeddedIPv4 !== undefined)
      throw new Reason('an embedded IPv4 part needs 6 groups before it');
    groups = parseHexGroups(hexPart);
    if (groups.length !== explicitGroupsNeeded) {
      throw new Reason(`expected ${explicitGroupsNeeded} groups, found ${groups.length} (and no '::')`);
    }
  }
  const value = BigInt(`0x${groups.join('')}`);
  return embeddedIPv4 === undefined ? value : (value << 32n) | embeddedIPv4;
}

/** Parses one address, throwing a reason (without the entry) so composite parsers can phrase their own error. */
export function parseIPOrReason(text: string): IP {
  if (text === '') throw new Reason('empty string');
  if (/\s/.test(text)) {
    throw new Reason(
      text.trim() !== text ? 'leading or trailing whitespace is not allowed' : 'whitespace is not allowed',
    );
  }
  if (text.includes('%')) throw new Reason('zone IDs (%…) are not allowed');
  if (text.includes(':')) return { family: 6, value: scanPlainIPv6(text) ?? parseIPv6Value(text) };
  return { family: 4, value: parseIPv4Value(text) };
}

export function isReason(error: unknown): error is Error {
  return error instanceof Reason;
}

/** Parses exactly one IPv4 or IPv6 address (no prefix, no range, no zone, no surrounding whitespace). */
export function parseIP(text: string): IP {
  try {
    return parseIPOrReason(text);
  } catch (error) {
    if (error instanceof Reason) throw new AddressParseError(text, error.message);
    throw error;
  }
}

/** The address with this value, checking that it fits the family. */
export function ipFromValue(family: IPFamily, value: bigint): IP {
  if (value < 0n || value > maxAddress(family)) {
    throw new RangeError(`value ${value} is not an IPv${family} address (0..${maxAddress(family)})`);
  }
  return { family, value };
}

function formatIPv4Value(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => ((value >> shift) & 0xffn).toString()).join('.');
}

const IPV4_MAPPED_PREFIX = 0xffffn << 32n;
const IPV4_MAPPED_MASK = ~((1n << 32n) - 1n) & maxAddress(6);

/** True for ::ffff:0:0/96, which is still an IPv6 address; it is printed in mixed notation (RFC 5952 §5). */
export function isIPv4Mapped(ip: IP): boolean {
  return ip.family === 6 && (ip.value & IPV4_MAPPED_MASK) === IPV4_MAPPED_PREFIX;
}

function formatIPv6Value(value: bigint): string {
  if ((value & IPV4_MAPPED_MASK) === IPV4_MAPPED_PREFIX) return `::ffff:${formatIPv4Value(value & 0xffffffffn)}`;
  const groups: number[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(Number((value >> shift) & 0xffffn));
  // RFC 5952 §4.2: compress the longest run of two or more zero groups, the first one on a tie.
  let bestStart = -1;
  let bestLength = 1;
  for (let start = 0; start < 8; ) {
    if (groups[start] !== 0) {
      start += 1;
      continue;
    }
    let end = start;
    while (end < 8 && groups[end] === 0) end += 1;
    if (end - start > bestLength) {
      bestStart = start;
      bestLength = end - start;
    }
    start = end;
  }
  const hex = (part: number[]): string => part.map((group) => group.toString(16)).join(':');
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLength))}`;
}

/** Canonical text: dotted decimal for IPv4, RFC 5952 for IPv6 (IPv4-mapped addresses as `::ffff:a.b.c.d`). */
export function formatIP(ip: IP): string {
  const checked = ipFromValue(ip.family, ip.value);
  return checked.family === 4 ? formatIPv4Value(checked.value) : formatIPv6Value(checked.value);
}
