/**
 * An address pool's spec turned into sets: what is listed, what is excluded, what is reserved, and what is left
 * to allocate. Mirrors the reference in-cluster provider (`PoolSpecToIPSet` and its webhook) with two deliberate
 * differences, both documented in the README: every problem is reported at once, and point-to-point subnets
 * (IPv4 /31 and /32, IPv6 /127 and /128) have no reserved addresses.
 */
import { networkBounds, parseAddressEntry } from './entry.js';
import { PoolSpecError, type PoolSpecIssue } from './errors.js';
import { type Interval, IntervalSet } from './interval-set.js';
import {
  AddressParseError,
  addressBits,
  formatIP,
  type IP,
  type IPFamily,
  isValidPrefixLength,
  parseIP,
} from './ip.js';

/** The fields of an InClusterIPPool-style spec that decide which addresses can be handed out. */
export interface AddressPoolSpec {
  readonly addresses: readonly string[];
  readonly prefix: number;
  readonly gateway?: string | undefined;
  readonly excludedAddresses?: readonly string[] | undefined;
  readonly allocateReservedIPAddresses?: boolean | undefined;
}

export type ReservedRole = 'gateway' | 'network' | 'broadcast' | 'subnet-router-anycast';

export interface ReservedAddress {
  readonly role: ReservedRole;
  readonly value: bigint;
}

export type AllocatabilityVerdict =
  | { readonly allocatable: true }
  | {
      readonly allocatable: false;
      readonly reason: 'outside-pool' | 'excluded' | 'reserved';
      /** Human-readable why, e.g. `is the IPv4 broadcast address of 10.0.0.0/24`. */
      readonly detail: string;
    };

export interface AddressPool {
  readonly family: IPFamily;
  readonly prefix: number;
  /** The subnet: `prefix` applied to the lowest listed address, as the reference provider does. */
  readonly subnet: Interval;
  readonly gateway: IP | undefined;
  /** The union of `addresses`. */
  readonly listed: IntervalSet;
  /** The union of `excludedAddresses`. */
  readonly excluded: IntervalSet;
  /** The gateway and, unless `allocateReservedIPAddresses`, the subnet's network/broadcast/anycast addresses. */
  readonly reserved: readonly ReservedAddress[];
  /** listed − excluded − reserved: what the allocator hands out. */
  readonly allocatable: IntervalSet;
}

const RESERVED_DESCRIPTIONS: Record<ReservedRole, string> = {
  gateway: "is the pool's gateway",
  network: 'is the IPv4 network address of',
  broadcast: 'is the IPv4 broadcast address of',
  'subnet-router-anycast': 'is the IPv6 subnet-router anycast address of',
};

export function formatSubnet(pool: AddressPool): string {
  return `${formatIP({ family: pool.family, value: pool.subnet.first })}/${pool.prefix}`;
}

/** Whether an address could ever be handed out by this pool, and if not, why; independent of allocation state. */
export function checkAllocatable(pool: AddressPool, ip: IP): AllocatabilityVerdict {
  if (ip.family !== pool.family) {
    return { allocatable: false, reason: 'outside-pool', detail: `is IPv${ip.family}, the pool is IPv${pool.family}` };
  }
  if (!pool.listed.contains(ip.value)) {
    return { allocatable: false, reason: 'outside-pool', detail: "is not in the pool's addresses" };
  }
  const reserved = pool.reserved.find((entry) => entry.value === ip.value);
  if (reserved !== undefined) {
    const description = RESERVED_DESCRIPTIONS[reserved.role];
    const detail = reserved.role === 'gateway' ? description : `${description} ${formatSubnet(pool)}`;
    return { allocatable: false, reason: 'reserved', detail };
  }
  if (pool.excluded.contains(ip.value)) {
    return { allocatable: false, reason: 'excluded', detail: "is in the pool's excludedAddresses" };
  }
  return { allocatable: true };
}

/**
 * The subnet's reserved addresses. IPv4 /31 and /32 (RFC 3021) and IPv6 /127 (RFC 6164) and /128 have none:
 * there every address is a host, and reserving would leave a /32 or /128 pool empty.
 */
function subnetReservations(family: IPFamily, prefix: number, subnet: Interval): ReservedAddress[] {
  const hostBits = addressBits(family) - prefix;
  if (hostBits < 2) return [];
  if (family === 4) {
    return [
      { role: 'network', value: subnet.first },
      { role: 'broadcast', value: subnet.last },
    ];
  }
  return [{ role: 'subnet-router-anycast', value: subnet.first }];
}

interface ParsedList {
  readonly intervals: Interval[];
  readonly entries: { index: number; family: IPFamily; first: bigint; last: bigint; text: string }[];
}

