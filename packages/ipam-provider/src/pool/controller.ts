import { Controller, type ObjectKey } from '@tally-ipam/controller-kit';
import type { Holding } from '@tally-ipam/ledger';
import { clusterAvailablePredicate } from '../pause.js';
import type { ServedPoolKind } from '../pool-kinds.js';
import { type PoolRef, poolRefOfAddress, poolRefOfHolding, poolRefOfPool } from '../pool-ref.js';
import { ADDRESS_RESOURCE, CLUSTER_RESOURCE, POOL_RESOURCES, type StoredAddress } from '../resources.js';
import { type ProviderContext, poolScope, poolsOfCluster } from '../shared.js';
import { newIPPoolReconciler, type PoolReconciler, type PoolReconcilerDeps } from './reconciler.js';
import { PoolStatusBudget } from './status-budget.js';

/**
 * What the reconcilers of all four pool kinds share: one Event recorder and one budget of counts-only status writes
 * (`statusWritesPerSecond`, all pools together; default `POOL_STATUS_WRITES_PER_SECOND`).
 */
export function poolReconcilerDeps(shared: ProviderContext, statusWritesPerSecond?: number): PoolReconcilerDeps {
  return {
    client: shared.client,
    cache: shared.cache,
    pools: shared.pool,
    holdings: shared.holdings,
    addresses: shared.informers.addresses,
    clusters: shared.informers.clusters,
    states: shared.states,
    metrics: shared.metrics,
    now: shared.now,
    namespace: shared.namespace,
    recorder: shared.eventRecorderFor('pool'),
    allocationEvents: shared.allocationEvents,
    assumePool: shared.assumePool,
    statusBudget: new PoolStatusBudget(statusWritesPerSecond),
  };
}

/** The controller of an address pool kind (`TallyIPPool`, `GlobalTallyIPPool`). */
export function newIPPoolController(
  kind: ServedPoolKind,
  deps: PoolReconcilerDeps,
  shared: ProviderContext,
): Controller {
  return newPoolController(kind, newIPPoolReconciler(kind, deps), shared);
}

/**
 * A pool controller: its reconciler and what re-queues a pool — its IPAddresses and ledger entries (its counts), and
 * the Cluster its label names (un-pausing). Prefix pools are served the same way (prefixpool/controller.ts).
 */
export function newPoolController(
  kind: ServedPoolKind,
  reconciler: PoolReconciler,
  shared: ProviderContext,
): Controller {
  const { namespace } = shared;
  const toPool = (ref: PoolRef | undefined): ObjectKey[] =>
    ref && ref.kind === kind ? [{ namespace: ref.namespace, name: ref.name }] : [];
  // An allocation or a release changes the pool's counts only; while a status write of the pool is deferred, the
  // reconcile queued for it counts them all (see `PoolReconciler.statusWriteDeferred`).
  const countsChangedIn = (ref: PoolRef | undefined): ObjectKey[] =>
    ref && reconciler.statusWriteDeferred(ref) ? [] : toPool(ref);
  const controller = new Controller({
    name: `tally-${kind.toLowerCase()}`,
    for: POOL_RESOURCES[kind],
    forOptions: poolScope(kind, namespace),
    reconciler,
    cache: shared.cache,
    registry: shared.registry,
    logger: shared.logger,
    maxConcurrentReconciles: 2,
  })
    .watches(ADDRESS_RESOURCE, (address: StoredAddress) => countsChangedIn(poolRefOfAddress(address)), {
      namespace,
    })
    .watches(
      CLUSTER_RESOURCE,
      (cluster) => poolsOfCluster(shared.informers, cluster).flatMap((pool) => toPool(poolRefOfPool(pool))),
      { namespace, predicates: [clusterAvailablePredicate()] },
    );
  const poolOfHolding = (holding: Holding): void => {
    for (const key of countsChangedIn(poolRefOfHolding(holding))) controller.enqueue(key);
  };
  shared.holdings.addEventHandler({
    onAdd: poolOfHolding,
    onUpdate: (_old, holding) => poolOfHolding(holding),
    onDelete: poolOfHolding,
  });
  return controller;
}
