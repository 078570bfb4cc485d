import {
  isClusterScopedPoolKind,
  isIPAddressClaimReference,
  isPrefixPoolKind,
  TALLY_POOL_KINDS,
  type TallyPoolKind,
} from '@tally-ipam/api-types';
import {
  Client,
  Controller,
  defaultControllerRateLimiter,
  type KubeObject,
  type Manager,
  NAMESPACE_INDEX,
  type ObjectKey,
  parseObjectKey,
  resourceHasFilterLabel,
  type SharedInformer,
} from '@tally-ipam/controller-kit';
import { AllocationEvents, type AllocationEventsOptions, DEFAULT_ALLOCATION_EVENTS } from './allocation-events.js';
import { AssumedObjects } from './assumed-objects.js';
import { CreatedAddresses } from './claim/created-addresses.js';
import { HoldAhead } from './claim/hold-ahead.js';
import { ClaimReconciler } from './claim-reconciler.js';
import { CLAIM_MAX_RETRY_DELAY_MS, CLAIM_RETRY_BURST, CLAIM_RETRY_QPS } from './constants.js';
import { ledgerHolds } from './holds.js';
import {
  ADDRESS_INDEXERS,
  CLAIM_CLUSTER_INDEX,
  CLAIM_INDEXERS,
  HOLDING_CLAIM_UID_INDEX,
  HOLDING_INDEXERS,
  POOL_INDEX,
} from './indexes.js';
import { newIPPoolReconciler } from './ip-pool-reconciler.js';
import { AddressLedgers } from './ledger/address-ledgers.js';
import { LedgerEntryView } from './ledger/entry-view.js';
import { heldByCachedClaim, LedgerCollector } from './ledger-collector.js';
import { providerMetrics } from './metrics.js';
import { poolClusterName } from './pause.js';
import { type PoolRef, poolKey, poolRefOfAddress, poolRefOfHolding, poolRefOfPool } from './pool-ref.js';
import { PoolStates } from './pool-states.js';
import { PoolStatusBudget } from './pool-status-budget.js';
import {
  claimChangedPredicate,
  clusterAvailablePredicate,
  deletedPredicate,
  poolChangedPredicate,
  tallyClaimPredicate,
} from './predicates.js';
import { newPrefixPoolReconciler } from './prefix-pool-reconciler.js';
import {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  CLUSTER_RESOURCE,
  type Holding,
  type HoldingSource,
  LEDGER_RESOURCE,
  POOL_RESOURCES,
  type StoredAddress,
  type StoredClaim,
  type StoredPool,
} from './resources.js';

export interface IPAMProviderOptions {
  /** Claims reconciled in parallel (a claim is never reconciled twice at once). Default 10. */
  readonly concurrency?: number | undefined;
  /** Only claims labelled `cluster.x-k8s.io/watch-filter=<value>` (CAPI's `--watch-filter`); empty = all. */
  readonly watchFilter?: string | undefined;
  /** Watch claims, IPAddresses, Clusters and namespaced pools of this namespace only; all when absent. */
  readonly namespace?: string | undefined;
  /** Field manager of the provider's writes; the manager's client (its name) when absent. */
  readonly fieldManager?: string | undefined;
  /** Milliseconds since the epoch; the clock of grace periods, release times and conditions. Default `Date.now`. */
  readonly now?: (() => number) | undefined;
  /** Age after which a holding without claim and without IPAddress is deleted. Default 60 s. */
  readonly orphanEntrySafetyAgeMs?: number | undefined;
  /**
   * The rate of routine AddressAllocated Events on claims and of their summaries on pools (see `AllocationEvents`).
   * Default `DEFAULT_ALLOCATION_EVENTS`: 25 at once, then 1 per second; summaries at most every 10 s per pool.
   */
  readonly allocationEvents?: Partial<Omit<AllocationEventsOptions, 'now' | 'onUnrecorded'>> | undefined;
  /**
   * Counts-only pool status writes per second, all pools together (each pool also at most one every
   * `POOL_STATUS_COALESCE_MS`). Default `POOL_STATUS_WRITES_PER_SECOND` (2).
   */
  readonly poolStatusWritesPerSecond?: number | undefined;
}

