import { isIPAddressClaimReference } from '@tally-ipam/api-types';
import {
  annotationChangedPredicate,
  Controller,
  defaultControllerRateLimiter,
  type KubeObject,
  type ObjectKey,
  type Predicate,
  resourceHasFilterLabel,
} from '@tally-ipam/controller-kit';
import type { Holding } from '@tally-ipam/ledger';
import { CLAIM_MAX_RETRY_DELAY_MS, CLAIM_RETRY_BURST, CLAIM_RETRY_QPS } from '../constants.js';
import { CLAIM_CLUSTER_INDEX, HOLDING_CLAIM_UID_INDEX, POOL_INDEX } from '../indexes.js';
import { clusterAvailablePredicate } from '../pause.js';
import type { ServedPoolKind } from '../pool-kinds.js';
import { poolKey, poolRefOfClaim, poolRefOfPool } from '../pool-ref.js';
import {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  CLUSTER_RESOURCE,
  NAMESPACE_RESOURCE,
  POOL_RESOURCES,
  type StoredAddress,
  type StoredClaim,
  type StoredPool,
} from '../resources.js';
import { keyOf, type ProviderContext, poolScope, poolsOfCluster } from '../shared.js';
import { KeyedSerializer } from '../tenancy.js';
import { CreatedAddresses } from './created-addresses.js';
import { HoldAhead } from './hold-ahead.js';
import { ClaimReconciler } from './reconciler.js';

const DEFAULT_CONCURRENCY = 10;

export interface ClaimControllerOptions {
  /** Claims reconciled in parallel (a claim is never reconciled twice at once). Default 10. */
  readonly concurrency?: number | undefined;
  /** Awaited, in order, before every reconcile: no claim gets an address before they all resolved. */
  readonly barriers: readonly (() => Promise<unknown>)[];
}

/**
 * The IPAddressClaim controller: its reconciler and what re-queues a claim — its IPAddress (unless this process just
 * created it), its pool (a change that can change what it gets), its Cluster or its pool's Cluster (un-pausing), and
 * its ledger entries (a surplus to give back, an entry removed under it).
 */
export function newClaimController(shared: ProviderContext, options: ClaimControllerOptions): Controller {
  const { informers, holdings, assumed, namespace } = shared;
  const { claims, addresses } = informers;
  const createdAddresses = new CreatedAddresses();
  const reconciler = new ClaimReconciler({
    holdAhead: new HoldAhead(claimServedBy(shared.watchFilter, shared.servedKinds)),
    createdAddresses,
    client: shared.client,
    cache: shared.cache,
    claims,
    addresses,
    holdings,
    holds: shared.holds,
    clusters: informers.clusters,
    namespaces: informers.namespaces,
    tenancyTurns: new KeyedSerializer(),
    assumed,
    pool: shared.pool,
    servedKinds: shared.servedKinds,
    states: shared.states,
    recorder: shared.eventRecorderFor('ipaddressclaim'),
    allocationEvents: shared.allocationEvents,
    metrics: shared.metrics,
    now: shared.now,
  });
  const controller = new Controller({
    name: 'tally-ipaddressclaim',
    for: CLAIM_RESOURCE,
    forOptions: {
      namespace,
      predicates: [
        tallyClaimPredicate(shared.servedKinds),
        resourceHasFilterLabel(shared.watchFilter),
        claimChangedPredicate(),
      ],
    },
    reconciler: {
      reconcile: async (request, context) => {
        for (const barrier of options.barriers) await barrier();
        return reconciler.reconcile(request, context);
      },
    },
    cache: shared.cache,
    registry: shared.registry,
    logger: shared.logger,
    maxConcurrentReconciles: options.concurrency ?? DEFAULT_CONCURRENCY,
    rateLimiter: defaultControllerRateLimiter({
      maxDelayMs: CLAIM_MAX_RETRY_DELAY_MS,
      qps: CLAIM_RETRY_QPS,
      burst: CLAIM_RETRY_BURST,
    }),
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
  controller.owns(ADDRESS_RESOURCE, {
    namespace,
    predicates: [
      {
        create: ({ object }) =>
          !createdAddresses.take(`${object.metadata.namespace}/${object.metadata.name}`, object.metadata.uid) ||
          holdsAnotherAddress(object),
      },
    ],
  });
  for (const kind of shared.servedKinds) {
    controller.watches(POOL_RESOURCES[kind], claimsOfPool, {
      ...poolScope(kind, namespace),
      predicates: [poolChangedPredicate()],
    });
  }
  controller.watches(
    CLUSTER_RESOURCE,
    (cluster) => [
      ...claims.store.byIndex(CLAIM_CLUSTER_INDEX, `${cluster.metadata.namespace}/${cluster.metadata.name}`).map(keyOf),
      ...poolsOfCluster(informers, cluster).flatMap(claimsOfPool),
    ],
    { namespace, predicates: [clusterAvailablePredicate()] },
  );
  // A namespace relabelled: its claims waiting on a global pool's namespaceSelector may now be served (or, new ones,
  // not). Labels only; every claim of the namespace, since a claim's pool may select by any label.
  controller.watches(
    NAMESPACE_RESOURCE,
    (object) =>
      claims.store
        .list()
        .filter((claim) => claim.metadata.namespace === object.metadata.name)
        .map(keyOf),
    { predicates: [namespaceLabelsChangedPredicate()] },
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
      for (const key of surplusOf(holding)) controller.enqueue(key);
    },
    onDelete: (holding) => {
      for (const key of ownClaimOfHolding(holding)) controller.enqueue(key);
    },
  });
  return controller;
}

