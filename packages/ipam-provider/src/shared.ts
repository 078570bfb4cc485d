import {
  AssumedObjects,
  type Cache,
  type Client,
  type EventRecorder,
  type KubeObject,
  type Manager,
  NAMESPACE_INDEX,
  type ObjectKey,
  type SharedInformer,
} from '@tally-ipam/controller-kit';
import type { Holding } from '@tally-ipam/ledger';
import type { Logger } from 'pino';
import type { AllocationEvents } from './allocation-events.js';
import type { AddressHolds } from './holds.js';
import type { ProviderMetrics } from './metrics.js';
import { poolClusterName } from './pause.js';
import { isGlobalPoolKind, type ServedPoolKind } from './pool-kinds.js';
import { type PoolRef, poolRefOfPool } from './pool-ref.js';
import type { PoolStates } from './pool-states.js';
import type {
  HoldingSource,
  StoredAddress,
  StoredClaim,
  StoredCluster,
  StoredNamespace,
  StoredPool,
} from './resources.js';

/** The provider's informers, one per resource (and served pool kind) in the provider's scope, shared by its controllers. */
export interface ProviderInformers {
  readonly claims: SharedInformer<StoredClaim>;
  readonly addresses: SharedInformer<StoredAddress>;
  readonly clusters: SharedInformer<StoredCluster>;
  readonly pools: ReadonlyMap<ServedPoolKind, SharedInformer<StoredPool>>;
  /** Every namespace (cluster-wide, whatever the provider's scope): a global pool may select claims by their labels. */
  readonly namespaces: SharedInformer<StoredNamespace>;
}

/** This process's own writes on top of the informers (the assume cache): see `AssumedObjects`. */
export interface AssumedWrites {
  readonly claims: AssumedObjects<StoredClaim>;
  readonly addresses: AssumedObjects<StoredAddress>;
  readonly holdings: AssumedObjects<Holding>;
}

/**
 * What the provider's controllers share: one client, one cache and its informers, the ledger entries as holdings and
 * the writer behind them, the pools' allocation states, the options. Built once by `setupIPAMProvider`.
 */
export interface ProviderContext {
  readonly client: Client;
  readonly cache: Cache;
  readonly registry: Manager['registry'];
  readonly logger: Logger;
  /** A new Event recorder for one controller (`Manager.getEventRecorderFor`). */
  readonly eventRecorderFor: (controller: string) => EventRecorder;
  /** Milliseconds since the epoch: the clock of grace periods, release times and conditions. */
  readonly now: () => number;
  /** The namespace of claims, IPAddresses, Clusters and namespaced pools; undefined: all. */
  readonly namespace: string | undefined;
  /** The `cluster.x-k8s.io/watch-filter` value claims must carry; empty: all. */
  readonly watchFilter: string;
  readonly informers: ProviderInformers;
  /**
   * The pool kinds this process serves (`servedPoolKinds`): claims naming any other kind are not reconciled, even
   * when an IPAddress or pool event names them.
   */
  readonly servedKinds: ReadonlySet<ServedPoolKind>;
  /** The ledger entries seen as holdings (the ledger entry view). */
  readonly holdings: HoldingSource;
  /** Where the API server decides who holds an address: see `AddressHolds`. */
  readonly holds: AddressHolds;
  readonly assumed: AssumedWrites;
  /** A pool by reference: the informer's object, or this process's newer write of it. */
  readonly pool: (ref: PoolRef) => StoredPool | undefined;
  /** Remembers a pool this process just wrote (the assume cache of pools). */
  readonly assumePool: (pool: StoredPool) => void;
  readonly states: PoolStates;
  /** Which routine AddressAllocated Events are recorded on claims and which are summed up on the pool. */
  readonly allocationEvents: AllocationEvents;
  readonly metrics: ProviderMetrics;
}

/**
 * The pools as this process last saw them: each pool informer with this process's own writes on top (the assume cache
 * of pools, see `AssumedObjects`), and how a write is noted there.
 */
export function assumedPools(informers: ProviderInformers['pools']): Pick<ProviderContext, 'pool' | 'assumePool'> {
  const assumed = new Map<ServedPoolKind, AssumedObjects<StoredPool>>(
    [...informers].map(([kind, informer]) => [kind, new AssumedObjects(informer)]),
  );
  return {
    pool: (ref) => assumed.get(ref.kind)?.get(ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name),
    assumePool: (pool) => {
      const ref = poolRefOfPool(pool);
      if (ref) assumed.get(ref.kind)?.assume(pool);
    },
  };
}

/** The informer scope of a pool kind: the provider's namespace for namespaced kinds, every object for global ones. */
export function poolScope(kind: ServedPoolKind, namespace: string | undefined): { namespace?: string | undefined } {
  return isGlobalPoolKind(kind) ? {} : { namespace };
}

/** The namespaced pools labelled with a Cluster's name: they pause with that Cluster (clusterctl move). */
export function poolsOfCluster(informers: ProviderInformers, cluster: KubeObject): StoredPool[] {
  const clusterNamespace = cluster.metadata.namespace ?? '';
  const pools: StoredPool[] = [];
  for (const [kind, informer] of informers.pools) {
    if (isGlobalPoolKind(kind)) continue;
    for (const pool of informer.store.byIndex(NAMESPACE_INDEX, clusterNamespace)) {
      if (poolClusterName(pool) === cluster.metadata.name) pools.push(pool);
    }
  }
  return pools;
}

/** The request of an object: its namespace and name. */
export function keyOf(object: KubeObject): ObjectKey {
  return { namespace: object.metadata.namespace, name: object.metadata.name };
}
