import { CLUSTER_RESOURCE } from '@tally-ipam/api-types';
import { NAMESPACE_INDEX } from '@tally-ipam/controller-kit/cache';
import { clusterNameOf, clusterUnpaused, resourceHasFilterLabel } from '@tally-ipam/controller-kit/capi';
import type { ObjectKey } from '@tally-ipam/controller-kit/client';
import { Controller } from '@tally-ipam/controller-kit/controller';
import {
  METAL3_ADDRESS_RESOURCE,
  METAL3_POOL_RESOURCE,
  poolKeyOfAddress,
  type StoredMetal3Pool,
} from '../resources.js';
import type { Metal3ControllerContext } from '../shared.js';
import { IPPoolReconciler } from './reconciler.js';

/** The IPPool controller: its reconciler and what it watches — the IPAddresses naming a pool, the pool's Cluster. */
export function newIPPoolController(shared: Metal3ControllerContext): Controller {
  const { informers } = shared;
  const scope = { namespace: shared.namespace };
  const reconciler = new IPPoolReconciler({
    client: shared.client,
    pools: informers.pools,
    addresses: informers.addresses,
    clusters: informers.clusters,
    now: shared.now,
  });
  const filter = resourceHasFilterLabel<StoredMetal3Pool>(shared.watchFilter);
  const poolRequest = (key: string | undefined): ObjectKey[] => {
    if (!key) return [];
    const pool = informers.pools.store.get(key);
    if (!pool || !(filter.generic?.({ object: pool }) ?? true)) return [];
    return [{ namespace: pool.metadata.namespace, name: pool.metadata.name }];
  };
  return new Controller({
    name: 'metal3-ippool',
    for: METAL3_POOL_RESOURCE,
    forOptions: { ...scope, predicates: [filter] },
    reconciler,
    cache: shared.cache,
    registry: shared.registry,
    logger: shared.logger,
    maxConcurrentReconciles: 2,
  })
    .watches(METAL3_ADDRESS_RESOURCE, (address) => poolRequest(poolKeyOfAddress(address)), scope)
    .watches(
      CLUSTER_RESOURCE,
      (cluster) =>
        informers.pools.store
          .byIndex(NAMESPACE_INDEX, cluster.metadata.namespace ?? '')
          .filter((pool) => clusterNameOf(pool) === cluster.metadata.name)
          .flatMap((pool) => poolRequest(`${pool.metadata.namespace}/${pool.metadata.name}`)),
      { ...scope, predicates: [clusterUnpaused()] },
    );
}
