import { CLUSTER_NAME_LABEL, METAL3_IP_POOL_FINALIZER, type StoredCluster } from '@tally-ipam/api-types';
import type { OwnerReference, SharedInformer } from '@tally-ipam/controller-kit/cache';
import { CLUSTER_API_GROUP, isPaused } from '@tally-ipam/controller-kit/capi';
import {
  type Client,
  findOwnerReference,
  hasFinalizer,
  ownerReferenceTo,
  removeFinalizer,
} from '@tally-ipam/controller-kit/client';
import type { ReconcileContext, Reconciler, Request, Result } from '@tally-ipam/controller-kit/controller';
import { poolClusterName } from '../pool-spec.js';
import {
  METAL3_POOL_INDEX,
  METAL3_POOL_RESOURCE,
  type StoredMetal3Address,
  type StoredMetal3Pool,
} from '../resources.js';

export interface IPPoolReconcilerDeps {
  readonly client: Client;
  readonly pools: Pick<SharedInformer<StoredMetal3Pool>, 'store'>;
  readonly addresses: Pick<SharedInformer<StoredMetal3Address>, 'store'>;
  readonly clusters: Pick<SharedInformer<StoredCluster>, 'store'>;
  readonly now: () => number;
}

/** `status.indexes`: claim name → address, Metal3's `Allocations` under its JSON name. */
export type PoolIndexes = Record<string, string>;

/** The allocations of a pool as its IPAddresses show them (an IPAddress without claim name counts under ''). */
export function indexesOf(addresses: readonly StoredMetal3Address[]): PoolIndexes {
  const indexes: PoolIndexes = {};
  for (const address of addresses) {
    if (address.spec.address) indexes[address.spec.claim?.name ?? ''] = address.spec.address;
  }
  return indexes;
}

/** RFC 3339 with seconds, as metav1.Time is written. */
function timestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Reconciles Metal3 IPPools as ip-address-manager v1.10.1 does:
 * - with `spec.clusterName`: the `cluster.x-k8s.io/cluster-name` label, and a (non-controller) owner reference to the
 *   Cluster, so `clusterctl move` carries pool, claims and IPAddresses along the owner chain; nothing happens until
 *   the Cluster exists (unless the pool is being deleted), nor while it or the pool is paused;
 * - finalizer `ippool.ipam.metal3.io`, removed once the pool is being deleted and no IPAddress names it;
 * - `status.indexes` (claim name → address) rebuilt from the IPAddresses that name the pool, `status.lastUpdated` set
 *   whenever it changes. Both are observations: no decision reads them.
 */
export class IPPoolReconciler implements Reconciler {
  constructor(private readonly deps: IPPoolReconcilerDeps) {}

  async reconcile(request: Request, context: ReconcileContext): Promise<Result> {
    const key = `${request.namespace ?? ''}/${request.name}`;
    const pool = this.deps.pools.store.get(key);
    if (!pool) return {};
    const deleting = pool.metadata.deletionTimestamp !== undefined;
    const clusterName = poolClusterName(pool);
    const cluster = clusterName ? this.deps.clusters.store.get(`${request.namespace}/${clusterName}`) : undefined;
    if (clusterName && !cluster && !deleting) {
      context.logger.debug({ cluster: clusterName }, 'waiting for the Cluster of spec.clusterName');
      return {};
    }
    if (isPaused(cluster, pool)) {
      context.logger.debug({ cluster: clusterName }, 'paused');
      return {};
    }
    const addresses = this.deps.addresses.store.byIndex(METAL3_POOL_INDEX, key);
    let current = await this.writeMetadata(pool, clusterName, cluster, deleting, context);
    current = await this.writeStatus(current, indexesOf(addresses), context);
    if (deleting && addresses.length === 0) {
      await removeFinalizer(this.deps.client, METAL3_POOL_RESOURCE, current, METAL3_IP_POOL_FINALIZER, {
        signal: context.signal,
      });
      context.logger.info('no IPAddress names the pool any more: finalizer removed');
    }
    return {};
  }

  /** The cluster-name label, the Cluster owner reference and the finalizer, in one patch when any is missing. */
  private async writeMetadata(
    pool: StoredMetal3Pool,
    clusterName: string | undefined,
    cluster: StoredCluster | undefined,
    deleting: boolean,
    context: ReconcileContext,
  ): Promise<StoredMetal3Pool> {
    const patch: Record<string, unknown> = {};
    if (clusterName && pool.metadata.labels?.[CLUSTER_NAME_LABEL] !== clusterName) {
      patch.labels = { [CLUSTER_NAME_LABEL]: clusterName };
    }
    const owners: OwnerReference[] = pool.metadata.ownerReferences ?? [];
    const ownedByCluster = findOwnerReference(pool, { apiGroup: CLUSTER_API_GROUP, kind: 'Cluster' });
    if (cluster && ownedByCluster?.name !== cluster.metadata.name) {
      patch.ownerReferences = [...owners, ownerReferenceTo(cluster)];
    }
    if (!deleting && !hasFinalizer(pool, METAL3_IP_POOL_FINALIZER)) {
      patch.finalizers = [...(pool.metadata.finalizers ?? []), METAL3_IP_POOL_FINALIZER];
    }
    if (Object.keys(patch).length === 0) return pool;
    // Lists are replaced whole by a merge patch: the resourceVersion makes a concurrent change fail, not vanish.
    return this.deps.client.mergePatch(
      METAL3_POOL_RESOURCE,
      { namespace: pool.metadata.namespace, name: pool.metadata.name },
      { metadata: { resourceVersion: pool.metadata.resourceVersion, ...patch } },
      { signal: context.signal },
    );
  }

  private async writeStatus(
    pool: StoredMetal3Pool,
    indexes: PoolIndexes,
    context: ReconcileContext,
  ): Promise<StoredMetal3Pool> {
    const status = (pool.status ?? {}) as { indexes?: Record<string, unknown>; lastUpdated?: unknown };
    const before = status.indexes ?? {};
    const same =
      Object.keys(before).length === Object.keys(indexes).length &&
      Object.entries(indexes).every(([claim, address]) => before[claim] === address);
    if (same && status.lastUpdated !== undefined) return pool;
    // A merge patch merges maps: the claims no longer allocated are removed with null.
    const patched: Record<string, string | null> = { ...indexes };
    for (const claim of Object.keys(before)) if (!(claim in indexes)) patched[claim] = null;
    return this.deps.client.mergePatch(
      METAL3_POOL_RESOURCE,
      { namespace: pool.metadata.namespace, name: pool.metadata.name },
      { status: { indexes: patched, lastUpdated: timestamp(this.deps.now()) } },
      { subresource: 'status', signal: context.signal },
    );
  }
}