/** An IPAddress allocated from a pool, as the cache holds it. */
export interface AllocatedAddress {
  readonly namespace: string;
  /** The IPAddress name (= the claim's name). */
  readonly name: string;
  readonly address: string;
  readonly prefix: number;
  readonly claimName: string;
}

/** A Tally pool as cached: the reference and the object (its spec unvalidated; parse with api-types' parsers). */
export interface PoolView {
  readonly ref: PoolRef;
  readonly pool: StoredPool;
}

/**
 * The read-only view of the provider's shared cache that admission webhooks need: what is allocated from a pool (to
 * refuse deleting it or shrinking it under its addresses) and every pool (to warn about overlaps).
 */
export interface IPAMProvider {
  /** IPAddresses whose `spec.poolRef` names this pool (namespaced pools: in the pool's namespace). */
  allocatedAddresses(ref: PoolRef): AllocatedAddress[];
  /** Every Tally pool of the four kinds in the cache. */
  pools(): PoolView[];
  /** One pool by reference, undefined when the cache does not hold it. */
  pool(ref: PoolRef): StoredPool | undefined;
  /** True once every informer behind the view has listed. */
  hasSynced(): boolean;
  /** Resolves true once synced, false if the signal aborts first. */
  waitForSync(signal: AbortSignal): Promise<boolean>;
  /**
   * The process's one writer of TallyAddressLedgers, for other IPAM controllers of the process (a Metal3 IPClaim
   * controller) to hold addresses through the same batching writer.
   */
  readonly ledgers: AddressLedgers;
  /** The ledger entries as holdings, from the process's one ledger informer. */
  readonly ledgerEntries: LedgerEntryView;
  /**
   * Adds a barrier: no IPAddressClaim is reconciled (so none gets a new address) before it resolves. Another IPAM controller of the process uses it to enter addresses only it knows (Metal3 IPAddresses) into
   * the ledgers at start. A rejection is retried at the next reconcile; the barrier should memoize its success.
   */
  addAllocationBarrier(barrier: () => Promise<unknown>): void;
}

const DEFAULT_CONCURRENCY = 10;

/** A runnable that closes a client the provider made itself when the manager stops. */
function closingRunnable(client: Client): { needLeaderElection: false; start(signal: AbortSignal): Promise<void> } {
  return {
    needLeaderElection: false,
    start: (signal) =>
      new Promise<void>((resolve) => {
        const stop = (): void => {
          client.close();
          resolve();
        };
        if (signal.aborted) stop();
        else signal.addEventListener('abort', stop, { once: true });
      }),
  };
}

/**
 * Registers Tally's caches and controllers on a controller-kit Manager: the IPAddressClaim controller, one pool
 * controller per pool kind and the ledger garbage collector. Call before `manager.start`. Safe to run in any
 * number of processes against one API server at once (leader election on or off): uniqueness is enforced by the
 * API server through the ledgers' resourceVersions, not by this process's memory.
 */
