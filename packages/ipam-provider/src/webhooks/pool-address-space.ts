import {
  AddressParseError,
  checkAllocatable,
  checkPrefixAllocatable,
  formatIP,
  type Interval,
  IntervalSet,
  type IPFamily,
  type PoolSpecIssue,
  parseIP,
  tryBuildAddressPool,
  tryBuildPrefixPool,
} from '@tally-ipam/allocator';
import { type IPAddress, isPrefixPoolKind, isTallyPoolReference } from '@tally-ipam/api-types';
import type { TallyPool } from './pool-kinds.js';

/**
 * What one pool spec can hand out, and a test for whether an already allocated IPAddress is still something the
 * spec could have handed out. Built from the allocator's pool model so the webhook and the allocator never disagree.
 */
export interface PoolAddressSpace {
  readonly family: IPFamily;
  /** The addresses the pool may hand out (for a prefix pool: every address of every allocatable prefix). */
  readonly addresses: IntervalSet;
  /** Undefined when `address` may stay allocated under this spec; otherwise why not. */
  rejects(address: IPAddress): string | undefined;
}

export type PoolAddressSpaceResult =
  | { readonly ok: true; readonly space: PoolAddressSpace }
  | { readonly ok: false; readonly issues: readonly PoolSpecIssue[] };

function parseAllocated(address: IPAddress): ReturnType<typeof parseIP> | string {
  try {
    return parseIP(address.spec.address);
  } catch (error) {
    if (error instanceof AddressParseError) return `is not a valid address (${error.reason})`;
    throw error;
  }
}

/** The address space of a pool spec; a spec the allocator cannot build reports its issues (field, value, why). */
export function poolAddressSpace(pool: TallyPool): PoolAddressSpaceResult {
  if (pool.kind === 'TallyIPPool' || pool.kind === 'GlobalTallyIPPool') {
    const built = tryBuildAddressPool(pool.spec);
    if (!built.ok) return { ok: false, issues: built.issues };
    const addressPool = built.pool;
    return {
      ok: true,
      space: {
        family: addressPool.family,
        addresses: addressPool.allocatable,
        rejects(address) {
          const ip = parseAllocated(address);
          if (typeof ip === 'string') return ip;
          const verdict = checkAllocatable(addressPool, ip);
          return verdict.allocatable ? undefined : verdict.detail;
        },
      },
    };
  }
  const built = tryBuildPrefixPool(pool.spec);
  if (!built.ok) return { ok: false, issues: built.issues };
  const prefixPool = built.pool;
  const shift = prefixPool.blockShift;
  // Blocks are indices of /N prefixes; widen each run of blocks back to the addresses it covers.
  const addresses = IntervalSet.of(
    [...prefixPool.blocks].map(
      (run): Interval => ({
        first: run.first << shift,
        last: ((run.last + 1n) << shift) - 1n,
      }),
    ),
  );
  return {
    ok: true,
    space: {
      family: prefixPool.family,
      addresses,
      rejects(address) {
        const ip = parseAllocated(address);
        if (typeof ip === 'string') return ip;
        const verdict = checkPrefixAllocatable(prefixPool, {
          family: ip.family,
          network: ip.value,
          prefixLength: address.spec.prefix,
        });
        return verdict.allocatable ? undefined : verdict.detail;
      },
    },
  };
}

/** `10.0.0.5` for one address, `10.0.0.5-10.0.0.9` for a run. */
export function formatInterval(family: IPFamily, interval: Interval): string {
  const first = formatIP({ family, value: interval.first });
  return interval.first === interval.last ? first : `${first}-${formatIP({ family, value: interval.last })}`;
}

/**
 * The allocated addresses as text: host addresses merged into ranges (`10.0.0.5-10.0.0.9 10.0.0.20`), prefixes as
 * CIDRs (`fd00:0:0:5::/64`); at most `limit` items followed by how many more there are, so a message stays readable
 * when thousands of addresses are stranded.
 */
export function describeAddresses(addresses: readonly IPAddress[], limit = 10): string {
  const hosts = new Map<IPFamily, Interval[]>();
  const prefixes: { family: IPFamily; value: bigint; text: string }[] = [];
  const unparsable: string[] = [];
  for (const address of addresses) {
    const ip = parseAllocated(address);
    if (typeof ip === 'string') {
      unparsable.push(address.spec.address);
    } else if (isPrefixAllocation(address)) {
      prefixes.push({ family: ip.family, value: ip.value, text: `${formatIP(ip)}/${address.spec.prefix}` });
    } else {
      const list = hosts.get(ip.family) ?? [];
      list.push({ first: ip.value, last: ip.value });
      hosts.set(ip.family, list);
    }
  }
  const items: string[] = [];
  for (const [family, intervals] of [...hosts].sort(([a], [b]) => a - b)) {
    for (const interval of IntervalSet.of(intervals)) items.push(formatInterval(family, interval));
  }
  prefixes.sort((a, b) => a.family - b.family || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  items.push(...prefixes.map((prefix) => prefix.text), ...unparsable.sort());
  const shown = items.slice(0, limit);
  const more = items.length - shown.length;
  return more > 0 ? `${shown.join(' ')} and ${more} more` : shown.join(' ');
}

function isPrefixAllocation(address: IPAddress): boolean {
  return isTallyPoolReference(address.spec.poolRef) && isPrefixPoolKind(address.spec.poolRef.kind);
}
