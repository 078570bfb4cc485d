import {
  AddressParseError,
  addressBits,
  type IPFamily,
  isIPv4Mapped,
  networkBounds,
  parseCIDR,
  parseIP,
  parseIPRange,
} from '@tally-ipam/allocator';

/**
 * The zod side of the address rules, using the allocator's strict parser so that what the schema accepts is
 * exactly what the allocator can use. One rule is added on top: IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`) are
 * refused, because the API server's CEL `isIP`/`isCIDR` refuse them and the two sides must agree.
 */

/** A parsed pool entry: the inclusive address interval it stands for. */
export interface AddressInterval {
  kind: 'address' | 'cidr' | 'range';
  family: IPFamily;
  first: bigint;
  last: bigint;
  /** For a CIDR: the prefix length and whether host bits were set (`10.0.0.1/24`). */
  prefixLength?: number;
  hostBitsSet?: boolean;
}

export type Inspection<T> = { ok: true; value: T } | { ok: false; reason: string };

function failure(error: unknown): { ok: false; reason: string } {
  if (error instanceof AddressParseError) return { ok: false, reason: error.reason };
  throw error;
}

const MAPPED_REASON = 'IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are not allowed; write the IPv4 address';

/** One address, as CEL `isIP` accepts it. */
export function inspectIP(text: string): Inspection<{ family: IPFamily; value: bigint }> {
  try {
    const ip = parseIP(text);
    if (isIPv4Mapped(ip)) return { ok: false, reason: MAPPED_REASON };
    return { ok: true, value: { family: ip.family, value: ip.value } };
  } catch (error) {
    return failure(error);
  }
}

/** One CIDR, as CEL `isCIDR` accepts it (host bits allowed). */
export function inspectCIDR(text: string): Inspection<AddressInterval> {
  try {
    const cidr = parseCIDR(text);
    if (isIPv4Mapped({ family: cidr.family, value: cidr.address })) return { ok: false, reason: MAPPED_REASON };
    const { first, last } = networkBounds(cidr.family, cidr.network, cidr.prefixLength);
    return {
      ok: true,
      value: {
        kind: 'cidr',
        family: cidr.family,
        first,
        last,
        prefixLength: cidr.prefixLength,
        hostBitsSet: cidr.address !== cidr.network,
      },
    };
  } catch (error) {
    return failure(error);
  }
}

/** One pool entry: an address, a CIDR or a "first-last" range (checked in that precedence: '-' first). */
export function inspectAddressEntry(text: string): Inspection<AddressInterval> {
  if (text.includes('-')) {
    try {
      const range = parseIPRange(text);
      const [firstText = '', lastText = ''] = text.split('-');
      for (const part of [firstText, lastText]) {
        const ip = inspectIP(part);
        if (!ip.ok) return ip;
      }
      return { ok: true, value: { kind: 'range', family: range.family, first: range.first, last: range.last } };
    } catch (error) {
      return failure(error);
    }
  }
  if (text.includes('/')) return inspectCIDR(text);
  const ip = inspectIP(text);
  if (!ip.ok) return ip;
  return { ok: true, value: { kind: 'address', family: ip.value.family, first: ip.value.value, last: ip.value.value } };
}

/** The network of `prefixLength` bits around `address`. */
export function subnetAround(family: IPFamily, address: bigint, prefixLength: number): { first: bigint; last: bigint } {
  return networkBounds(family, address, prefixLength);
}

export function familyBits(family: IPFamily): number {
  return addressBits(family);
}
