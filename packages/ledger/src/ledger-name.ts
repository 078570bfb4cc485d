import { addressBits, ipFromValue, networkMask, parseIP } from '@tally-ipam/allocator';
import { encodeIP } from './entry-key.js';

/**
 * Ledger names. Every allocation is recorded in the ledger of the aligned block that contains it, so the block must
 * be a function of the allocated value alone — the same in every pool and every replica — and one ledger holds at most
 * `MAX_LEDGER_ENTRIES` (256) allocations:
 * - a single address: its IPv4 /24 or IPv6 /120, `ip4-10.0.0.0.24`, `ip6-fd00--0.120`;
 * - a prefix of length L: the block of the 256 prefixes of length L that share its first L-8 bits (fewer for L < 8),
 *   `net4-10.0.0.0.16.24` (block network, block length, allocation length).
 * Addresses and prefixes use separate names, as their holdings did: an address inside a prefix taken from a prefix pool
 * is not held against an IP pool covering the same range (see the README).
 */
export const ADDRESS_BLOCK_BITS = 8;

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
