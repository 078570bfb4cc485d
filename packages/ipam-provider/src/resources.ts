import {
  GLOBAL_IN_CLUSTER_IP_POOL_KIND,
  GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND,
  GLOBAL_TALLY_IP_POOL_KIND,
  GLOBAL_TALLY_PREFIX_POOL_KIND,
  IN_CLUSTER_IP_POOL_KIND,
  IN_CLUSTER_PREFIX_POOL_KIND,
  IN_CLUSTER_V1ALPHA2_API_VERSION,
  StoredObjectMeta as StoredMeta,
  TALLY_IP_POOL_KIND,
  TALLY_PREFIX_POOL_KIND,
  TALLY_V1ALPHA1_API_VERSION,
} from '@tally-ipam/api-types';
import { type SharedInformer, type TypedResourceKind, typedResource } from '@tally-ipam/controller-kit';
import type { Holding } from '@tally-ipam/ledger';
import * as z from 'zod';
import type { ServedPoolKind } from './pool-kinds.js';

// The Cluster API kinds' descriptors live in @tally-ipam/api-types; re-exported under the names this package publishes.
export {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  CLUSTER_RESOURCE,
  StoredAddress,
  StoredClaim,
  StoredCluster,
} from '@tally-ipam/api-types';

/**
 * The resources the provider reads and writes, each with the zod schema its objects are parsed with where they enter
 * (cache and client). Objects read from the API server always have a name, so the schemas require one.
 */

/** What the provider reads holdings from: the ledger entries seen one by one (`LedgerEntryView`). */
export type HoldingSource = Pick<SharedInformer<Holding>, 'store' | 'addEventHandler'>;

/**
 * Pools are cached with their spec unparsed: a pool whose spec fails validation must still be seen (and reported as
 * `InvalidSpec` / `PoolNotReady` with the reason), not silently dropped by the cache. The reconcilers parse the spec
 * with api-types' parsers.
 */
export const StoredPool = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: StoredMeta,
  spec: z.unknown(),
  status: z.unknown().optional(),
});
export type StoredPool = z.infer<typeof StoredPool>;

function poolResource(
  apiVersion: string,
  kind: ServedPoolKind,
  plural: string,
  namespaced: boolean,
): TypedResourceKind<StoredPool> {
  return typedResource({ apiVersion, kind, plural, namespaced }, StoredPool);
}

/**
 * Every pool kind the provider can serve, by kind: Tally's four, and the in-cluster provider's two IP pool and two
 * prefix pool kinds (`ipam.cluster.x-k8s.io/v1alpha2`), whose informers exist only with `inClusterIPAM` on
 * (`servedPoolKinds`).
 */
export const POOL_RESOURCES: Readonly<Record<ServedPoolKind, TypedResourceKind<StoredPool>>> = {
  [TALLY_IP_POOL_KIND]: poolResource(TALLY_V1ALPHA1_API_VERSION, TALLY_IP_POOL_KIND, 'tallyippools', true),
  [GLOBAL_TALLY_IP_POOL_KIND]: poolResource(
    TALLY_V1ALPHA1_API_VERSION,
    GLOBAL_TALLY_IP_POOL_KIND,
    'globaltallyippools',
    false,
  ),
  [TALLY_PREFIX_POOL_KIND]: poolResource(TALLY_V1ALPHA1_API_VERSION, TALLY_PREFIX_POOL_KIND, 'tallyprefixpools', true),
  [GLOBAL_TALLY_PREFIX_POOL_KIND]: poolResource(
    TALLY_V1ALPHA1_API_VERSION,
    GLOBAL_TALLY_PREFIX_POOL_KIND,
    'globaltallyprefixpools',
    false,
  ),
  [IN_CLUSTER_IP_POOL_KIND]: poolResource(
    IN_CLUSTER_V1ALPHA2_API_VERSION,
    IN_CLUSTER_IP_POOL_KIND,
    'inclusterippools',
    true,
  ),
  [GLOBAL_IN_CLUSTER_IP_POOL_KIND]: poolResource(
    IN_CLUSTER_V1ALPHA2_API_VERSION,
    GLOBAL_IN_CLUSTER_IP_POOL_KIND,
    'globalinclusterippools',
    false,
  ),
  [IN_CLUSTER_PREFIX_POOL_KIND]: poolResource(
    IN_CLUSTER_V1ALPHA2_API_VERSION,
    IN_CLUSTER_PREFIX_POOL_KIND,
    'inclusterprefixpools',
    true,
  ),
  [GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND]: poolResource(
    IN_CLUSTER_V1ALPHA2_API_VERSION,
    GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND,
    'globalinclusterprefixpools',
    false,
  ),
};

/** Namespaces, for a global pool's `spec.namespaceSelector`: only their labels are read. */
export const StoredNamespace = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: StoredMeta,
});
export type StoredNamespace = z.infer<typeof StoredNamespace>;

/** Namespaces (cluster-scoped), cached cluster-wide: claims of any namespace may name a global pool. */
export const NAMESPACE_RESOURCE: TypedResourceKind<StoredNamespace> = typedResource(
  { apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false },
  StoredNamespace,
);
