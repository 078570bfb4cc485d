import {
  AddressParseError,
  type IP,
  type IPFamily,
  networkBounds,
  type PoolSpecIssue,
  parseCIDR,
  parseIP,
} from '@tally-ipam/allocator';
import { echo } from '@tally-ipam/api-types';

/**
 * An IPPool spec's ranges as Metal3 reads them: the spec's fields this package needs, and the first and last address of
 * each entry of `spec.pools` with every problem of its own (field, value, message). The translation (ranges.ts) builds
 * its allocator pools on these bounds; the IPPool update webhook asks which range holds an address. Pure.
 */

/** The fields of a Metal3 `Pool` (one entry of `spec.pools`) this needs; `Metal3PoolRange` from api-types fits. */
export interface Metal3RangeInput {
  readonly start?: string | undefined;
  readonly end?: string | undefined;
  readonly subnet?: string | undefined;
  readonly prefix?: number | undefined;
  readonly gateway?: string | undefined;
  readonly dnsServers?: readonly string[] | undefined;
}

/** The fields of a Metal3 `IPPoolSpec` this needs; `Metal3IPPoolSpec` from api-types fits. */
export interface Metal3PoolSpecInput {
  readonly pools?: readonly Metal3RangeInput[] | undefined;
  readonly preAllocations?: Readonly<Record<string, string>> | undefined;
  readonly prefix?: number | undefined;
  readonly gateway?: string | undefined;
  readonly dnsServers?: readonly string[] | undefined;
  readonly namePrefix: string;
}

/** The address `text`, or undefined with an issue naming `field`. */
export function tryIP(field: string, text: string, issues: PoolSpecIssue[]): IP | undefined {
  try {
    return parseIP(text);
  } catch (error) {
    if (!(error instanceof AddressParseError)) throw error;
    issues.push({ field, value: echo(text), message: `"${echo(text)}" is not an IP address: ${error.reason}` });
    return undefined;
  }
}

/** A positive prefix (Metal3 reads 0 as "not set"). */
export function given(prefix: number | undefined): number | undefined {
  return prefix === undefined || prefix === 0 ? undefined : prefix;
}

/** The bounds of one range, checked against its own subnet. */
export interface RangeBounds {
  family: IPFamily;
  first: bigint;
  last: bigint;
  /** Prefix length of the network the allocator checks the range against (the subnet's, else the written one). */
  networkPrefix: number;
  subnetPrefix: number | undefined;
}

/** The bounds of `range` (Metal3's reading of start, end and subnet), or undefined with its issues pushed. */
export function rangeBounds(
  range: Metal3RangeInput,
  field: string,
  poolPrefix: number | undefined,
  issues: PoolSpecIssue[],
): RangeBounds | undefined {
  const before = issues.length;
  const start = range.start === undefined ? undefined : tryIP(`${field}.start`, range.start, issues);
  const end = range.end === undefined ? undefined : tryIP(`${field}.end`, range.end, issues);
  let subnet: ReturnType<typeof parseCIDR> | undefined;
  if (range.subnet !== undefined) {
    try {
      subnet = parseCIDR(range.subnet);
    } catch (error) {
      if (!(error instanceof AddressParseError)) throw error;
      issues.push({
        field: `${field}.subnet`,
        value: echo(range.subnet),
        message: `"${echo(range.subnet)}" is not a CIDR: ${error.reason}`,
      });
    }
  }
  if (issues.length > before) return undefined;
  if (start === undefined && subnet === undefined) {
    issues.push({ field, value: range, message: 'a pool needs start or subnet' });
    return undefined;
  }
  if (start !== undefined && end === undefined && subnet === undefined) {
    // Metal3 would count up from start to the end of the address space.
    issues.push({
      field,
      value: range,
      message: `start ${echo(range.start ?? '')} needs end or subnet to stop at`,
    });
    return undefined;
  }
  const family = start?.family ?? subnet?.family ?? 4;
  const subnetBounds = subnet ? networkBounds(subnet.family, subnet.network, subnet.prefixLength) : undefined;
  // Without start, Metal3 starts at the address written in the subnet plus one (192.168.0.1 for 192.168.0.0/24).
  const first = start?.value ?? (subnet ? subnet.address + 1n : 0n);
  const last = end?.value ?? subnetBounds?.last ?? first;
  for (const [name, ip] of [
    ['end', end],
    ['subnet', subnet],
  ] as const) {
    if (ip !== undefined && ip.family !== family) {
      issues.push({ field: `${field}.${name}`, value: range[name], message: `is not IPv${family} like the range` });
    }
  }
  if (issues.length > before) return undefined;
  if (last < first) {
    issues.push({
      field: start === undefined ? `${field}.subnet` : `${field}.end`,
      value: start === undefined ? range.subnet : range.end,
      message:
        start === undefined ? 'leaves no address after the one it names' : `is before start ${echo(range.start ?? '')}`,
    });
    return undefined;
  }
  if (subnetBounds) {
    const outside = (value: bigint) => value < subnetBounds.first || value > subnetBounds.last;
    const which = outside(first) ? 'start' : outside(last) ? 'end' : undefined;
    if (which !== undefined) {
      issues.push({
        field: `${field}.${which}`,
        value: range[which],
        message: `is outside the subnet ${echo(range.subnet ?? '')}`,
      });
      return undefined;
    }
  }
  const subnetPrefix = subnet?.prefixLength;
  return { family, first, last, networkPrefix: subnetPrefix ?? given(range.prefix) ?? poolPrefix ?? 0, subnetPrefix };
}

/**
 * The index of the first entry of `spec.pools` whose bounds hold `address` (start or the subnet's address plus one,
 * to end or the subnet's last address, as the translation reads them), or undefined. A range with problems of its
 * own is skipped, as Metal3's update webhook skips it (its problems are reported elsewhere); an unparseable address
 * is in no range.
 */
export function rangeIndexHolding(spec: Metal3PoolSpecInput, address: string): number | undefined {
  let ip: IP;
  try {
    ip = parseIP(address);
  } catch (error) {
    if (!(error instanceof AddressParseError)) throw error;
    return undefined;
  }
  const poolPrefix = given(spec.prefix);
  for (const [index, range] of (spec.pools ?? []).entries()) {
    const bounds = rangeBounds(range, `spec.pools[${index}]`, poolPrefix, []);
    if (bounds && bounds.family === ip.family && bounds.first <= ip.value && ip.value <= bounds.last) return index;
  }
  return undefined;
}
