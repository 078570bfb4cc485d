/**
 * Parsers for the three forms a pool's `addresses` / `excludedAddresses` entry may take: a single address,
 * a CIDR (`10.0.0.0/24`, host bits allowed and masked off), or an inclusive range (`10.0.0.10-10.0.0.20`).
 */
import { AddressParseError, addressBits, type IPFamily, isReason, maxAddress, parseIP, parseIPOrReason } from './ip.js';

export interface ParsedCIDR {
  family: IPFamily;
  /** The first address of the network (host bits cleared). */
  network: bigint;
  prefixLength: number;
  /** The address as written, host bits included (`192.168.1.1/24` → 192.168.1.1). */
  address: bigint;
}

export interface ParsedRange {
  family: IPFamily;
  first: bigint;
  last: bigint;
}

export interface ParsedAddressEntry {
  kind: 'address' | 'cidr' | 'range';
  family: IPFamily;
  first: bigint;
  last: bigint;
}

/** Mask that keeps the top `prefixLength` bits of a family-width address. */
export function networkMask(family: IPFamily, prefixLength: number): bigint {
  const hostBits = BigInt(addressBits(family) - prefixLength);
  return maxAddress(family) ^ ((1n << hostBits) - 1n);
}

/** The first and last address of the `prefixLength` network that contains `address`. */
export function networkBounds(
  family: IPFamily,
  address: bigint,
  prefixLength: number,
): { first: bigint; last: bigint } {
  const mask = networkMask(family, prefixLength);
  const first = address & mask;
  return { first, last: first | (maxAddress(family) ^ mask) };
}

function addressPart(entry: string, kind: string, text: string, role: string): { family: IPFamily; value: bigint } {
  try {
    return parseIPOrReason(text);
  } catch (error) {
    if (isReason(error)) throw new AddressParseError(entry, `${role} "${text}": ${error.message}`, kind);
    throw error;
  }
}

const PREFIX_DIGITS = /^(0|[1-9][0-9]*)$/;

export function parseCIDR(text: string): ParsedCIDR {
  const slash = text.indexOf('/');
  if (slash < 0) throw new AddressParseError(text, "missing '/<prefix length>'", 'CIDR');
  const addressText = text.slice(0, slash);
  const prefixText = text.slice(slash + 1);
  const { family, value } = addressPart(text, 'CIDR', addressText, 'address');
  if (!PREFIX_DIGITS.test(prefixText)) {
    throw new AddressParseError(
      text,
      `prefix length "${prefixText}" is not a decimal number without leading zeros`,
      'CIDR',
    );
  }
  const prefixLength = Number(prefixText);
  if (prefixLength > addressBits(family)) {
    throw new AddressParseError(
      text,
      `prefix length ${prefixLength} is out of range for IPv${family} (0-${addressBits(family)})`,
      'CIDR',
    );
  }
  return { family, network: value & networkMask(family, prefixLength), prefixLength, address: value };
}

export function parseIPRange(text: string): ParsedRange {
  const parts = text.split('-');
  if (parts.length !== 2) {
    throw new AddressParseError(
      text,
      `a range is "<first>-<last>" with exactly one '-', found ${parts.length - 1}`,
      'range',
    );
  }
  const [firstText = '', lastText = ''] = parts;
  const first = addressPart(text, 'range', firstText, 'first address');
  const last = addressPart(text, 'range', lastText, 'last address');
  if (first.family !== last.family) {
    throw new AddressParseError(text, `mixes IPv${first.family} and IPv${last.family}`, 'range');
  }
  if (first.value > last.value) {
    throw new AddressParseError(text, 'the first address is greater than the last', 'range');
  }
  return { family: first.family, first: first.value, last: last.value };
}

/** Any of the three forms; an unmasked CIDR stands for its whole network, as in the reference provider. */
export function parseAddressEntry(text: string): ParsedAddressEntry {
  if (text.includes('-')) {
    const range = parseIPRange(text);
    return { kind: 'range', ...range };
  }
  if (text.includes('/')) {
    const cidr = parseCIDR(text);
    const { first, last } = networkBounds(cidr.family, cidr.network, cidr.prefixLength);
    return { kind: 'cidr', family: cidr.family, first, last };
  }
  const ip = parseIP(text);
  return { kind: 'address', family: ip.family, first: ip.value, last: ip.value };
}
