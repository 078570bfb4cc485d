import { formatIP, type IP, parseIP } from '@tally-ipam/allocator';

/**
 * Ledger entry keys. A ledger holds one entry per key, so the key must be a function of the
 * address alone — the same in every pool and every replica — and distinct addresses must get distinct names.
 *
 * - IPv4 `10.0.0.5` → `ip4-10.0.0.5` (dotted decimal is already a valid DNS-1123 subdomain once prefixed).
 * - IPv6 `fd00::1` → `ip6-fd00--1`: the RFC 5952 text with `:` turned into `-`. Canonical text has no `-`, so the
 *   replacement is reversible. Text ending in `::` (e.g. `fd00::`) would end the name in `-`, which DNS-1123 forbids;
 *   such names get a `0` appended (`ip6-fd00--0`). No canonical text ends in `::0` (the zero group would have been
 *   folded into the `::`), so this cannot collide with another address.
 * - Prefix allocations use their own namespace of names: `net4-10.0.1.0.24` (network, `.`, length) and
 *   `net6-fd00-1--0.64`, so an address holding and a prefix holding never share a name. (An address inside a prefix taken
 *   from a prefix pool is therefore not held against an IP pool covering the same range — see the README.)
 */

const IP4_PREFIX = 'ip4-';
const IP6_PREFIX = 'ip6-';
const NET4_PREFIX = 'net4-';
const NET6_PREFIX = 'net6-';

function encodeIPv6(canonical: string): string {
  const dashed = canonical.replaceAll(':', '-');
  return dashed.endsWith('-') ? `${dashed}0` : dashed;
}

function decodeIPv6(encoded: string): string {
  const restored = encoded.endsWith('--0') ? encoded.slice(0, -1) : encoded;
  return restored.replaceAll('-', ':');
}

/** The address as it appears in holding and ledger names (IPv6 with `-` for `:`). */
export function encodeIP(ip: IP): string {
  const canonical = formatIP(ip);
  return ip.family === 4 ? canonical : encodeIPv6(canonical);
}

/** The holding name of a single address (any valid text; it is canonicalised first). */
export function addressEntryKey(address: string | IP): string {
  const ip = typeof address === 'string' ? parseIP(address) : address;
  return `${ip.family === 4 ? IP4_PREFIX : IP6_PREFIX}${encodeIP(ip)}`;
}

/** The holding name of a prefix allocation `network/prefixLength` (the network address must be aligned). */
export function prefixEntryKey(network: string | IP, prefixLength: number): string {
  const ip = typeof network === 'string' ? parseIP(network) : network;
  return `${ip.family === 4 ? NET4_PREFIX : NET6_PREFIX}${encodeIP(ip)}.${prefixLength}`;
}

/** What a holding name stands for; the inverse of `addressEntryKey` / `prefixEntryKey` (undefined for other names). */
export type EntryKeyValue =
  | { readonly kind: 'address'; readonly address: string }
  | { readonly kind: 'prefix'; readonly address: string; readonly prefixLength: number };

export function parseEntryKey(name: string): EntryKeyValue | undefined {
  try {
    if (name.startsWith(IP4_PREFIX)) return { kind: 'address', address: canonical(name.slice(IP4_PREFIX.length), 4) };
    if (name.startsWith(IP6_PREFIX)) {
      return { kind: 'address', address: canonical(decodeIPv6(name.slice(IP6_PREFIX.length)), 6) };
    }
    const isNet4 = name.startsWith(NET4_PREFIX);
    if (isNet4 || name.startsWith(NET6_PREFIX)) {
      const body = name.slice(isNet4 ? NET4_PREFIX.length : NET6_PREFIX.length);
      const dot = body.lastIndexOf('.');
      const lengthText = body.slice(dot + 1);
      if (dot < 0 || !/^(0|[1-9][0-9]{0,2})$/.test(lengthText)) return undefined;
      const addressText = body.slice(0, dot);
      const address = isNet4 ? canonical(addressText, 4) : canonical(decodeIPv6(addressText), 6);
      return { kind: 'prefix', address, prefixLength: Number(lengthText) };
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/** Parses and re-formats; rejects text that is not the canonical form of an address of the family. */
function canonical(text: string, family: 4 | 6): string {
  const ip = parseIP(text);
  const formatted = formatIP(ip);
  if (ip.family !== family || formatted !== text) throw new Error(`not canonical: ${text}`);
  return formatted;
}
