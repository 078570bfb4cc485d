import { AssumedObjects, Client, type Controller, type Manager, parseObjectKey } from '@tally-ipam/controller-kit';
import { AddressLedgers, type Holding, LEDGER_RESOURCE, LedgerEntryView, startUpStep } from '@tally-ipam/ledger';
import { adoptExistingAddresses, type BulkAdoptionResult } from './adoption/bulk-adoption.js';
import { AllocationEvents, type AllocationEventsOptions, DEFAULT_ALLOCATION_EVENTS } from './allocation-events.js';
import { claimServedBy, newClaimController } from './claim/controller.js';
import { ledgerHolds } from './holds.js';
import { ADDRESS_INDEXERS, CLAIM_INDEXERS, HOLDING_INDEXERS } from './indexes.js';
import { newLedgerCollectorController } from './ledgercollector/controller.js';
import { providerMetrics } from './metrics.js';
import { newIPPoolController, poolReconcilerDeps } from './pool/controller.js';
import { isPrefixKind, type ServedPoolKind, servedPoolKinds } from './pool-kinds.js';
import { PoolStates } from './pool-states.js';
import { newPrefixPoolController } from './prefixpool/controller.js';
import { ADDRESS_RESOURCE, CLAIM_RESOURCE, CLUSTER_RESOURCE, NAMESPACE_RESOURCE, POOL_RESOURCES } from './resources.js';
import { newRetiredLedgersController } from './retiredledgers/controller.js';
import { assumedPools, type ProviderContext, poolScope } from './shared.js';
import { type ProviderCacheView, providerCacheView } from './view.js';

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
  /**
   * How long the background releases of deleted claims wait for more of their ledger before one write carries them
   * (`AddressLedgersOptions.releaseCoalesceMs`). Default `RELEASE_COALESCE_MS` (1 s, plus up to 2 s at random). A
   * graceful stop writes whatever still waits.
   */
  readonly releaseCoalesceMs?: number | undefined;
  /**
   * Also serve the in-cluster provider's IP pool kinds (`InClusterIPPool`, `GlobalInClusterIPPool` of
   * `ipam.cluster.x-k8s.io/v1alpha2`) from the same allocator and ledgers (`--enable-in-cluster-ipam`). Off (the
   * default): no informer, no watch and no reconcile for them; their claims are the reference provider's.
   */
  readonly inClusterIPAM?: boolean | undefined;
}

/** What `setupIPAMProvider` registered: the read-only view of its cache for admission webhooks, and its ledgers. */
export interface IPAMProvider extends ProviderCacheView {
  /**
   * The process's one writer of TallyAddressLedgers, for other IPAM controllers of the process (a Metal3 IPClaim
   * controller) to hold addresses through the same batching writer.
   */
  readonly ledgers: AddressLedgers;
  /** The ledger entries as holdings, from the process's one ledger informer. */
  readonly ledgerEntries: LedgerEntryView;
  /**
   * The process's one read-your-own-writes overlay over `ledgerEntries` (`AssumedObjects`): the entries its ledger
   * writes returned, until the view shows them or their removal. Another IPAM front end of the process (the Metal3
   * controllers) reads and writes through it too, so each sees the other's acknowledged holds at once.
   */
  readonly assumedEntries: AssumedObjects<Holding>;
  /**
   * Adds a barrier: no IPAddressClaim is reconciled (so none gets a new address) before it resolves. Another IPAM controller of the process uses it to enter addresses only it knows (Metal3 IPAddresses) into
   * the ledgers at start. A rejection is retried at the next reconcile; the barrier should memoize its success.
   */
  addAllocationBarrier(barrier: () => Promise<unknown>): void;
  /**
   * The start-up adoption, the provider's own first barrier: resolves once every IPAddress of a served claim that the
   * ledgers did not hold (after `clusterctl move`, or a first start over a populated cluster) has been entered into
   * them, in one write per ledger. Runs once per process, on the first reconcile (or on this call if earlier).
   */
  addressesAdopted(): Promise<BulkAdoptionResult>;
}

/**
 * Registers Tally's caches and controllers on a controller-kit Manager: the IPAddressClaim controller, one pool
 * controller per pool kind and the ledger garbage collector, each wired in its own folder next to its reconciler.
 * Call before `manager.start`. Safe to run in any number of processes against one API server at once (leader election
 * on or off): uniqueness is enforced by the API server through the ledgers' resourceVersions, not by this process's
 * memory.
 */
