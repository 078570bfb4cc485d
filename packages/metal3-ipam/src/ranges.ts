import {
  type AddressPool,
  checkAllocatable,
  formatIP,
  type IP,
  type IPFamily,
  type PoolSpecIssue,
  tryBuildAddressPool,
} from '@tally-ipam/allocator';
import { echo } from '@tally-ipam/api-types';
import { Metal3PoolSpecError } from './errors.js';
import { given, type Metal3PoolSpecInput, rangeBounds, tryIP } from './range-bounds.js';

/**
 * An IPPool spec (`ipam.metal3.io/v1alpha1`) turned into what the allocator serves: one address pool per entry of
 * `spec.pools`, each with the prefix, gateway and DNS servers an IPAddress from it carries, and the pre-allocations
 * placed in their ranges. Pure: no Kubernetes, no clock.
 */

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
