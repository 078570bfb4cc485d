import {
  type AddressPool,
  type AddressPoolSpec,
  addressBits,
  formatIP,
  type IntervalSet,
  type IPFamily,
  type PoolSpecIssue,
  parseIP,
  toStatusCount,
  tryBuildAddressPool,
} from '@tally-ipam/allocator';
import type { InClusterIPPoolSpec, InClusterIPPoolStatusIPAddresses } from './ip-pool.js';
import { goEntryWithoutZones, goGatewayWithoutZone } from './zones.js';

/**
 * The in-cluster provider's pool spec as Tally's allocator takes it. The fields are the same; one rule is not:
 * the reference removes the subnet's first address (and, for IPv4, its last) whatever the subnet's size, while the
 * allocator reserves none in point-to-point subnets (IPv4 /31 and /32, IPv6 /127 and /128). So that a pool hands
 * out exactly what it handed out under the reference, those addresses are added to the exclusions here: a /32 or
 * /128 pool stays empty and a /31 pool stays empty, as they were.
 */
export type InClusterAddressSpace =
  | { readonly ok: true; readonly spec: AddressPoolSpec; readonly pool: AddressPool }
  | { readonly ok: false; readonly issues: readonly PoolSpecIssue[] };

/** Host bits below which the allocator reserves nothing (its point-to-point rule). */
const POINT_TO_POINT_HOST_BITS = 2;

function pointToPointReservations(family: IPFamily, prefix: number, subnet: { first: bigint; last: bigint }): string[] {
  if (addressBits(family) - prefix >= POINT_TO_POINT_HOST_BITS) return [];
  const first = formatIP({ family, value: subnet.first });
  if (family === 6) return [first];
  const last = formatIP({ family, value: subnet.last });
  return first === last ? [first] : [first, last];
}

/** The allocator's view of an in-cluster pool spec, and the built pool; or the allocator's problems with it. */
export function inClusterAddressSpace(spec: InClusterIPPoolSpec): InClusterAddressSpace {
  // Zones are dropped as the reference drops them (zones.ts); the gateway written to IPAddresses stays as written.
  const base: AddressPoolSpec = {
    addresses: spec.addresses.map(goEntryWithoutZones),
    prefix: spec.prefix,
    gateway: spec.gateway === undefined ? undefined : goGatewayWithoutZone(spec.gateway),
    excludedAddresses: spec.excludedAddresses?.map(goEntryWithoutZones),
    allocateReservedIPAddresses: spec.allocateReservedIPAddresses,
  };
  const built = tryBuildAddressPool(base);
  if (!built.ok) return { ok: false, issues: built.issues };
  if (spec.allocateReservedIPAddresses === true) return { ok: true, spec: base, pool: built.pool };
  const extra = pointToPointReservations(built.pool.family, built.pool.prefix, built.pool.subnet);
  if (extra.length === 0) return { ok: true, spec: base, pool: built.pool };
  const mapped: AddressPoolSpec = { ...base, excludedAddresses: [...(base.excludedAddresses ?? []), ...extra] };
  const rebuilt = tryBuildAddressPool(mapped);
  // Adding single addresses of the pool's own family to the exclusions cannot make a valid spec invalid.
  if (!rebuilt.ok)
    throw new Error(`in-cluster address space: exclusions broke a valid spec: ${rebuilt.issues[0]?.message}`);
  return { ok: true, spec: mapped, pool: rebuilt.pool };
}

/**
 * The distinct addresses among `inUse` (IPAddress spec addresses) that the set does not hold, in canonical text; text
 * that does not parse is skipped, as the reference skips it (it cannot be in the pool's ranges).
 */
export function addressesOutside(allocatable: IntervalSet, family: IPFamily, inUse: readonly string[]): Set<string> {
  const outside = new Set<string>();
  for (const text of inUse) {
    let ip: ReturnType<typeof parseIP>;
    try {
      ip = parseIP(text);
    } catch {
      continue;
    }
    if (ip.family !== family || !allocatable.contains(ip.value)) outside.add(formatIP(ip));
  }
  return outside;
}

/**
 * The reference's `status.ipAddresses` for a pool and the addresses of its IPAddresses, counted its way:
 * `used` counts IPAddress objects (a duplicate address counts twice), `outOfRange` distinct addresses outside the
 * allocatable set (unparsable ones are skipped), `free` is `total − used` and so can go below zero when addresses
 * are out of range. Counts too large for a JSON number are capped (the reference caps at Go's MaxInt64, which a
 * JavaScript number cannot hold exactly).
 */
export function inClusterIPPoolStatusAddresses(
  allocatable: IntervalSet,
  family: IPFamily,
  inUse: readonly string[],
): InClusterIPPoolStatusIPAddresses {
  const outside = addressesOutside(allocatable, family, inUse);
  const total = toStatusCount(allocatable.size);
  return { total, used: inUse.length, free: total - inUse.length, outOfRange: outside.size };
}
