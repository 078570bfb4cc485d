import { addressBits, ipFromValue, networkMask, parseIP } from '@tally-ipam/allocator';
import { encodeIP, parseEntryKey } from './entry-key.js';

/**
 * Ledger names. Every allocation is recorded in the ledger of the aligned block that contains it, so the block must
 * be a function of the allocated value alone — the same in every pool and every replica — and one ledger holds at most
 * 2^`ADDRESS_BLOCK_BITS` (32) allocations:
 * - a single address: its IPv4 /27 or IPv6 /123, `ip4-10.0.0.0.27`, `ip6-fd00--0.123`;
 * - a prefix of length L: the block of the 32 prefixes of length L that share their first L-5 bits (fewer for L < 5),
 *   `net4-10.0.0.0.19.24` (block network, block length, allocation length).
 * Addresses and prefixes use separate names, as their holdings did: an address inside a prefix taken from a prefix pool
 * is not held against an IP pool covering the same range (see the README).
 *
 * The block size is a constant of the build, never a flag: replicas that disagreed on it would hold one address in two
 * ledgers and both win. 32 was chosen by measurement (docs/design/ipam-steady-rate.md, "Ledger block size"): a write's
 * cost grows with the ledger's entries, and at 32 a steady trickle of claims costs about what the contract's own writes
 * do, while a burst still writes under 0.1 ledgers per claim. An entry found in a ledger the current layout does not
 * name for it (a ledger of another block size) counts for nothing: see `ledgerNameOfEntryKey`.
 */
export const ADDRESS_BLOCK_BITS = 5;

export interface LedgerUnit {
  /** Canonical address (for a prefix: its network address). */
  readonly address: string;
  /** Prefix length; only read for prefix allocations. */
  readonly prefix: number;
  readonly isPrefix: boolean;
}

export function ledgerNameOf(unit: LedgerUnit): string {
  const ip = parseIP(unit.address);
  const bits = addressBits(ip.family);
  if (!unit.isPrefix) {
    const blockLength = bits - ADDRESS_BLOCK_BITS;
    const block = ipFromValue(ip.family, ip.value & networkMask(ip.family, blockLength));
    return `ip${ip.family}-${encodeIP(block)}.${blockLength}`;
  }
  if (!Number.isInteger(unit.prefix) || unit.prefix < 0 || unit.prefix > bits) {
    throw new Error(`prefix length ${unit.prefix} of ${unit.address} is not between 0 and ${bits}`);
  }
  const blockLength = Math.max(unit.prefix - ADDRESS_BLOCK_BITS, 0);
  const block = ipFromValue(ip.family, ip.value & networkMask(ip.family, blockLength));
  return `net${ip.family}-${encodeIP(block)}.${blockLength}.${unit.prefix}`;
}

/**
 * The ledger the current layout keeps the entry `key` in; undefined for a key that names no address or prefix. A ledger
 * whose name is not this for one of its entries was written with another block size: the entry is not a holding there.
 */
export function ledgerNameOfEntryKey(key: string): string | undefined {
  // Every ledger event passes each of its entries through here (the entry view, the retired-ledger check): IPv4
  // addresses, the common case, are named by integer arithmetic instead of a parse (property-tested against it).
  const ipv4 = IPV4_ADDRESS_KEY.exec(key);
  if (ipv4) return ipv4LedgerName(ipv4);
  const value = parseEntryKey(key);
  if (value === undefined) return undefined;
  return value.kind === 'address'
    ? ledgerNameOf({ address: value.address, prefix: 0, isPrefix: false })
    : ledgerNameOf({ address: value.address, prefix: value.prefixLength, isPrefix: true });
}

const IPV4_ADDRESS_KEY = /^ip4-(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})$/;

/** The ledger name of a canonical IPv4 address key's octets; undefined when an octet is over 255 (not an address). */
function ipv4LedgerName(match: RegExpExecArray): string | undefined {
  let value = 0;
  for (let index = 1; index <= 4; index += 1) {
    const octet = Number(match[index]);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  const hostSize = 2 ** ADDRESS_BLOCK_BITS;
  const block = value - (value % hostSize);
  const octets = [block >>> 24, (block >>> 16) & 255, (block >>> 8) & 255, block & 255];
  return `ip4-${octets.join('.')}.${32 - ADDRESS_BLOCK_BITS}`;
}
