import { AddressParseError, parseIP } from '@tally-ipam/allocator';

/**
 * IPv6 zones (`fe80::1%eth0`) the way the reference reads them. Go's `netip.ParseAddr` accepts a zone on an IPv6
 * address (everything after the first `%`, which must not be empty); the reference then drops it: a range's ends are
 * stripped by `netipx.ParseIPRange`, a single address by the IPSet it lands in, so a zoned entry hands out the
 * unzoned address. A CIDR with a zone is refused by Go. Tally's parser knows no zones, so the in-cluster entries are
 * rewritten to what the reference actually uses before they reach it; anything Go would refuse is left as written,
 * and Tally's parser refuses it too.
 */

/** The address without its zone when Go accepts the zoned text as an IPv6 address; else `undefined`. */
export function goAddressWithoutZone(text: string): string | undefined {
  const percent = text.indexOf('%');
  if (percent < 0) return text;
  const address = text.slice(0, percent);
  if (percent === text.length - 1 || !address.includes(':')) return undefined;
  try {
    return parseIP(address).family === 6 ? address : undefined;
  } catch (error) {
    if (error instanceof AddressParseError) return undefined;
    throw error;
  }
}

/**
 * An `addresses` / `excludedAddresses` entry as the reference uses it: a range is split at its first `-` (Go's
 * `ParseIPRange`, so a zone may hold further dashes) and both ends lose their zones; a single address loses its
 * zone; a CIDR is unchanged.
 */
export function goEntryWithoutZones(text: string): string {
  if (!text.includes('%')) return text;
  const dash = text.indexOf('-');
  if (dash >= 0) {
    const first = goAddressWithoutZone(text.slice(0, dash));
    const last = goAddressWithoutZone(text.slice(dash + 1));
    return first === undefined || last === undefined ? text : `${first}-${last}`;
  }
  if (text.includes('/')) return text;
  return goAddressWithoutZone(text) ?? text;
}

/** The gateway as the reference parses it (`netip.ParseAddr`): a zone is accepted on IPv6, and ignored here. */
export function goGatewayWithoutZone(text: string): string {
  return goAddressWithoutZone(text) ?? text;
}
