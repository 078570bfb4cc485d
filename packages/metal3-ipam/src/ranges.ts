import {
  AddressParseError,
  type AddressPool,
  checkAllocatable,
  formatIP,
  type IP,
  type IPFamily,
  networkBounds,
  type PoolSpecIssue,
  parseCIDR,
  parseIP,
  tryBuildAddressPool,
} from '@tally-ipam/allocator';
import { echo } from '@tally-ipam/api-types';
import { Metal3PoolSpecError } from './errors.js';

/**
 * An IPPool spec (`ipam.metal3.io/v1alpha1`) turned into what the allocator serves: one address pool per entry of
 * `spec.pools`, each with the prefix, gateway and DNS servers an IPAddress from it carries, and the pre-allocations
 * placed in their ranges. Pure: no Kubernetes, no clock.
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

/** One range of the pool, ready to allocate from. */
export interface Metal3Range {
  /** Position in `spec.pools`. */
  readonly index: number;
  readonly family: IPFamily;
  /** First and last address handed out (inclusive), before the gateway and reserved addresses are taken out. */
  readonly first: bigint;
  readonly last: bigint;
  /** The allocator's pool: first..last minus every gateway of the spec and the subnet's reserved addresses. */
  readonly pool: AddressPool;
  /** Written to the IPAddress: the range's prefix, else the pool's, else the subnet's length; absent if none. */
  readonly prefix: number | undefined;
  /** Written to the IPAddress: the range's gateway, else the pool's (canonical text). */
  readonly gateway: string | undefined;
  /** Written to the IPAddress: the range's DNS servers when it lists any, else the pool's. */
  readonly dnsServers: readonly string[];
}

/** A pre-allocation: the address the claim of this name always receives, and the range it belongs to. */
export interface Metal3PreAllocation {
  readonly claimName: string;
  readonly address: IP;
  /** Canonical text of the address. */
  readonly text: string;
  readonly rangeIndex: number;
}

export interface Metal3PoolPlan {
  readonly namePrefix: string;
  readonly ranges: readonly Metal3Range[];
  /** By claim name: the pre-allocations that can be honoured. */
  readonly preAllocations: ReadonlyMap<string, Metal3PreAllocation>;
  /**
   * By claim name: pre-allocations that cannot be honoured (outside every range, a gateway, reserved, given to two
   * claims). As in Metal3 they fail only their own claim, not the pool; see {@link blockedByPreAllocations}.
   */
  readonly preAllocationIssues: ReadonlyMap<string, PoolSpecIssue>;
  /** Every parseable pre-allocated address, honoured or not: never handed out to any other claim. */
  readonly blockedByPreAllocations: readonly IP[];
}

export type Metal3Translation = { ok: true; plan: Metal3PoolPlan } | { ok: false; issues: readonly PoolSpecIssue[] };

function tryIP(field: string, text: string, issues: PoolSpecIssue[]): IP | undefined {
  try {
    return parseIP(text);
  } catch (error) {
    if (!(error instanceof AddressParseError)) throw error;
    issues.push({ field, value: echo(text), message: `"${echo(text)}" is not an IP address: ${error.reason}` });
    return undefined;
  }
}

/** A positive prefix (Metal3 reads 0 as "not set"). */
function given(prefix: number | undefined): number | undefined {
  return prefix === undefined || prefix === 0 ? undefined : prefix;
}

interface RangeBounds {
  family: IPFamily;
  first: bigint;
  last: bigint;
  /** Prefix length of the network the allocator checks the range against (the subnet's, else the written one). */
  networkPrefix: number;
  subnetPrefix: number | undefined;
}

