import type { Cache, KubeObject, SharedInformer } from '@tally-ipam/controller-kit/cache';
import type { Client, EventRecorder, ResourceKind } from '@tally-ipam/controller-kit/client';
import { Controller, type Predicate, type Reconciler } from '@tally-ipam/controller-kit/controller';
import type { Manager } from '@tally-ipam/controller-kit/manager';
import type { StoredMachinePool } from '@tally-ipam/machinepool';
import type { SimCluster, SimMachine, SimMachinePool } from './api/v1alpha1/types.js';
import type { StoredAddress, StoredClaim, StoredCluster, StoredMachine } from './resources.js';
import type { WorkloadClusters } from './simulated-cloud.js';

/**
 * What the three Sim controllers share: one client, one cache and its informers, the options they run with. Each
 * controller adds the indexes its own watches look up by (`<kind>/watches.ts`).
 */
export interface SimControllerContext {
  readonly client: Client;
  readonly cache: Cache;
  readonly registry: Manager['registry'];
  readonly logger: Manager['logger'];
  readonly recorderFor: (name: string) => EventRecorder;
  readonly workloads: WorkloadClusters;
  readonly now: () => Date;
  /** The namespace watched; undefined: all. */
  readonly namespace: string | undefined;
  readonly filter: Predicate<KubeObject>;
  readonly concurrency: number;
  readonly informers: {
    readonly simClusters: SharedInformer<SimCluster>;
    readonly simMachines: SharedInformer<SimMachine>;
    readonly simMachinePools: SharedInformer<SimMachinePool>;
    readonly clusters: SharedInformer<StoredCluster>;
    readonly claims: SharedInformer<StoredClaim>;
    readonly addresses: SharedInformer<StoredAddress>;
    readonly machines: SharedInformer<StoredMachine>;
    readonly machinePools: SharedInformer<StoredMachinePool>;
  };
}

/** A Sim controller for `resource`: the shared cache, metrics registry and logger, the namespace and filter label. */
export function newSimController<R extends ResourceKind>(
  shared: SimControllerContext,
  name: string,
  resource: R,
  reconciler: Reconciler,
): Controller<R> {
  return new Controller({
    name,
    for: resource,
    forOptions: { namespace: shared.namespace, predicates: [shared.filter] },
    reconciler,
    cache: shared.cache,
    registry: shared.registry,
    logger: shared.logger,
    maxConcurrentReconciles: shared.concurrency,
  });
}
