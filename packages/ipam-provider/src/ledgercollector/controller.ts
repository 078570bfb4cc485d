import { Controller, type KubeObject, type ObjectKey, type Predicate } from '@tally-ipam/controller-kit';
import { type Holding, LEDGER_RESOURCE } from '@tally-ipam/ledger';
import { HOLDING_CLAIM_UID_INDEX, POOL_INDEX } from '../indexes.js';
import { poolKey, poolRefOfAddress, poolRefOfPool } from '../pool-ref.js';
import {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  POOL_RESOURCES,
  type StoredAddress,
  type StoredClaim,
  type StoredPool,
} from '../resources.js';
import { type ProviderContext, poolScope } from '../shared.js';
import { heldByCachedClaim, LedgerCollector } from './reconciler.js';

export interface LedgerCollectorControllerOptions {
  /** Age after which a holding without claim and without IPAddress is deleted. Default `ORPHAN_ENTRY_SAFETY_AGE_MS`. */
  readonly orphanEntrySafetyAgeMs?: number | undefined;
}

/**
 * The ledger collector's controller. Its requests are entry keys, enqueued from the ledger entry view (ledger events
 * enqueue nothing): every entry added or changed that is not held for a live cached claim, and the entries of a
 * deleted claim, a deleted IPAddress and a deleted pool.
 */
export function newLedgerCollectorController(
  shared: ProviderContext,
  options: LedgerCollectorControllerOptions = {},
): Controller {
  const { informers, holdings, namespace } = shared;
  const holdingKey = (holding: Holding): ObjectKey => ({ name: holding.metadata.name });
  const holdingsOfClaim = (claim: StoredClaim): ObjectKey[] =>
    holdings.store.byIndex(HOLDING_CLAIM_UID_INDEX, claim.metadata.uid ?? '').map(holdingKey);
  const holdingsOfAddress = (address: StoredAddress): ObjectKey[] => {
    const ref = poolRefOfAddress(address);
    if (!ref) return [];
    return holdings.store
      .byIndex(POOL_INDEX, poolKey(ref))
      .filter((holding) => holding.spec.address === address.spec.address)
      .map(holdingKey);
  };
  const holdingsOfPool = (pool: KubeObject): ObjectKey[] => {
    const ref = poolRefOfPool(pool as StoredPool);
    return ref ? holdings.store.byIndex(POOL_INDEX, poolKey(ref)).map(holdingKey) : [];
  };
  const controller = new Controller({
    name: 'tally-ledger-collector',
    // The requests are entry keys, enqueued from the entry view below; ledger events enqueue nothing.
    for: LEDGER_RESOURCE,
    forOptions: {
      predicates: [{ create: () => false, update: () => false, delete: () => false, generic: () => false }],
    },
    reconciler: new LedgerCollector({
      client: shared.client,
      cache: shared.cache,
      holdings,
      holds: shared.holds,
      addresses: informers.addresses,
      claims: informers.claims,
      states: shared.states,
      now: shared.now,
      namespace,
      orphanSafetyAgeMs: options.orphanEntrySafetyAgeMs,
    }),
    cache: shared.cache,
    registry: shared.registry,
    logger: shared.logger,
    maxConcurrentReconciles: 2,
  })
    // A holding has no owner reference, so nothing else looks at it when what it stands for goes away: the holdings of a
    // deleted claim (clusterctl move removes the claim's finalizer and deletes it on the source), of a deleted
    // IPAddress and of a deleted pool (released holdings of a LeastRecentlyReleased pool) are looked at again at once.
    .watches(CLAIM_RESOURCE, (claim: StoredClaim) => holdingsOfClaim(claim), {
      namespace,
      predicates: [deletedPredicate()],
    })
    .watches(ADDRESS_RESOURCE, (address: StoredAddress) => holdingsOfAddress(address), {
      namespace,
      predicates: [deletedPredicate()],
    });
  for (const kind of shared.servedKinds) {
    controller.watches(POOL_RESOURCES[kind], holdingsOfPool, {
      ...poolScope(kind, namespace),
      predicates: [deletedPredicate()],
    });
  }
  // Every allocation adds an entry held for a live claim, which the garbage collector would only look at and leave:
  // those are not queued (one reconcile per allocation saved). The claim's deletion queues them (claim watch above).
  const collectable = (holding: Holding): void => {
    if (!heldByCachedClaim(holding, informers.claims)) controller.enqueue(holdingKey(holding));
  };
  holdings.addEventHandler({ onAdd: collectable, onUpdate: (_old, holding) => collectable(holding) });
  return controller;
}

/** Deletions only: what goes away is what the collector looks at again. */
export function deletedPredicate<T extends KubeObject>(): Predicate<T> {
  return { create: () => false, update: () => false, delete: () => true, generic: () => false };
}
