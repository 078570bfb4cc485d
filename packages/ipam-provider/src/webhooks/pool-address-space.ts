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
import type { PoolAllocation } from './pool-allocations-view.js';
import type { TallyPool } from './pool-kinds.js';

/**
 * What one pool spec can hand out, and a test for whether an already allocated IPAddress is still something the
 * spec could have handed out. Built from the allocator's pool model so the webhook and the allocator never disagree.
 */
export interface PoolAddressSpace {
  readonly family: IPFamily;
  /** The addresses the pool may hand out (for a prefix pool: every address of every allocatable prefix). */
  readonly addresses: IntervalSet;
  /** Whether the pool hands out prefixes (their allocations are shown as CIDRs). */
  readonly prefixes: boolean;
  /** Undefined when `allocation` may stay allocated under this spec; otherwise why not. */
  rejects(allocation: PoolAllocation): string | undefined;
}

export type PoolAddressSpaceResult =
  | { readonly ok: true; readonly space: PoolAddressSpace }
  | { readonly ok: false; readonly issues: readonly PoolSpecIssue[] };

function parseAllocated(allocation: PoolAllocation): ReturnType<typeof parseIP> | string {
  try {
    return parseIP(allocation.address);
  } catch (error) {
    if (error instanceof AddressParseError) return `is not a valid address (${error.reason})`;
    throw error;
  }
}

export function isPrefixPool(
  pool: TallyPool,
): pool is Extract<TallyPool, { kind: 'TallyPrefixPool' | 'GlobalTallyPrefixPool' }> {
  return pool.kind === 'TallyPrefixPool' || pool.kind === 'GlobalTallyPrefixPool';
}

/** The address space of a pool spec; a spec the allocator cannot build reports its issues (field, value, why). */
export function poolAddressSpace(pool: TallyPool): PoolAddressSpaceResult {
  if (!isPrefixPool(pool)) {
    const built = tryBuildAddressPool(pool.spec);
    if (!built.ok) return { ok: false, issues: built.issues };
    const addressPool = built.pool;
    return {
      ok: true,
      space: {
        family: addressPool.family,
        addresses: addressPool.allocatable,
        prefixes: false,
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
      prefixes: true,
      rejects(address) {
        const ip = parseAllocated(address);
        if (typeof ip === 'string') return ip;
        const verdict = checkPrefixAllocatable(prefixPool, {
          family: ip.family,
          network: ip.value,
          prefixLength: address.prefix,
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
 * The allocations as text: host addresses merged into ranges (`10.0.0.5-10.0.0.9 10.0.0.20`), prefixes as CIDRs
 * (`fd00:0:0:5::/64`); at most `limit` items followed by how many more there are, so a message stays readable when
 * thousands of addresses are stranded.
 */
export function describeAllocations(allocations: readonly PoolAllocation[], prefixes: boolean, limit = 10): string {
  const hosts = new Map<IPFamily, Interval[]>();
  const cidrs: { family: IPFamily; value: bigint; text: string }[] = [];
  const unparsable: string[] = [];
  for (const allocation of allocations) {
    const ip = parseAllocated(allocation);
    if (typeof ip === 'string') {
      unparsable.push(allocation.address);
    } else if (prefixes) {
      cidrs.push({ family: ip.family, value: ip.value, text: `${formatIP(ip)}/${allocation.prefix}` });
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
  cidrs.sort((a, b) => a.family - b.family || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  items.push(...cidrs.map((cidr) => cidr.text), ...unparsable.sort());
  const shown = items.slice(0, limit);
  const more = items.length - shown.length;
  return more > 0 ? `${shown.join(' ')} and ${more} more` : shown.join(' ');
}