/**
 * Whether this process serves a claim: it names a pool of a served kind and carries the watch-filter label (if one is
 * set).
 */
export function claimServedBy(
  watchFilter: string,
  servedKinds: ReadonlySet<ServedPoolKind>,
): (claim: StoredClaim) => boolean {
  const filters = [tallyClaimPredicate(servedKinds), resourceHasFilterLabel<StoredClaim>(watchFilter)];
  return (claim) => filters.every((predicate) => predicate.generic?.({ object: claim }) ?? true);
}

/**
 * The claim watch's event filters. Each lets through exactly the changes the controller must act on; the reconciler is
 * level-triggered anyway, so a filter only saves work — it never decides correctness on its own.
 */

/**
 * Only claims whose `spec.poolRef` names a pool of a served kind by group and kind (the name is resolved by the
 * reconciler): with the in-cluster kinds off, their claims are the reference provider's and pass no event here.
 */
export function tallyClaimPredicate(servedKinds: ReadonlySet<ServedPoolKind>): Predicate<StoredClaim> {
  const isTally = (claim: StoredClaim): boolean => {
    const ref = poolRefOfClaim(claim);
    return ref !== undefined && servedKinds.has(ref.kind);
  };
  return {
    create: ({ object }) => isTally(object),
    update: ({ objectNew }) => isTally(objectNew),
    delete: ({ object }) => isTally(object),
    generic: ({ object }) => isTally(object),
  };
}

function sameMap(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  return JSON.stringify(Object.entries(a ?? {}).sort()) === JSON.stringify(Object.entries(b ?? {}).sort());
}

/**
 * Claim updates that matter: spec (generation), deletion, annotations (pause, requested address) and labels (cluster
 * name, watch filter). Status writes — most of them Tally's own — and finalizer changes are skipped.
 */
export function claimChangedPredicate<T extends KubeObject>(): Predicate<T> {
  return {
    update: ({ objectOld, objectNew }) =>
      objectOld.metadata.generation !== objectNew.metadata.generation ||
      objectOld.metadata.deletionTimestamp !== objectNew.metadata.deletionTimestamp ||
      !sameMap(objectOld.metadata.annotations, objectNew.metadata.annotations) ||
      !sameMap(objectOld.metadata.labels, objectNew.metadata.labels),
  };
}

/** Pool changes that can change what its claims get: spec, deletion, un-pausing, labels (cluster membership). */
export function poolChangedPredicate<T extends KubeObject>(): Predicate<T> {
  const annotations = annotationChangedPredicate<T>();
  return {
    update: (event) =>
      event.objectOld.metadata.generation !== event.objectNew.metadata.generation ||
      event.objectOld.metadata.deletionTimestamp !== event.objectNew.metadata.deletionTimestamp ||
      (annotations.update?.(event) ?? true) ||
      !sameMap(event.objectOld.metadata.labels, event.objectNew.metadata.labels),
  };
}

/** Namespace changes that can change which global pools serve its claims: labels (creation and deletion too). */
export function namespaceLabelsChangedPredicate<T extends KubeObject>(): Predicate<T> {
  return { update: ({ objectOld, objectNew }) => !sameMap(objectOld.metadata.labels, objectNew.metadata.labels) };
}