function parseEntries(field: string, texts: readonly string[], issues: PoolSpecIssue[]): ParsedList {
  const parsed: ParsedList = { intervals: [], entries: [] };
  texts.forEach((text, index) => {
    try {
      const entry = parseAddressEntry(text);
      parsed.entries.push({ index, family: entry.family, first: entry.first, last: entry.last, text });
      parsed.intervals.push({ first: entry.first, last: entry.last });
    } catch (error) {
      if (!(error instanceof AddressParseError)) throw error;
      issues.push({ field: `${field}[${index}]`, value: text, message: error.message });
    }
  });
  return parsed;
}

function checkFamilies(field: string, list: ParsedList, family: IPFamily, issues: PoolSpecIssue[]): void {
  for (const entry of list.entries) {
    if (entry.family !== family) {
      issues.push({
        field: `${field}[${entry.index}]`,
        value: entry.text,
        message: `is IPv${entry.family} but the pool is IPv${family} (from spec.addresses)`,
      });
    }
  }
}

type PoolBuild = { ok: true; pool: AddressPool } | { ok: false; issues: readonly PoolSpecIssue[] };

/** Builds the pool, or lists every problem with the spec (field path, value, message). */
export function tryBuildAddressPool(spec: AddressPoolSpec): PoolBuild {
  const issues: PoolSpecIssue[] = [];
  if (spec.addresses.length === 0) {
    issues.push({ field: 'spec.addresses', value: [], message: 'at least one address, range or CIDR is required' });
  }
  const addresses = parseEntries('spec.addresses', spec.addresses, issues);
  const excluded = parseEntries('spec.excludedAddresses', spec.excludedAddresses ?? [], issues);
  const firstEntry = addresses.entries[0];
  const family: IPFamily = firstEntry?.family ?? 4;
  if (firstEntry !== undefined) {
    checkFamilies('spec.addresses', addresses, family, issues);
    checkFamilies('spec.excludedAddresses', excluded, family, issues);
  }

  let gateway: IP | undefined;
  if (spec.gateway !== undefined && spec.gateway !== '') {
    try {
      gateway = parseIP(spec.gateway);
      if (firstEntry !== undefined && gateway.family !== family) {
        issues.push({
          field: 'spec.gateway',
          value: spec.gateway,
          message: `is IPv${gateway.family} but the pool is IPv${family}`,
        });
      }
    } catch (error) {
      if (!(error instanceof AddressParseError)) throw error;
      issues.push({ field: 'spec.gateway', value: spec.gateway, message: error.message });
    }
  }

  // Without a parsable address the family is unknown, so only the widest bound can be checked.
  const prefixFamily: IPFamily = firstEntry === undefined ? 6 : family;
  if (!isValidPrefixLength(prefixFamily, spec.prefix)) {
    const poolKind = firstEntry === undefined ? '' : ` for an IPv${family} pool`;
    issues.push({
      field: 'spec.prefix',
      value: spec.prefix,
      message: `must be an integer from 0 to ${addressBits(prefixFamily)}${poolKind}`,
    });
  }
  if (issues.length > 0 || firstEntry === undefined) return { ok: false, issues };

  const listed = IntervalSet.of(addresses.intervals);
  const lowest = listed.min!;
  const subnet = networkBounds(family, lowest, spec.prefix);
  const subnetText = `${formatIP({ family, value: subnet.first })}/${spec.prefix}`;
  for (const entry of addresses.entries) {
    if (entry.first < subnet.first || entry.last > subnet.last) {
      issues.push({
        field: `spec.addresses[${entry.index}]`,
        value: entry.text,
        message: `is not inside the pool's subnet ${subnetText} (spec.prefix applied to the lowest address)`,
      });
    }
  }
  if (issues.length > 0) return { ok: false, issues };

  const reserved = spec.allocateReservedIPAddresses ? [] : subnetReservations(family, spec.prefix, subnet);
  if (gateway !== undefined) reserved.unshift({ role: 'gateway', value: gateway.value });
  const excludedSet = IntervalSet.of(excluded.intervals);
  const allocatable = listed.subtract(excludedSet).subtract(IntervalSet.values(reserved.map((entry) => entry.value)));
  return {
    ok: true,
    pool: { family, prefix: spec.prefix, subnet, gateway, listed, excluded: excludedSet, reserved, allocatable },
  };
}

/** Builds the pool; throws a PoolSpecError listing every problem. */
export function buildAddressPool(spec: AddressPoolSpec): AddressPool {
  const result = tryBuildAddressPool(spec);
  if (!result.ok) throw new PoolSpecError(result.issues);
  return result.pool;
}