export function setupIPAMProvider(manager: Manager, options: IPAMProviderOptions = {}): IPAMProvider {
  const namespace = options.namespace || undefined;
  const now = options.now ?? Date.now;
  const cache = manager.cache;
  const logger = manager.logger.child({ component: 'tally-ipam' });
  const client = providerClient(manager, options.fieldManager);
  const metrics = providerMetrics(manager.registry);
  const claims = cache.informerFor(CLAIM_RESOURCE, { namespace, indexers: CLAIM_INDEXERS });
  const addresses = cache.informerFor(ADDRESS_RESOURCE, { namespace, indexers: ADDRESS_INDEXERS });
  const ledgerInformer = cache.informerFor(LEDGER_RESOURCE);
  const ledgers = new AddressLedgers({
    client,
    store: ledgerInformer.store,
    now,
    releaseCoalesceMs: options.releaseCoalesceMs,
  });
  // Not a leader's runnable: stopped after the controllers drained, so nothing queues a release after its flush, and
  // before the manager closes its client.
  manager.add({
    needLeaderElection: false,
    start: async (signal) => {
      await aborted(signal);
      await ledgers.flushPending();
      if (client !== manager.client) client.close();
    },
  });
  const ledgerEntries = new LedgerEntryView(ledgerInformer, HOLDING_INDEXERS);
  const clusters = cache.informerFor(CLUSTER_RESOURCE, { namespace });
  const servedKinds: ReadonlySet<ServedPoolKind> = new Set(servedPoolKinds(options));
  const pools = new Map(
    [...servedKinds].map((kind) => [kind, cache.informerFor(POOL_RESOURCES[kind], poolScope(kind, namespace))]),
  );
  const namespaces = cache.informerFor(NAMESPACE_RESOURCE);
  const informers = { claims, addresses, clusters, pools, namespaces };
  // The assume cache: this process's own writes, until its informers show them (see AssumedObjects).
  const assumed = {
    claims: new AssumedObjects(claims),
    addresses: new AssumedObjects(addresses),
    holdings: new AssumedObjects(ledgerEntries),
  };
  const { pool, assumePool } = assumedPools(pools);
  // The pool states and the allocation Events wake the controllers composed below, once those exist.
  let claimController: Controller | undefined;
  const poolControllers = new Map<ServedPoolKind, Controller>();
  // Scheduling only (which Events to record), so the monotonic clock rather than the `now` of conditions.
  const allocationEvents = new AllocationEvents({
    ...DEFAULT_ALLOCATION_EVENTS,
    ...options.allocationEvents,
    now: () => performance.now(),
    // The pool reconcile records the summary: make sure one runs after the allocation was counted.
    onUnrecorded: (ref) => poolControllers.get(ref.kind)?.enqueue({ namespace: ref.namespace, name: ref.name }),
  });
  const states = new PoolStates({
    pools: pool,
    addresses,
    holdings: ledgerEntries,
    clock: now,
    logger,
    onSpaceFreed: (_pool, waitingClaims) => {
      for (const key of waitingClaims) claimController?.enqueue(parseObjectKey(key));
    },
  });
  const shared: ProviderContext = {
    client,
    cache,
    registry: manager.registry,
    logger,
    eventRecorderFor: (controller) => manager.getEventRecorderFor(controller),
    now,
    namespace,
    watchFilter: options.watchFilter ?? '',
    informers,
    servedKinds,
    holdings: ledgerEntries,
    holds: ledgerHolds(ledgers),
    assumed,
    pool,
    assumePool,
    states,
    allocationEvents,
    metrics,
  };

  const addressesAdopted = startUpStep({
    informers: [claims, addresses, clusters, ledgerInformer, ...pools.values()],
    // Every served kind's IPAddresses, the in-cluster kinds' too: a take-over from the reference keeps every address.
    run: () => adoptExistingAddresses({ ...shared, servesClaim: claimServedBy(shared.watchFilter, servedKinds) }),
  });
  const allocationBarriers: (() => Promise<unknown>)[] = [addressesAdopted];
  claimController = newClaimController(shared, { concurrency: options.concurrency, barriers: allocationBarriers });
  manager.add(claimController);
  const poolDeps = poolReconcilerDeps(shared, options.poolStatusWritesPerSecond);
  for (const kind of servedKinds) {
    const controller = isPrefixKind(kind)
      ? newPrefixPoolController(kind, poolDeps, shared)
      : newIPPoolController(kind, poolDeps, shared);
    poolControllers.set(kind, controller);
    manager.add(controller);
  }
  manager.add(newLedgerCollectorController(shared, { orphanEntrySafetyAgeMs: options.orphanEntrySafetyAgeMs }));
  manager.add(newRetiredLedgersController(shared));

  return {
    ...providerCacheView(informers, pool),
    ledgers,
    ledgerEntries,
    assumedEntries: assumed.holdings,
    addAllocationBarrier: (barrier) => {
      allocationBarriers.push(barrier);
    },
    addressesAdopted,
  };
}

/**
 * The manager's client, or one of the provider's own for another field manager (closed when the manager stops, after
 * the ledgers' last writes: `setupIPAMProvider`).
 */
function providerClient(manager: Manager, fieldManager: string | undefined): Client {
  if (!fieldManager || fieldManager === manager.client.fieldManager) return manager.client;
  return new Client(manager.kubeConfig, { fieldManager });
}

/** Resolves when `signal` aborts (at once if it has). */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
