/**
 * A prefix pool (InClusterPrefixPool-style): aligned /N blocks carved from a set of prefixes, minus any block that
 * overlaps an excluded prefix, address or range. Blocks are numbered by `address >> (bits − N)`, so the
 * allocatable blocks form an IntervalSet of block indices and the same engine serves addresses and prefixes.
 */
import { networkBounds, parseAddressEntry, parseCIDR } from './entry.js';
import { PoolSpecError, type PoolSpecIssue } from './errors.js';
import { type Interval, IntervalSet } from './interval-set.js';
import { AddressParseError, addressBits, formatIP, type IPFamily, isValidPrefixLength } from './ip.js';

export interface PrefixPoolSpec {
  /** Network-aligned CIDRs to carve from; each at most `allocationPrefixLength` long. */
  readonly prefixes: readonly string[];
  /** The length of every allocated prefix (the reference defaults it to 64). */
  readonly allocationPrefixLength: number;
  /** Addresses, ranges or CIDRs; every block that overlaps one is never allocated. */
  readonly excludedPrefixes?: readonly string[] | undefined;
}

export interface Prefix {
  readonly family: IPFamily;
  /** The first address of the prefix. */
  readonly network: bigint;
  readonly prefixLength: number;
}

export interface PrefixPool {
  readonly family: IPFamily;
  readonly allocationPrefixLength: number;
  /** Host bits of one allocation: block index = address >> blockShift. */
  readonly blockShift: bigint;
  /** The union of `prefixes`, in addresses. */
  readonly aggregates: IntervalSet;
  /** The union of `excludedPrefixes`, in addresses. */
  readonly excluded: IntervalSet;
  /** Indices of the blocks that can be allocated. */
  readonly blocks: IntervalSet;
}

export function formatPrefix(prefix: Prefix): string {
  return `${formatIP({ family: prefix.family, value: prefix.network })}/${prefix.prefixLength}`;
}

export function blockToPrefix(pool: PrefixPool, block: bigint): Prefix {
  return { family: pool.family, network: block << pool.blockShift, prefixLength: pool.allocationPrefixLength };
}

/** Block indices touched by an address interval. */
function blocksOf(interval: Interval, shift: bigint): Interval {
  return { first: interval.first >> shift, last: interval.last >> shift };
}

export type PrefixVerdict =
  | { readonly allocatable: true; readonly block: bigint }
  | {
      readonly allocatable: false;
      readonly reason: 'outside-pool' | 'excluded' | 'misaligned';
      readonly detail: string;
    };

/** Whether a prefix could ever be handed out by this pool, and if not, why. */
export function checkPrefixAllocatable(pool: PrefixPool, prefix: Prefix): PrefixVerdict {
  if (prefix.family !== pool.family) {
    return {
      allocatable: false,
      reason: 'outside-pool',
      detail: `is IPv${prefix.family}, the pool is IPv${pool.family}`,
    };
  }
  if (prefix.prefixLength !== pool.allocationPrefixLength) {
    return {
      allocatable: false,
      reason: 'misaligned',
      detail: `is a /${prefix.prefixLength}, the pool allocates /${pool.allocationPrefixLength} prefixes`,
    };
  }
  const block = prefix.network >> pool.blockShift;
  if (block << pool.blockShift !== prefix.network) {
    return { allocatable: false, reason: 'misaligned', detail: 'has host bits set (it is not network-aligned)' };
  }
  const { first, last } = networkBounds(pool.family, prefix.network, prefix.prefixLength);
  if (!pool.aggregates.containsInterval(first, last)) {
    return { allocatable: false, reason: 'outside-pool', detail: "is not inside the pool's prefixes" };
  }
  if (pool.excluded.overlaps(first, last)) {
    return { allocatable: false, reason: 'excluded', detail: "overlaps the pool's excludedPrefixes" };
  }
  return { allocatable: true, block };
}

type PrefixPoolBuild = { ok: true; pool: PrefixPool } | { ok: false; issues: readonly PoolSpecIssue[] };

export function tryBuildPrefixPool(spec: PrefixPoolSpec): PrefixPoolBuild {
  const issues: PoolSpecIssue[] = [];
  if (spec.prefixes.length === 0) {
    issues.push({ field: 'spec.prefixes', value: [], message: 'at least one prefix is required' });
  }
  const parsed: { index: number; text: string; family: IPFamily; network: bigint; prefixLength: number }[] = [];
  spec.prefixes.forEach((text, index) => {
    const field = `spec.prefixes[${index}]`;
    try {
      const cidr = parseCIDR(text);
      if (cidr.address !== cidr.network) {
        const aligned = `${formatIP({ family: cidr.family, value: cidr.network })}/${cidr.prefixLength}`;
        issues.push({ field, value: text, message: `is not network-aligned (the network is ${aligned})` });
      }
      parsed.push({ index, text, family: cidr.family, network: cidr.network, prefixLength: cidr.prefixLength });
    } catch (error) {
      if (!(error instanceof AddressParseError)) throw error;
      issues.push({ field, value: text, message: error.message });
    }
  });
  const family: IPFamily = parsed[0]?.family ?? 6;
  const allocationLength = spec.allocationPrefixLength;
  const lengthValid = isValidPrefixLength(family, allocationLength);
  if (!lengthValid) {
    issues.push({
      field: 'spec.allocationPrefixLength',
      value: allocationLength,
      message: `must be an integer from 0 to ${addressBits(family)} for an IPv${family} pool`,
    });
  }
  for (const entry of parsed) {
    const field = `spec.prefixes[${entry.index}]`;
    if (entry.family !== family) {
      issues.push({ field, value: entry.text, message: `is IPv${entry.family} but spec.prefixes[0] is IPv${family}` });
    } else if (lengthValid && entry.prefixLength > allocationLength) {
      issues.push({
        field,
        value: entry.text,
        message: `is a /${entry.prefixLength}, longer than spec.allocationPrefixLength ${allocationLength}`,
      });
    }
  }
  const excludedIntervals: Interval[] = [];
  (spec.excludedPrefixes ?? []).forEach((text, index) => {
    const field = `spec.excludedPrefixes[${index}]`;
    try {
      const entry = parseAddressEntry(text);
      if (entry.family !== family) {
        issues.push({ field, value: text, message: `is IPv${entry.family} but the pool is IPv${family}` });
      }
      excludedIntervals.push({ first: entry.first, last: entry.last });
    } catch (error) {
      if (!(error instanceof AddressParseError)) throw error;
      issues.push({ field, value: text, message: error.message });
    }
  });
  if (issues.length > 0) return { ok: false, issues };

  const blockShift = BigInt(addressBits(family) - allocationLength);
  const aggregates = IntervalSet.of(parsed.map((entry) => networkBounds(family, entry.network, entry.prefixLength)));
  const excluded = IntervalSet.of(excludedIntervals);
  const blocks = IntervalSet.of(aggregates.intervals.map((interval) => blocksOf(interval, blockShift))).subtract(
    IntervalSet.of(excluded.intervals.map((interval) => blocksOf(interval, blockShift))),
  );
  return {
    ok: true,
    pool: { family, allocationPrefixLength: allocationLength, blockShift, aggregates, excluded, blocks },
  };
}

/** Builds the pool; throws a PoolSpecError listing every problem. */
export function buildPrefixPool(spec: PrefixPoolSpec): PrefixPool {
  const result = tryBuildPrefixPool(spec);
  if (!result.ok) throw new PoolSpecError(result.issues);
  return result.pool;
}
