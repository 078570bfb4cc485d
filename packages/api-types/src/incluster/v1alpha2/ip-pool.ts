import * as z from 'zod';
import { GLOBAL_IN_CLUSTER_IP_POOL_KIND, IN_CLUSTER_IP_POOL_KIND } from './constants.js';
import { inClusterPoolObject } from './pool-object.js';

/**
 * `InClusterIPPool` / `GlobalInClusterIPPool` of `ipam.cluster.x-k8s.io/v1alpha2`, field for field as the in-cluster
 * provider v1.1.0 declares them (`api/v1alpha2/inclusterippool_types.go`): the same JSON names, types, optionality
 * and bounds, and nothing more. Unlike Tally's own kinds there are no length limits or CEL rules here: a pool the
 * reference's API server accepted must be accepted unchanged when Tally owns the CRD, or a take-over would strand
 * objects that already exist. The reference checks the rest in its webhook; `validation.ts` mirrors that.
 *
 * Fields are in alphabetical order, as controller-gen writes them, so the generated `required` lists match.
 */

/** Go `int`: an integer of any size the API server stores (int64); counts above it are reported as MaxInt. */
const GoInt = z.int();

export const InClusterIPPoolSpec = z
  .object({
    addressReuseGracePeriodSeconds: z
      .int()
      .min(0)
      .max(2147483647)
      .meta({ format: 'int32' })
      .describe(
        'Seconds a released address is held before it can be handed out again (rolling upgrades, switch ARP ' +
          'caches); while held, the claim and IPAddress deletions wait. Unset or 0: reused at once.',
      )
      .optional(),
    addresses: z
      .array(z.string())
      .describe('Addresses to hand out: single IPs, CIDRs and first-last ranges; need not be contiguous.'),
    allocateReservedIPAddresses: z
      .boolean()
      .describe(
        "Also hand out the subnet's first address (IPv4 network, IPv6 subnet-router anycast) and, for IPv4, its " +
          'last (broadcast); the subnet is spec.prefix applied to the lowest address.',
      )
      .optional(),
    excludedAddresses: z.array(z.string()).describe('Single IPs, CIDRs and ranges never handed out.').optional(),
    gateway: z.string().describe('Gateway written to every IPAddress; never handed out.').optional(),
    prefix: GoInt.min(0).max(128).describe('Prefix length of the network, written to every IPAddress.'),
  })
  .describe('The desired state of an InClusterIPPool or GlobalInClusterIPPool.');
export type InClusterIPPoolSpec = z.infer<typeof InClusterIPPoolSpec>;

export const InClusterIPPoolStatusIPAddresses = z
  .object({
    free: GoInt.describe('Addresses that can still be handed out (total minus used).'),
    outOfRange: GoInt.describe("Allocated addresses the pool's addresses no longer contain."),
    total: GoInt.describe('Addresses the pool can hand out.'),
    used: GoInt.describe('Allocated addresses, in range or not.'),
  })
  .describe('Address counts of the pool; counts too large for a JSON integer are capped.');
export type InClusterIPPoolStatusIPAddresses = z.infer<typeof InClusterIPPoolStatusIPAddresses>;

/** Go `InClusterIPPoolStatus`: the Go field is `Addresses`, its JSON name `ipAddresses`, the name on the wire. */
export const InClusterIPPoolStatus = z
  .object({ ipAddresses: InClusterIPPoolStatusIPAddresses.optional() })
  .describe('The observed state of an InClusterIPPool or GlobalInClusterIPPool.');
export type InClusterIPPoolStatus = z.infer<typeof InClusterIPPoolStatus>;

export const InClusterIPPool = inClusterPoolObject(
  IN_CLUSTER_IP_POOL_KIND,
  InClusterIPPoolSpec,
  InClusterIPPoolStatus,
  'A namespaced pool of single addresses; claims in its namespace may reference it.',
);
export type InClusterIPPool = z.infer<typeof InClusterIPPool>;

export const GlobalInClusterIPPool = inClusterPoolObject(
  GLOBAL_IN_CLUSTER_IP_POOL_KIND,
  InClusterIPPoolSpec,
  InClusterIPPoolStatus,
  'A cluster-scoped pool of single addresses; claims in any namespace may reference it.',
);
export type GlobalInClusterIPPool = z.infer<typeof GlobalInClusterIPPool>;
