/**
 * A stored pool's spec, parsed for its kind into what `buildPoolAllocation` builds from: Tally's four kinds, and the
 * in-cluster provider's IP pool kinds mapped onto Tally's address pool spec, its prefix pool kinds onto Tally's
 * prefix pool spec.
 */
import type { AddressPoolSpec } from '@tally-ipam/allocator';
import {
  echo,
  GLOBAL_IN_CLUSTER_IP_POOL_KIND,
  GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND,
  GLOBAL_TALLY_IP_POOL_KIND,
  GLOBAL_TALLY_PREFIX_POOL_KIND,
  IN_CLUSTER_IP_POOL_KIND,
  IN_CLUSTER_PREFIX_POOL_KIND,
  inClusterAddressSpace,
  inClusterPrefixSpace,
  parseGlobalInClusterIPPool,
  parseGlobalInClusterPrefixPool,
  parseGlobalTallyIPPool,
  parseGlobalTallyPrefixPool,
  parseInClusterIPPool,
  parseInClusterPrefixPool,
  parseTallyIPPool,
  parseTallyPrefixPool,
  TALLY_IP_POOL_KIND,
  TALLY_PREFIX_POOL_KIND,
  type TallyIPPoolSpec,
  type TallyPrefixPoolSpec,
} from '@tally-ipam/api-types';
import type { ServedPoolKind } from './pool-kinds.js';

/**
 * What an address pool's allocation state needs of its spec beyond the address space: Tally's IP pool spec, or the
 * in-cluster provider's mapped onto it (LowestFree, no reservations, the gateway as written).
 */
export type AddressAllocationSpec = Pick<
  TallyIPPoolSpec,
  'prefix' | 'gateway' | 'allocationStrategy' | 'addressReuseGracePeriodSeconds' | 'reservations'
>;

/** What a prefix pool's allocation state needs of its spec: Tally's prefix pool spec, or the in-cluster one mapped. */
export type PrefixAllocationSpec = Pick<
  TallyPrefixPoolSpec,
  'prefixes' | 'allocationPrefixLength' | 'excludedPrefixes' | 'gateway'
>;

export type ParsedPoolSpec =
  | { readonly ok: true; readonly prefix: PrefixAllocationSpec }
  | {
      readonly ok: true;
      readonly address: AddressPoolSpec;
      readonly allocation: AddressAllocationSpec;
      readonly releaseDelayMs: number;
    }
  | { readonly ok: false; readonly message: string };

/**
 * A stored pool's spec (unvalidated) parsed for its kind: a prefix pool's spec, or an address pool's address space and
 * allocation spec.
 */
export function parsePoolSpec(kind: ServedPoolKind, pool: unknown): ParsedPoolSpec {
  switch (kind) {
    case TALLY_IP_POOL_KIND:
    case GLOBAL_TALLY_IP_POOL_KIND: {
      const parsed = kind === TALLY_IP_POOL_KIND ? parseTallyIPPool(pool) : parseGlobalTallyIPPool(pool);
      if (!parsed.success) return { ok: false, message: parsed.error.message };
      const spec = parsed.data.spec;
      return { ok: true, address: spec, allocation: spec, releaseDelayMs: 0 };
    }
    case TALLY_PREFIX_POOL_KIND:
    case GLOBAL_TALLY_PREFIX_POOL_KIND: {
      const parsed = kind === TALLY_PREFIX_POOL_KIND ? parseTallyPrefixPool(pool) : parseGlobalTallyPrefixPool(pool);
      return parsed.success ? { ok: true, prefix: parsed.data.spec } : { ok: false, message: parsed.error.message };
    }
    case IN_CLUSTER_IP_POOL_KIND:
    case GLOBAL_IN_CLUSTER_IP_POOL_KIND:
      return parseInClusterPoolSpec(kind, pool);
    case IN_CLUSTER_PREFIX_POOL_KIND:
    case GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND:
      return parseInClusterPrefixPoolSpec(kind, pool);
  }
}

/**
 * An in-cluster prefix pool: its blocks are `inClusterPrefixSpace`'s (the reference's candidates, zones dropped from
 * the exclusions), handed out lowest first as the reference does; the gateway is written to IPAddresses as written
 * and blocks nothing. The reference's prefix pools have no grace period: a released prefix is free at once.
 */
function parseInClusterPrefixPoolSpec(
  kind: typeof IN_CLUSTER_PREFIX_POOL_KIND | typeof GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND,
  pool: unknown,
): ParsedPoolSpec {
  const parsed =
    kind === IN_CLUSTER_PREFIX_POOL_KIND ? parseInClusterPrefixPool(pool) : parseGlobalInClusterPrefixPool(pool);
  if (!parsed.success) return { ok: false, message: parsed.error.message };
  const spec = parsed.data.spec;
  // The reference's webhook refuses a pool without a spec by its rule on spec.prefixes; say the same here.
  if (spec === undefined) return { ok: false, message: 'spec.prefixes: prefixes is required (value: no spec)' };
  const space = inClusterPrefixSpace(spec);
  if (!space.ok) return { ok: false, message: issuesMessage(space.issues) };
  return {
    ok: true,
    prefix: {
      prefixes: [...space.spec.prefixes],
      allocationPrefixLength: space.spec.allocationPrefixLength,
      excludedPrefixes: space.spec.excludedPrefixes === undefined ? undefined : [...space.spec.excludedPrefixes],
      gateway: spec.gateway === undefined || spec.gateway === '' ? undefined : spec.gateway,
    },
  };
}

/**
 * An in-cluster IP pool: its address space is `inClusterAddressSpace`'s (the reference's point-to-point rule and
 * zones), handed out lowest first as the reference does. The gateway written to IPAddresses is the spec's text, zone
 * and all, as the reference writes it; the allocator only sees it without the zone.
 */
function parseInClusterPoolSpec(
  kind: typeof IN_CLUSTER_IP_POOL_KIND | typeof GLOBAL_IN_CLUSTER_IP_POOL_KIND,
  pool: unknown,
): ParsedPoolSpec {
  const parsed = kind === IN_CLUSTER_IP_POOL_KIND ? parseInClusterIPPool(pool) : parseGlobalInClusterIPPool(pool);
  if (!parsed.success) return { ok: false, message: parsed.error.message };
  const spec = parsed.data.spec;
  // The reference's webhook refuses a pool without a spec by its rule on spec.addresses; say the same here.
  if (spec === undefined) return { ok: false, message: 'spec.addresses: a pool needs addresses (value: no spec)' };
  const space = inClusterAddressSpace(spec);
  if (!space.ok) return { ok: false, message: issuesMessage(space.issues) };
  return {
    ok: true,
    address: space.spec,
    allocation: {
      prefix: spec.prefix,
      gateway: spec.gateway,
      allocationStrategy: 'LowestFree',
      // The reference's grace period holds the deletion instead (row 16); the address is free once released.
      addressReuseGracePeriodSeconds: 0,
      reservations: [],
    },
    releaseDelayMs: (spec.addressReuseGracePeriodSeconds ?? 0) * 1000,
  };
}

/** Validation issues as one message, each naming its field and a cut value. */
export function issuesMessage(issues: readonly { field: string; value: unknown; message: string }[]): string {
  return issues
    .map((issue) => `${issue.field}: ${issue.message} (value: ${echo(JSON.stringify(issue.value) ?? '')})`)
    .join('; ');
}
