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
import { ledgerHolds, lockHolds } from './holds.js';
import {
  ADDRESS_INDEXERS,
  CLAIM_CLUSTER_INDEX,
  CLAIM_INDEXERS,
  LOCK_CLAIM_UID_INDEX,
  LOCK_INDEXERS,
  POOL_INDEX,
} from './indexes.js';
import { newIPPoolReconciler } from './ip-pool-reconciler.js';
import { AddressLedgers } from './ledger/address-ledgers.js';
import { LedgerEntryView } from './ledger/entry-view.js';
import { migrateLocksToLedgers } from './ledger/lock-migration.js';
import { heldByCachedClaim, LockReconciler } from './lock-reconciler.js';
import { providerMetrics } from './metrics.js';
import { poolClusterName } from './pause.js';
import { type PoolRef, poolKey, poolRefOfAddress, poolRefOfLock, poolRefOfPool } from './pool-ref.js';
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
  LEDGER_RESOURCE,
  LOCK_RESOURCE,
  type LockSource,
  POOL_RESOURCES,
  type StoredAddress,
  type StoredClaim,
  type StoredLock,
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
  /** Age after which a lock without claim and without IPAddress is deleted. Default 60 s. */
  readonly orphanLockSafetyAgeMs?: number | undefined;
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
  /**
   * The retired allocation store of Tally 0.1: one TallyAddressLock per address instead of the per-block
   * TallyAddressLedgers. Kept only so that the migration can be tested against a provider of the old kind running on
   * the same API server (it needs a lock CRD that still accepts creates, which this version does not ship). Default
   * false: ledgers, with every lock found at start imported and deleted before the first allocation.
   */
  readonly retiredAddressLocks?: boolean | undefined;
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
   * controller) to hold addresses through the same batching writer; undefined in the retired lock mode.
   */
  readonly ledgers: AddressLedgers | undefined;
  /** The ledger entries as locks, from the process's one ledger informer; undefined in the retired lock mode. */
  readonly ledgerEntries: LedgerEntryView | undefined;
  /**
   * Resolves once the ledgers hold every allocation: TallyAddressLocks of an older version imported (a rejection is
   * retried on the next call). Other IPAM controllers of the process allocate nothing before it, as this one does.
   */
  ledgersComplete(): Promise<unknown>;
  /**
   * Adds a barrier: no IPAddressClaim is reconciled (so none gets a new address) before it resolves, after the lock
   * import. Another IPAM controller of the process uses it to enter addresses only it knows (Metal3 IPAddresses) into
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
 * controller per pool kind and the address-lock garbage collector. Call before `manager.start`. Safe to run in any
 * number of processes against one API server at once (leader election on or off): uniqueness is enforced by the
 * API server through the TallyAddressLock names, not by this process's memory.
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
  const ledgerInformer = options.retiredAddressLocks ? undefined : cache.informerFor(LEDGER_RESOURCE);
  const ledgers = ledgerInformer ? new AddressLedgers({ client, store: ledgerInformer.store, now }) : undefined;
  const ledgerEntries = ledgerInformer ? new LedgerEntryView(ledgerInformer, LOCK_INDEXERS) : undefined;
  const locks: LockSource = ledgerEntries ?? cache.informerFor(LOCK_RESOURCE, { indexers: LOCK_INDEXERS });
  const holds = ledgers ? ledgerHolds(ledgers) : lockHolds(client, cache, now);
  // Ledgers: nothing is allocated before every lock of an older version is imported (retried until it succeeds).
  let migration: Promise<unknown> | undefined;
  const allocationBarriers: (() => Promise<unknown>)[] = [];
  const migrated = (): Promise<unknown> => {
    if (!ledgers) return Promise.resolve();
    migration ??= migrateLocksToLedgers(client, ledgers).then(
      (result) => {
        if (result.imported > 0) logger.info(result, 'TallyAddressLocks imported into TallyAddressLedgers and deleted');
        return result;
      },
      (error: unknown) => {
        migration = undefined;
        throw error;
      },
    );
    return migration;
  };
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
    locks: new AssumedObjects(locks),
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
        await migrated();
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
    locks,
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
    holdAhead: ledgers ? new HoldAhead(servesClaim) : undefined,
    createdAddresses,
    client,
    cache,
    claims,
    addresses,
    locks,
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
    return [...locks.store.byIndex(LOCK_CLAIM_UID_INDEX, uid), ...assumed.locks.pending()].some(
      (lock) =>
        lock.spec.claimRef.uid === uid &&
        lock.spec.releasedAt === undefined &&
        lock.spec.address !== address.spec.address,
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
  const claimOfLock = (lock: StoredLock): ObjectKey => ({
    namespace: lock.spec.claimRef.namespace,
    name: lock.spec.claimRef.name,
  });
  const ownClaimOfLock = (lock: StoredLock): ObjectKey[] =>
    isIPAddressClaimReference(lock.spec.claimRef) ? [claimOfLock(lock)] : [];
  // An entry held for a claim whose IPAddress carries another address is a surplus (a hold made ahead, or by another
  // replica, that lost the race for the IPAddress): the claim's reconcile gives it back.
  const surplusOf = (lock: StoredLock): ObjectKey[] =>
    ownClaimOfLock(lock).filter((key) => {
      const address = addresses.store.get(`${key.namespace}/${key.name}`);
      return address !== undefined && address.spec.address !== lock.spec.address && lock.spec.releasedAt === undefined;
    });
  if (ledgers)
    locks.addEventHandler({
      onAdd: (lock) => {
        for (const key of surplusOf(lock)) claimController.enqueue(key);
      },
      onDelete: (lock) => {
        for (const key of ownClaimOfLock(lock)) claimController.enqueue(key);
      },
    });
  else claimController.watches(LOCK_RESOURCE, ownClaimOfLock, { predicates: [deletedPredicate()] });
  manager.add(claimController);

  const poolDeps = {
    client,
    cache,
    pools: poolOf,
    locks,
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
    const poolOfLock = (lock: StoredLock): void => {
      for (const key of countsChangedIn(poolRefOfLock(lock))) controller.enqueue(key);
    };
    if (ledgers) {
      locks.addEventHandler({
        onAdd: poolOfLock,
        onUpdate: (_old, lock) => poolOfLock(lock),
        onDelete: poolOfLock,
      });
    } else controller.watches(LOCK_RESOURCE, (lock: StoredLock) => toPool(poolRefOfLock(lock)));
    poolControllers.set(kind, controller);
    manager.add(controller);
  }

  const lockKey = (lock: StoredLock): ObjectKey => ({ name: lock.metadata.name });
  const locksOfClaim = (claim: StoredClaim): ObjectKey[] =>
    locks.store.byIndex(LOCK_CLAIM_UID_INDEX, claim.metadata.uid ?? '').map(lockKey);
  const locksOfAddress = (address: StoredAddress): ObjectKey[] => {
    const ref = poolRefOfAddress(address);
    if (!ref) return [];
    return locks.store
      .byIndex(POOL_INDEX, poolKey(ref))
      .filter((lock) => lock.spec.address === address.spec.address)
      .map(lockKey);
  };
  const locksOfPool = (pool: KubeObject): ObjectKey[] => {
    const ref = poolRefOfPool(pool as StoredPool);
    return ref ? locks.store.byIndex(POOL_INDEX, poolKey(ref)).map(lockKey) : [];
  };
  const lockController = new Controller({
    name: 'tally-addresslock',
    // With ledgers the requests are entry keys, enqueued from the entry view below; ledger events enqueue nothing.
    for: ledgerInformer ? LEDGER_RESOURCE : LOCK_RESOURCE,
    ...(ledgerInformer
      ? {
          forOptions: {
            predicates: [{ create: () => false, update: () => false, delete: () => false, generic: () => false }],
          },
        }
      : {}),
    reconciler: new LockReconciler({
      client,
      cache,
      locks,
      holds,
      addresses,
      claims,
      states,
      now,
      namespace,
      orphanSafetyAgeMs: options.orphanLockSafetyAgeMs,
    }),
    cache,
    registry: manager.registry,
    logger,
    maxConcurrentReconciles: 2,
  })
    // A lock has no owner reference, so nothing else looks at it when what it stands for goes away: the locks of a
    // deleted claim (clusterctl move removes the claim's finalizer and deletes it on the source), of a deleted
    // IPAddress and of a deleted pool (released locks of a LeastRecentlyReleased pool) are looked at again at once.
    .watches(CLAIM_RESOURCE, (claim: StoredClaim) => locksOfClaim(claim), {
      namespace,
      predicates: [deletedPredicate()],
    })
    .watches(ADDRESS_RESOURCE, (address: StoredAddress) => locksOfAddress(address), {
      namespace,
      predicates: [deletedPredicate()],
    });
  for (const kind of TALLY_POOL_KINDS) {
    lockController.watches(POOL_RESOURCES[kind], locksOfPool, { ...poolScope(kind), predicates: [deletedPredicate()] });
  }
  if (ledgers) {
    // Every allocation adds an entry held for a live claim, which the garbage collector would only look at and leave:
    // those are not queued (one reconcile per allocation saved). The claim's deletion queues them (claim watch above).
    const collectable = (lock: StoredLock): void => {
      if (!heldByCachedClaim(lock, claims)) lockController.enqueue(lockKey(lock));
    };
    locks.addEventHandler({ onAdd: collectable, onUpdate: (_old, lock) => collectable(lock) });
  }
  manager.add(lockController);

  const viewInformers: SharedInformer<KubeObject>[] = [
    addresses as unknown as SharedInformer<KubeObject>,
    ...([...poolInformers.values()] as unknown as SharedInformer<KubeObject>[]),
  ];
  return {
    ledgers,
    ledgerEntries,
    ledgersComplete: migrated,
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
