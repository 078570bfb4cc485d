import * as z from 'zod';
import {
  GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND,
  IN_CLUSTER_DEFAULT_ALLOCATION_PREFIX_LENGTH,
  IN_CLUSTER_PREFIX_POOL_KIND,
} from './constants.js';
import { inClusterPoolObject } from './pool-object.js';

/**
 * `InClusterPrefixPool` / `GlobalInClusterPrefixPool` of `ipam.cluster.x-k8s.io/v1alpha2` as the in-cluster provider
 * v1.1.0 declares them (`api/v1alpha2/inclusterprefixpool_types.go`), exactly, for the same reason as the IP pools
 * (see ip-pool.ts). Fields in controller-gen's alphabetical order.
 */

const GoInt = z.int();

export const InClusterPrefixPoolSpec = z
  .object({
    allocationPrefixLength: GoInt.min(1)
      .max(128)
      .default(IN_CLUSTER_DEFAULT_ALLOCATION_PREFIX_LENGTH)
      .describe('Length of every sub-prefix handed out (64: one /64 per claim); at least each prefix length.'),
    excludedPrefixes: z
      .array(z.string())
      .describe('IPs, CIDRs and ranges; a candidate sub-prefix overlapping one is never handed out.')
      .optional(),
    gateway: z
      .string()
      .describe('Next hop written to every IPAddress; informational only, it blocks no sub-prefix.')
      .optional(),
    prefixes: z.array(z.string()).describe('IPv6 CIDRs, network-aligned, that sub-prefixes are cut from.'),
  })
  .describe('The desired state of an InClusterPrefixPool or GlobalInClusterPrefixPool.');
export type InClusterPrefixPoolSpec = z.infer<typeof InClusterPrefixPoolSpec>;
/** The spec as a client may send it, before the default fills `allocationPrefixLength` (what admission sees). */
export type InClusterPrefixPoolSpecInput = z.input<typeof InClusterPrefixPoolSpec>;

export const InClusterPrefixPoolStatusAddresses = z
  .object({
    free: GoInt.describe('Sub-prefixes that can still be handed out.'),
    outOfRange: GoInt.describe(
      'Allocated sub-prefixes the spec no longer allows (outside the prefixes, excluded, or of another length).',
    ),
    total: GoInt.describe('Sub-prefixes the pool can hand out.'),
    used: GoInt.describe('Allocated sub-prefixes.'),
  })
  .describe('Sub-prefix counts of the pool; counts too large for a JSON integer are capped.');
export type InClusterPrefixPoolStatusAddresses = z.infer<typeof InClusterPrefixPoolStatusAddresses>;

/** The JSON name is `ipAddresses` here too (the reference keeps one status shape for both pool types). */
export const InClusterPrefixPoolStatus = z
  .object({ ipAddresses: InClusterPrefixPoolStatusAddresses.optional() })
  .describe('The observed state of an InClusterPrefixPool or GlobalInClusterPrefixPool.');
export type InClusterPrefixPoolStatus = z.infer<typeof InClusterPrefixPoolStatus>;

export const InClusterPrefixPool = inClusterPoolObject(
  IN_CLUSTER_PREFIX_POOL_KIND,
  InClusterPrefixPoolSpec,
  InClusterPrefixPoolStatus,
  'A namespaced pool of IPv6 sub-prefixes; claims in its namespace may reference it.',
);
export type InClusterPrefixPool = z.infer<typeof InClusterPrefixPool>;

export const GlobalInClusterPrefixPool = inClusterPoolObject(
  GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND,
  InClusterPrefixPoolSpec,
  InClusterPrefixPoolStatus,
  'A cluster-scoped pool of IPv6 sub-prefixes; claims in any namespace may reference it.',
);
export type GlobalInClusterPrefixPool = z.infer<typeof GlobalInClusterPrefixPool>;