function rangeBounds(
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

/** Turns an IPPool spec into ranges and placed pre-allocations, or lists every problem (field, value, message). */
export function translateIPPoolSpec(spec: Metal3PoolSpecInput): Metal3Translation {
  const issues: PoolSpecIssue[] = [];
  // Checked here too: objects written under Metal3's own CRD (no minimum, no check on IPv4) reach the translation.
  const checkPrefix = (field: string, prefix: number | undefined): void => {
    if (prefix !== undefined && !(Number.isInteger(prefix) && prefix >= 0 && prefix <= 128)) {
      issues.push({ field, value: prefix, message: `${prefix} is not a prefix length from 0 to 128` });
    }
  };
  checkPrefix('spec.prefix', spec.prefix);
  for (const [index, range] of (spec.pools ?? []).entries()) checkPrefix(`spec.pools[${index}].prefix`, range.prefix);
  const poolPrefix = given(spec.prefix);
  const poolGateway = spec.gateway === undefined ? undefined : tryIP('spec.gateway', spec.gateway, issues);
  // Every gateway named anywhere in the spec is kept out of every range of its family.
  const rangeGateways = (spec.pools ?? []).map((range, index) =>
    range.gateway === undefined ? undefined : tryIP(`spec.pools[${index}].gateway`, range.gateway, issues),
  );
  const gateways = [poolGateway, ...rangeGateways].filter((gateway): gateway is IP => gateway !== undefined);
  const isGateway = (ip: IP) => gateways.some((g) => g.family === ip.family && g.value === ip.value);

  const ranges: Metal3Range[] = [];
  for (const [index, range] of (spec.pools ?? []).entries()) {
    const field = `spec.pools[${index}]`;
    const bounds = rangeBounds(range, field, poolPrefix, issues);
    if (bounds === undefined) continue;
    if (range.gateway !== undefined && rangeGateways[index] === undefined) continue;
    const ownGateway = rangeGateways[index];
    const gateway = ownGateway ?? poolGateway;
    if (gateway && gateway.family !== bounds.family) {
      issues.push({
        field: ownGateway ? `${field}.gateway` : 'spec.gateway',
        value: formatIP(gateway),
        message: `is IPv${gateway.family} but ${field} is IPv${bounds.family}`,
      });
      continue;
    }
    const prefix = given(range.prefix) ?? poolPrefix ?? bounds.subnetPrefix;
    if (bounds.family === 4 && prefix !== undefined && prefix > 32) {
      issues.push({
        field: given(range.prefix) === undefined ? 'spec.prefix' : `${field}.prefix`,
        value: prefix,
        message: `${prefix} is longer than 32, the maximum for the IPv4 range ${field}`,
      });
      continue;
    }
    const text = (value: bigint) => formatIP({ family: bounds.family, value });
    const built = tryBuildAddressPool({
      addresses: [bounds.first === bounds.last ? text(bounds.first) : `${text(bounds.first)}-${text(bounds.last)}`],
      prefix: bounds.networkPrefix,
      excludedAddresses: gateways.filter((g) => g.family === bounds.family).map(formatIP),
    });
    if (!built.ok) {
      for (const issue of built.issues) {
        issues.push({ field, value: `${text(bounds.first)}-${text(bounds.last)}`, message: issue.message });
      }
      continue;
    }
    const ownDNS = range.dnsServers ?? [];
    ranges.push({
      index,
      family: bounds.family,
      first: bounds.first,
      last: bounds.last,
      pool: built.pool,
      prefix,
      gateway: gateway ? formatIP(gateway) : undefined,
      dnsServers: [...(ownDNS.length > 0 ? ownDNS : (spec.dnsServers ?? []))],
    });
  }

  if (issues.length > 0) return { ok: false, issues };

  const preAllocations = new Map<string, Metal3PreAllocation>();
  const preAllocationIssues = new Map<string, PoolSpecIssue>();
  const blockedByPreAllocations: IP[] = [];
  const claimOf = new Map<string, string>();
  for (const [claimName, addressText] of Object.entries(spec.preAllocations ?? {})) {
    const field = `spec.preAllocations[${echo(claimName)}]`;
    const problems: PoolSpecIssue[] = [];
    const address = tryIP(field, addressText, problems);
    const refuse = (message: string) =>
      preAllocationIssues.set(claimName, { field, value: echo(addressText), message });
    if (address === undefined) {
      preAllocationIssues.set(claimName, problems[0] ?? { field, value: addressText, message: 'not an IP address' });
      continue;
    }
    blockedByPreAllocations.push(address);
    const text = formatIP(address);
    const other = claimOf.get(text);
    if (other !== undefined) {
      refuse(`${text} is pre-allocated to ${echo(other)} too`);
      continue;
    }
    claimOf.set(text, claimName);
    // The first range that holds it, as Metal3 scans spec.pools in order.
    const range = ranges.find(
      (r) => r.family === address.family && r.first <= address.value && address.value <= r.last,
    );
    if (range === undefined) {
      refuse(`${text} is outside every range of spec.pools`);
    } else if (isGateway(address)) {
      refuse(`${text} is a gateway of the pool and is never handed out`);
    } else {
      const verdict = checkAllocatable(range.pool, address);
      if (verdict.allocatable) preAllocations.set(claimName, { claimName, address, text, rangeIndex: range.index });
      else refuse(`${text} ${verdict.detail} (spec.pools[${range.index}])`);
    }
  }
  return {
    ok: true,
    plan: { namePrefix: spec.namePrefix, ranges, preAllocations, preAllocationIssues, blockedByPreAllocations },
  };
}

/** Like {@link translateIPPoolSpec}, throwing a {@link Metal3PoolSpecError} that lists every problem. */
export function buildMetal3PoolPlan(spec: Metal3PoolSpecInput): Metal3PoolPlan {
  const result = translateIPPoolSpec(spec);
  if (!result.ok) throw new Metal3PoolSpecError(result.issues);
  return result.plan;
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
