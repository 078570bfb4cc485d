import {
  AddressParseError,
  checkPrefixAllocatable,
  type PoolSpecIssue,
  type PrefixPool,
  type PrefixPoolSpec,
  parseCIDR,
  toStatusCount,
  tryBuildPrefixPool,
} from '@tally-ipam/allocator';
import type { InClusterPrefixPoolSpecInput, InClusterPrefixPoolStatusAddresses } from './prefix-pool.js';
import { effectiveAllocationPrefixLength, validateInClusterPrefixPoolSpecUpdate } from './prefix-pool-validation.js';
import { type InClusterPoolIssue, issue } from './validation.js';
import { goEntryWithoutZones } from './zones.js';

/**
 * An in-cluster prefix pool as Tally's prefix allocator takes it. The reference (v1.1.0, `internal/poolutil/prefix.go`)
 * hands out the lowest `/allocationPrefixLength` block inside the union of `prefixes` that overlaps no exclusion and
 * no in-use prefix; the allocator's blocks are exactly those, lowest first. Exclusions lose their zones as the
 * reference's IPSet drops them (zones.ts); the gateway blocks nothing (it is only written to IPAddresses).
 */
export type InClusterPrefixSpace =
  | { readonly ok: true; readonly spec: PrefixPoolSpec; readonly pool: PrefixPool }
  | { readonly ok: false; readonly issues: readonly PoolSpecIssue[] };

export function inClusterPrefixSpace(spec: InClusterPrefixPoolSpecInput): InClusterPrefixSpace {
  const mapped: PrefixPoolSpec = {
    prefixes: spec.prefixes,
    allocationPrefixLength: effectiveAllocationPrefixLength(spec.allocationPrefixLength),
    excludedPrefixes: spec.excludedPrefixes?.map(goEntryWithoutZones),
  };
  const built = tryBuildPrefixPool(mapped);
  return built.ok ? { ok: true, spec: mapped, pool: built.pool } : { ok: false, issues: built.issues };
}

/** An IPAddress's allocation as the prefix rules read it: `spec.address` and `spec.prefix` (absent on some objects). */
export interface InClusterPrefixInUse {
  readonly address: string;
  readonly prefix: number | undefined;
}

/**
 * The reference's `PrefixIsAllocatable` of an IPAddress (`PrefixFromIPAddress`, then the rule): `address/prefix`
 * must parse as a CIDR (no prefix, a zone or a bad text: not allocatable), is taken with its host bits cleared, and
 * must be of the allocation length, inside the prefixes and overlap no exclusion.
 */
export function prefixIsAllocatable(pool: PrefixPool, inUse: InClusterPrefixInUse): boolean {
  if (inUse.prefix === undefined) return false;
  let cidr: ReturnType<typeof parseCIDR>;
  try {
    cidr = parseCIDR(`${inUse.address}/${inUse.prefix}`);
  } catch (error) {
    if (error instanceof AddressParseError) return false;
    throw error;
  }
  return checkPrefixAllocatable(pool, { family: cidr.family, network: cidr.network, prefixLength: cidr.prefixLength })
    .allocatable;
}

/**
 * The reference's `status.ipAddresses` of a prefix pool (`genericPrefixReconcile`), which counts differently from its
 * IP pools: `total` is the allocatable blocks, `used` every IPAddress of the pool (a duplicate twice), `outOfRange`
 * every IPAddress that is not allocatable (per object, not per distinct prefix), and `free` is
 * `max(0, total − used + outOfRange)`: an out-of-range allocation takes no allocatable block. Counts too large for a
 * JSON number are capped (row 15 of docs/design/in-cluster-drop-in.md).
 */
export function inClusterPrefixPoolStatusAddresses(
  pool: PrefixPool,
  inUse: readonly InClusterPrefixInUse[],
): InClusterPrefixPoolStatusAddresses {
  const total = toStatusCount(pool.blocks.size);
  const outOfRange = inUse.filter((entry) => !prefixIsAllocatable(pool, entry)).length;
  return { total, used: inUse.length, free: Math.max(0, total - inUse.length + outOfRange), outOfRange };
}

/**
 * The IPAddresses a new spec would leave unallocatable (the reference's third update rule), by `spec.address`,
 * sorted as the reference sorts them (by text). A spec the allocator cannot build leaves every one unallocatable, as
 * the reference's rule answers false when its sets cannot be built.
 */
export function unallocatablePrefixes(
  spec: InClusterPrefixPoolSpecInput,
  inUse: readonly InClusterPrefixInUse[],
): string[] {
  const space = inClusterPrefixSpace(spec);
  const outside = inUse.filter((entry) => !space.ok || !prefixIsAllocatable(space.pool, entry));
  return outside.map((entry) => entry.address).sort();
}

/**
 * Update, every rule of the reference's `ValidateUpdate` in its order: the spec rules, `allocationPrefixLength`
 * unchanged, then every IPAddress of the old pool (`inUse`, listed by the caller as the reference lists them) still
 * allocatable under the new spec (`allocations-allocatable`, one issue naming them all).
 */
export function validateInClusterPrefixPoolUpdate(
  oldSpec: InClusterPrefixPoolSpecInput | undefined,
  newSpec: InClusterPrefixPoolSpecInput | undefined,
  inUse: readonly InClusterPrefixInUse[],
): InClusterPoolIssue[] {
  const issues = validateInClusterPrefixPoolSpecUpdate(oldSpec, newSpec);
  // The spec rules passed, so there is a new spec with prefixes.
  if (issues.length > 0 || newSpec === undefined) return issues;
  const outside = unallocatablePrefixes(newSpec, inUse);
  if (outside.length === 0) return [];
  return [
    issue(
      'allocations-allocatable',
      'spec',
      outside,
      `existing allocations become non-allocatable: ${outside.length} IPAddresses would be outside the prefixes, ` +
        'excluded, or of another length',
    ),
  ];
}
