import { CLUSTER_NAME_LABEL, CLUSTER_RESOURCE, WATCH_FILTER_LABEL } from '@tally-ipam/api-types';
import { NAMESPACE_INDEX } from '@tally-ipam/controller-kit/cache';
import { clusterNameOf, clusterUnpaused, resourceHasFilterLabel } from '@tally-ipam/controller-kit/capi';
import type { ObjectKey } from '@tally-ipam/controller-kit/client';
import { Controller } from '@tally-ipam/controller-kit/controller';
import { LEDGER_RESOURCE } from '@tally-ipam/ledger';
import { isMetal3PoolReference } from '../holdings.js';
import {
  claimKeyOfAddress,
  METAL3_ADDRESS_RESOURCE,
  METAL3_CLAIM_RESOURCE,
  METAL3_POOL_INDEX,
  METAL3_POOL_RESOURCE,
  poolKeyOfAddress,
  type StoredMetal3Claim,
} from '../resources.js';
import { type Metal3ControllerContext, syncOnly } from '../shared.js';
import { IPClaimReconciler } from './reconciler.js';

function keyOf(object: { metadata: { namespace?: string | undefined; name: string } }): ObjectKey {
  return { namespace: object.metadata.namespace, name: object.metadata.name };
}

function parseKey(key: string): ObjectKey {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/**
 * The IPClaim controller: its reconciler and what it watches — the claim's IPAddresses (a deleted one frees an address
 * for the pool's waiting claims), its IPPool, its Cluster (un-pausing), and the ledgers (only to start once their
 * informer has synced, so the entries are known before the first choice).
 */
export function newIPClaimController(shared: Metal3ControllerContext): Controller {
  const { informers } = shared;
  const scope = { namespace: shared.namespace };
  const reconciler = new IPClaimReconciler({
    client: shared.client,
    claims: informers.claims,
    pools: informers.pools,
    addresses: informers.addresses,
    clusters: informers.clusters,
    ledgers: shared.ledgers,
    entries: shared.ledgerEntries.store,
    assumedEntries: shared.assumedEntries,
    ledgersComplete: shared.ledgersComplete,
  });
  const claimsOfPool = (poolKey: string): StoredMetal3Claim[] =>
    informers.claims.store.byIndex(METAL3_POOL_INDEX, poolKey);
  const controller = new Controller({
    name: 'metal3-ipclaim',
    for: METAL3_CLAIM_RESOURCE,
    forOptions: { ...scope, predicates: [resourceHasFilterLabel<StoredMetal3Claim>(shared.watchFilter)] },
    reconciler,
    cache: shared.cache,
    registry: shared.registry,
    logger: shared.logger,
    maxConcurrentReconciles: shared.concurrency,
  })
    .watches(
      METAL3_ADDRESS_RESOURCE,
      (address) => {
        const claimKey = claimKeyOfAddress(address);
        const poolKey = poolKeyOfAddress(address);
        const waiting = poolKey ? claimsOfPool(poolKey).filter((claim) => claim.status?.errorMessage) : [];
        return [...(claimKey ? [parseKey(claimKey)] : []), ...waiting.map(keyOf)].filter((key) =>
          hasWatchLabel(informers.claims.store.get(`${key.namespace}/${key.name}`), shared.watchFilter),
        );
      },
      scope,
    )
    .watches(
      METAL3_POOL_RESOURCE,
      (pool) =>
        claimsOfPool(`${pool.metadata.namespace}/${pool.metadata.name}`)
          .filter((claim) => hasWatchLabel(claim, shared.watchFilter))
          .map(keyOf),
      scope,
    )
    .watches(
      CLUSTER_RESOURCE,
      (cluster) => {
        const namespace = cluster.metadata.namespace ?? '';
        const pools = informers.pools.store
          .byIndex(NAMESPACE_INDEX, namespace)
          .filter((pool) => clusterNameOf(pool) === cluster.metadata.name);
        const claims = [
          ...informers.claims.store
            .byIndex(NAMESPACE_INDEX, namespace)
            .filter((claim) => claim.metadata.labels?.[CLUSTER_NAME_LABEL] === cluster.metadata.name),
          ...pools.flatMap((pool) => claimsOfPool(`${namespace}/${pool.metadata.name}`)),
        ];
        return claims.filter((claim) => hasWatchLabel(claim, shared.watchFilter)).map(keyOf);
      },
      { ...scope, predicates: [clusterUnpaused()] },
    )
    .watches(LEDGER_RESOURCE, () => [], { predicates: [syncOnly()] });
  // A released entry frees an address: the claims of its pool that wait with an error are looked at again at once
  // (an address freed by another pool's claim is found by the exhausted claim's periodic recheck).
  shared.ledgerEntries.addEventHandler({
    onDelete: (entry) => {
      const pool = entry.spec.poolRef;
      if (!isMetal3PoolReference(pool)) return;
      for (const claim of claimsOfPool(`${pool.namespace ?? ''}/${pool.name}`)) {
        if (claim.status?.errorMessage && hasWatchLabel(claim, shared.watchFilter)) controller.enqueue(keyOf(claim));
      }
    },
  });
  return controller;
}

/** Whether the claim exists and carries the watch-filter label (when one is set). */
export function hasWatchLabel(claim: StoredMetal3Claim | undefined, watchFilter: string): boolean {
  return claim !== undefined && (watchFilter === '' || claim.metadata.labels?.[WATCH_FILTER_LABEL] === watchFilter);
}
