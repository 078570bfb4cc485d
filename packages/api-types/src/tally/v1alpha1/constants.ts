import { IPAM_GROUP } from '../../ipam/v1beta2/constants.js';

/** Tally's pools live in the IPAM group next to the claims they serve, like the reference provider's pools. */
export const TALLY_GROUP = IPAM_GROUP;
export const TALLY_V1ALPHA1_VERSION = 'v1alpha1';
export const TALLY_V1ALPHA1_API_VERSION = `${TALLY_GROUP}/${TALLY_V1ALPHA1_VERSION}`;

export const TALLY_IP_POOL_KIND = 'TallyIPPool';
export const GLOBAL_TALLY_IP_POOL_KIND = 'GlobalTallyIPPool';
export const TALLY_PREFIX_POOL_KIND = 'TallyPrefixPool';
export const GLOBAL_TALLY_PREFIX_POOL_KIND = 'GlobalTallyPrefixPool';

/** The four pool kinds an IPAddressClaim's `poolRef.kind` may name for Tally to serve it. */
export const TALLY_POOL_KINDS = [
  TALLY_IP_POOL_KIND,
  GLOBAL_TALLY_IP_POOL_KIND,
  TALLY_PREFIX_POOL_KIND,
  GLOBAL_TALLY_PREFIX_POOL_KIND,
] as const;
export type TallyPoolKind = (typeof TALLY_POOL_KINDS)[number];

/** How a pool picks the next free address. */
export const ALLOCATION_STRATEGIES = ['LowestFree', 'Random', 'LeastRecentlyReleased'] as const;
export type AllocationStrategy = (typeof ALLOCATION_STRATEGIES)[number];
export const DEFAULT_ALLOCATION_STRATEGY: AllocationStrategy = 'LowestFree';

/** Default `allocationPrefixLength` of prefix pools (the reference provider's default: one /64 per claim). */
export const DEFAULT_ALLOCATION_PREFIX_LENGTH = 64;

/**
 * Bounds that keep the CEL rules inside the API server's cost budget (they multiply per list item and per
 * character) and match what real pools need.
 */
export const MAX_POOL_ENTRIES = 128;
export const MAX_RESERVATIONS = 128;
/** Longest textual IPv6 address (mixed notation with all zeros written out). */
export const MAX_IP_LENGTH = 45;
/** Longest entry: an IPv6 range "first-last" in the longest notation. */
export const MAX_ENTRY_LENGTH = 2 * MAX_IP_LENGTH + 1;

/** Condition type on pools. */
export const POOL_READY_CONDITION = 'Ready';
/** `Ready=True`: the spec is usable and at least one address (prefix) is free. */
export const POOL_READY_REASON = 'PoolReady';
/** `Ready=False`: every address (prefix) is allocated. Mirrors the claim reason of the same name. */
export const POOL_EXHAUSTED_REASON = 'PoolExhausted';
/** `Ready=False`: the spec passed admission but cannot be used (e.g. a reservation outside the pool). */
export const POOL_INVALID_SPEC_REASON = 'InvalidSpec';
/** `Ready=False`: the pool is being deleted and serves no new claims. */
export const POOL_DELETING_REASON = 'Deleting';

/** Provider label value clusterctl expects on IPAM provider components (`cluster.x-k8s.io/provider`). */
export const TALLY_PROVIDER_LABEL_VALUE = 'ipam-tally';