export function setupIPAMProvider(manager: Manager, options: IPAMProviderOptions = {}): IPAMProvider {
  const namespace = options.namespace || undefined;
  const now = options.now ?? Date.now;
  const cache = manager.cache;
  const logger = manager.logger.child({ component: 'tally-ipam' });
  let client = manager.client;
  if (options.fieldManager && options.fieldManager !== manager.client.fieldManager) {
    client = new Client(manager.kubeConfig, { fieldManager: options.fieldManager });
    manager.add(closingRunnable(client));
  }
  const metrics = providerMetrics(manager.registry);

  const claims = cache.informerFor(CLAIM_RESOURCE, {
    namespace,
    indexers: CLAIM_INDEXERS,
  });
  const addresses = cache.informerFor(ADDRESS_RESOURCE, {
    namespace,
    indexers: ADDRESS_INDEXERS,
  });
  const ledgerInformer = cache.informerFor(LEDGER_RESOURCE);
  const ledgers = new AddressLedgers({ client, store: ledgerInformer.store, now });
  const ledgerEntries = new LedgerEntryView(ledgerInformer, HOLDING_INDEXERS);
  const holdings: HoldingSource = ledgerEntries;
  const holds = ledgerHolds(ledgers);
  const allocationBarriers: (() => Promise<unknown>)[] = [];
  const clusters = cache.informerFor(CLUSTER_RESOURCE, { namespace });
  const poolScope = (kind: TallyPoolKind): { namespace?: string | undefined } =>
    isClusterScopedPoolKind(kind) ? {} : { namespace };
  const poolInformers = new Map<TallyPoolKind, SharedInformer<StoredPool>>(
    TALLY_POOL_KINDS.map((kind) => [kind, cache.informerFor(POOL_RESOURCES[kind], poolScope(kind))]),
  );
  // The assume cache: this process's own writes, until its informers show them (see AssumedObjects).
  const assumed = {
    claims: new AssumedObjects(claims),
    addresses: new AssumedObjects(addresses),
    holdings: new AssumedObjects(holdings),
  };
  const assumedPools = new Map<TallyPoolKind, AssumedObjects<StoredPool>>(
    [...poolInformers].map(([kind, informer]) => [kind, new AssumedObjects(informer)]),
  );
  const poolOf = (ref: PoolRef): StoredPool | undefined =>
    assumedPools.get(ref.kind)?.get(ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name);
  const assumePool = (pool: StoredPool): void => {
    const ref = poolRefOfPool(pool);
    if (ref) assumedPools.get(ref.kind)?.assume(pool);
  };
  // Scheduling only (which Events to record), so the monotonic clock rather than the `now` of conditions.
  const poolControllers = new Map<TallyPoolKind, Controller>();
  const allocationEvents = new AllocationEvents({
    ...DEFAULT_ALLOCATION_EVENTS,
    ...options.allocationEvents,
    now: () => performance.now(),
    // The pool reconcile records the summary: make sure one runs after the allocation was counted.
    onUnrecorded: (ref) => poolControllers.get(ref.kind)?.enqueue({ namespace: ref.namespace, name: ref.name }),
  });

  const claimController = new Controller({
    name: 'tally-ipaddressclaim',
    for: CLAIM_RESOURCE,
    forOptions: {
      namespace,
      predicates: [tallyClaimPredicate(), resourceHasFilterLabel(options.watchFilter ?? ''), claimChangedPredicate()],
    },
    reconciler: {
      reconcile: async (request, context) => {
        for (const barrier of allocationBarriers) await barrier();
        return claimReconciler.reconcile(request, context);
      },
    },
    cache,
    registry: manager.registry,
    logger,
    maxConcurrentReconciles: options.concurrency ?? DEFAULT_CONCURRENCY,
    rateLimiter: defaultControllerRateLimiter({
      maxDelayMs: CLAIM_MAX_RETRY_DELAY_MS,
      qps: CLAIM_RETRY_QPS,
      burst: CLAIM_RETRY_BURST,
    }),
  });

  const states = new PoolStates({
    pools: poolOf,
    addresses,
    holdings,
    clock: now,
    logger,
    onSpaceFreed: (_pool, waitingClaims) => {
      for (const key of waitingClaims) claimController.enqueue(parseObjectKey(key));
    },
  });

  const claimFilters = [tallyClaimPredicate(), resourceHasFilterLabel<StoredClaim>(options.watchFilter ?? '')];
  const servesClaim = (claim: StoredClaim): boolean =>
    claimFilters.every((predicate) => predicate.generic?.({ object: claim }) ?? true);
  const createdAddresses = new CreatedAddresses();
  const claimReconciler = new ClaimReconciler({
    holdAhead: new HoldAhead(servesClaim),
    createdAddresses,
    client,
    cache,
    claims,
    addresses,
    holdings,
    holds,
    clusters,
    assumed,
    pool: poolOf,
    states,
    recorder: manager.getEventRecorderFor('ipaddressclaim'),
    allocationEvents,
    metrics,
    now,
  });

  const claimsOfPool = (pool: KubeObject): ObjectKey[] => {
    const ref = poolRefOfPool(pool as StoredPool);
    return ref ? claims.store.byIndex(POOL_INDEX, poolKey(ref)).map(keyOf) : [];
  };
  // The create event of an IPAddress this process created needs no reconcile: the reconcile that created it writes the
  // claim's status (see CreatedAddresses). Unless the claim holds another address too (a hold made ahead or by another
  // replica that lost the race for the IPAddress), which its reconcile gives back.
  const holdsAnotherAddress = (address: StoredAddress): boolean => {
    const uid = address.metadata.ownerReferences?.find((owner) => owner.controller === true)?.uid;
    if (!uid) return true;
    return [...holdings.store.byIndex(HOLDING_CLAIM_UID_INDEX, uid), ...assumed.holdings.pending()].some(
      (holding) =>
        holding.spec.claimRef.uid === uid &&
        holding.spec.releasedAt === undefined &&
        holding.spec.address !== address.spec.address,
    );
  };
  claimController.owns(ADDRESS_RESOURCE, {
    namespace,
    predicates: [
      {
        create: ({ object }) =>
          !createdAddresses.take(`${object.metadata.namespace}/${object.metadata.name}`, object.metadata.uid) ||
          holdsAnotherAddress(object),
      },
    ],
  });
  for (const kind of TALLY_POOL_KINDS) {
    claimController.watches(POOL_RESOURCES[kind], claimsOfPool, {
      ...poolScope(kind),
      predicates: [poolChangedPredicate()],
    });
  }
  // The namespaced pools labelled with a Cluster's name: they pause with that Cluster (clusterctl move).
  const poolsOfCluster = (cluster: KubeObject): StoredPool[] => {
    const clusterNamespace = cluster.metadata.namespace ?? '';
    const pools: StoredPool[] = [];
    for (const [kind, informer] of poolInformers) {
      if (isClusterScopedPoolKind(kind)) continue;
      for (const pool of informer.store.byIndex(NAMESPACE_INDEX, clusterNamespace)) {
        if (poolClusterName(pool) === cluster.metadata.name) pools.push(pool);
      }
    }
    return pools;
  };
  claimController.watches(
    CLUSTER_RESOURCE,
    (cluster) => [
      ...claims.store.byIndex(CLAIM_CLUSTER_INDEX, `${cluster.metadata.namespace}/${cluster.metadata.name}`).map(keyOf),
      ...poolsOfCluster(cluster).flatMap(claimsOfPool),
    ],
    { namespace, predicates: [clusterAvailablePredicate()] },
  );
  const claimOfHolding = (holding: Holding): ObjectKey => ({
    namespace: holding.spec.claimRef.namespace,
    name: holding.spec.claimRef.name,
  });
  const ownClaimOfHolding = (holding: Holding): ObjectKey[] =>
    isIPAddressClaimReference(holding.spec.claimRef) ? [claimOfHolding(holding)] : [];
  // An entry held for a claim whose IPAddress carries another address is a surplus (a hold made ahead, or by another
  // replica, that lost the race for the IPAddress): the claim's reconcile gives it back.
  const surplusOf = (holding: Holding): ObjectKey[] =>
    ownClaimOfHolding(holding).filter((key) => {
      const address = addresses.store.get(`${key.namespace}/${key.name}`);
      return (
        address !== undefined && address.spec.address !== holding.spec.address && holding.spec.releasedAt === undefined
      );
    });
  holdings.addEventHandler({
    onAdd: (holding) => {
      for (const key of surplusOf(holding)) claimController.enqueue(key);
    },
    onDelete: (holding) => {
      for (const key of ownClaimOfHolding(holding)) claimController.enqueue(key);
    },
  });
  manager.add(claimController);

  const poolDeps = {
    client,
    cache,
    pools: poolOf,
    holdings,
    clusters,
    states,
    metrics,
    now,
    namespace,
    recorder: manager.getEventRecorderFor('pool'),
    allocationEvents,
    assumePool,
    statusBudget: new PoolStatusBudget(options.poolStatusWritesPerSecond),
  };
  for (const kind of TALLY_POOL_KINDS) {
    const reconciler = isPrefixPoolKind(kind)
      ? newPrefixPoolReconciler(kind, poolDeps)
      : newIPPoolReconciler(kind, poolDeps);
    const toPool = (ref: PoolRef | undefined): ObjectKey[] =>
      ref && ref.kind === kind ? [{ namespace: ref.namespace, name: ref.name }] : [];
    // An allocation or a release changes the pool's counts only; while a status write of the pool is deferred, the
    // reconcile queued for it counts them all (see `PoolReconciler.statusWriteDeferred`).
    const countsChangedIn = (ref: PoolRef | undefined): ObjectKey[] =>
      ref && reconciler.statusWriteDeferred(ref) ? [] : toPool(ref);
    const controller = new Controller({
      name: `tally-${kind.toLowerCase()}`,
      for: POOL_RESOURCES[kind],
      forOptions: poolScope(kind),
      reconciler,
      cache,
      registry: manager.registry,
      logger,
      maxConcurrentReconciles: 2,
    })
      .watches(ADDRESS_RESOURCE, (address: StoredAddress) => countsChangedIn(poolRefOfAddress(address)), {
        namespace,
      })
      .watches(CLUSTER_RESOURCE, (cluster) => poolsOfCluster(cluster).flatMap((pool) => toPool(poolRefOfPool(pool))), {
        namespace,
        predicates: [clusterAvailablePredicate()],
      });
    const poolOfHolding = (holding: Holding): void => {
      for (const key of countsChangedIn(poolRefOfHolding(holding))) controller.enqueue(key);
    };
    holdings.addEventHandler({
      onAdd: poolOfHolding,
      onUpdate: (_old, holding) => poolOfHolding(holding),
      onDelete: poolOfHolding,
    });
    poolControllers.set(kind, controller);
    manager.add(controller);
  }

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
  const collectorController = new Controller({
    name: 'tally-ledger-collector',
    // The requests are entry keys, enqueued from the entry view below; ledger events enqueue nothing.
    for: LEDGER_RESOURCE,
    forOptions: {
      predicates: [{ create: () => false, update: () => false, delete: () => false, generic: () => false }],
    },
    reconciler: new LedgerCollector({
      client,
      cache,
      holdings,
      holds,
      addresses,
      claims,
      states,
      now,
      namespace,
      orphanSafetyAgeMs: options.orphanEntrySafetyAgeMs,
    }),
    cache,
    registry: manager.registry,
    logger,
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
  for (const kind of TALLY_POOL_KINDS) {
    collectorController.watches(POOL_RESOURCES[kind], holdingsOfPool, {
      ...poolScope(kind),
      predicates: [deletedPredicate()],
    });
  }
  // Every allocation adds an entry held for a live claim, which the garbage collector would only look at and leave:
  // those are not queued (one reconcile per allocation saved). The claim's deletion queues them (claim watch above).
  const collectable = (holding: Holding): void => {
    if (!heldByCachedClaim(holding, claims)) collectorController.enqueue(holdingKey(holding));
  };
  holdings.addEventHandler({ onAdd: collectable, onUpdate: (_old, holding) => collectable(holding) });
  manager.add(collectorController);

  const viewInformers: SharedInformer<KubeObject>[] = [
    addresses as unknown as SharedInformer<KubeObject>,
    ...([...poolInformers.values()] as unknown as SharedInformer<KubeObject>[]),
  ];
  return {
    ledgers,
    ledgerEntries,
    addAllocationBarrier: (barrier) => {
      allocationBarriers.push(barrier);
    },
    allocatedAddresses: (ref) =>
      addresses.store.byIndex(POOL_INDEX, poolKey(ref)).map((address) => ({
        namespace: address.metadata.namespace ?? '',
        name: address.metadata.name,
        address: address.spec.address,
        prefix: address.spec.prefix,
        claimName: address.spec.claimRef.name,
      })),
    pools: () => {
      const views: PoolView[] = [];
      for (const informer of poolInformers.values()) {
        for (const pool of informer.store.list()) {
          const ref = poolRefOfPool(pool);
          if (ref) views.push({ ref, pool });
        }
      }
      return views;
    },
    pool: poolOf,
    hasSynced: () => viewInformers.every((informer) => informer.hasSynced()),
    waitForSync: async (signal) => {
      await Promise.all(viewInformers.map((informer) => informer.whenSynced(signal)));
      return viewInformers.every((informer) => informer.hasSynced());
    },
  };
}

function keyOf(claim: StoredClaim): ObjectKey {
  return { namespace: claim.metadata.namespace, name: claim.metadata.name };
}
