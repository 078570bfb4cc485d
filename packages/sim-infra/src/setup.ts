import { CLUSTER_GROUP } from '@tally-ipam/api-types';
import {
  controllerOwnerOf,
  type KubeObject,
  OWNER_UID_INDEX,
  type SharedInformer,
} from '@tally-ipam/controller-kit/cache';
import { resourceHasFilterLabel } from '@tally-ipam/controller-kit/capi';
import { Client, type ObjectKey } from '@tally-ipam/controller-kit/client';
import { Controller } from '@tally-ipam/controller-kit/controller';
import type { Manager } from '@tally-ipam/controller-kit/manager';
import {
  formatLabelValue,
  MACHINE_POOL_RESOURCE,
  MACHINEPOOL_NAME_LABEL,
  type StoredMachinePool,
} from '@tally-ipam/machinepool';
import { SIM_CLUSTER_KIND, SIM_GROUP, SIM_MACHINE_KIND, SIM_MACHINE_POOL_KIND } from './api/v1alpha1/constants.js';
import {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  CLUSTER_RESOURCE,
  MACHINE_RESOURCE,
  SIM_CLUSTER_RESOURCE,
  SIM_MACHINE_POOL_RESOURCE,
  SIM_MACHINE_RESOURCE,
  type StoredAddress,
  type StoredClaim,
  type StoredCluster,
  type StoredMachine,
} from './resources.js';
import { SimClusterReconciler } from './simcluster-reconciler.js';
import { SimMachineReconciler } from './simmachine-reconciler.js';
import { SimMachinePoolReconciler } from './simmachinepool-reconciler.js';
import { WorkloadClusters } from './simulated-cloud.js';

/** Field manager of the provider's writes unless the options name another. */
export const SIM_FIELD_MANAGER = 'sim-infra-controller';
const MACHINES_BY_CLUSTER_INDEX = 'simInfra:clusterName';
const MACHINE_POOLS_BY_CLUSTER_INDEX = 'simInfra:clusterName';
const DEFAULT_CONCURRENCY = 10;

export interface SimInfraProviderOptions {
  /** Watch this namespace only (CAPI's `--namespace`); all namespaces when absent. */
  readonly namespace?: string | undefined;
  /** Only objects labelled `cluster.x-k8s.io/watch-filter=<value>` (CAPI's `--watch-filter`); empty = all. */
  readonly watchFilter?: string | undefined;
  /** SimMachines (and SimClusters) reconciled in parallel. Default 10. */
  readonly concurrency?: number | undefined;
  /** Field manager of the provider's writes, also on the workload clusters. Default `sim-infra-controller`. */
  readonly fieldManager?: string | undefined;
  /** The clock of conditions and Node heartbeats. Default `new Date()`. */
  readonly now?: (() => Date) | undefined;
}

/** What `setupSimInfraProvider` registered. */
export interface SimInfraProvider {
  readonly simClusterController: Controller;
  readonly simMachineController: Controller;
  readonly simMachinePoolController: Controller;
}

/** A runnable that releases what the provider holds when the manager stops. */
function closingRunnable(close: () => void): { needLeaderElection: false; start(signal: AbortSignal): Promise<void> } {
  return {
    needLeaderElection: false,
    start: (signal) =>
      new Promise<void>((resolve) => {
        const stop = (): void => {
          close();
          resolve();
        };
        if (signal.aborted) stop();
        else signal.addEventListener('abort', stop, { once: true });
      }),
  };
}

/** The Sim object a CAPI object points at through `infrastructureRef`, if it is of `kind`. */
function infrastructureRequest(object: StoredCluster | StoredMachine, kind: string): ObjectKey[] {
  return infrastructureRefRequest(object.metadata.namespace, object.spec?.infrastructureRef, kind);
}

function infrastructureRefRequest(
  namespace: string | undefined,
  ref: { apiGroup: string; kind: string; name: string } | undefined,
  kind: string,
): ObjectKey[] {
  if (!ref || ref.kind !== kind || ref.apiGroup !== SIM_GROUP) return [];
  return [{ namespace, name: ref.name }];
}

/** SimMachine → the SimMachinePools among its owners (a pool's instance has a non-controller reference to it). */
function poolsOwning(simMachine: KubeObject): ObjectKey[] {
  return (simMachine.metadata.ownerReferences ?? [])
    .filter((ref) => ref.kind === SIM_MACHINE_POOL_KIND && ref.apiVersion.startsWith(`${SIM_GROUP}/`))
    .map((ref) => ({ namespace: simMachine.metadata.namespace, name: ref.name }));
}

/** The SimMachines that carry a MachinePool's labels (CAPI's selection of MachinePool Machines). */
function instancesOfMachinePool(simMachines: SharedInformer<KubeObject>, machinePool: StoredMachinePool): ObjectKey[] {
  const poolLabel = formatLabelValue(machinePool.metadata.name);
  return simMachines.store
    .list()
    .filter(
      (simMachine) =>
        simMachine.metadata.namespace === machinePool.metadata.namespace &&
        simMachine.metadata.labels?.[MACHINEPOOL_NAME_LABEL] === poolLabel,
    )
    .map((simMachine) => ({ namespace: simMachine.metadata.namespace, name: simMachine.metadata.name }));
}

/** The SimMachines a SimMachinePool owns. */
function simMachinesOwnedBy(simMachines: SharedInformer<KubeObject>, pool: KubeObject): ObjectKey[] {
  const uid = pool.metadata.uid;
  if (!uid) return [];
  return simMachines.store
    .byIndex(OWNER_UID_INDEX, uid)
    .map((simMachine) => ({ namespace: simMachine.metadata.namespace, name: simMachine.metadata.name }));
}

/** IPAddress → its claim → the claim's controller, if that is a Sim object of `kind`. */
function addressToClaimOwner(
  claims: SharedInformer<StoredClaim>,
  kind: string,
): (address: StoredAddress) => ObjectKey[] {
  return (address) => {
    const claim = claims.store.get(`${address.metadata.namespace}/${address.spec.claimRef.name}`);
    const owner = claim ? controllerOwnerOf(claim) : undefined;
    if (!owner || owner.kind !== kind || !owner.apiVersion.startsWith(`${SIM_GROUP}/`)) return [];
    return [{ namespace: address.metadata.namespace, name: owner.name }];
  };
}

/**
 * Registers the Sim infrastructure provider on a controller-kit Manager: the SimCluster and SimMachine controllers
 * and the caches they share. Call before `manager.start`. The template webhooks are separate
 * (`registerSimWebhooks`), since they need a serving certificate.
 */
export function setupSimInfraProvider(manager: Manager, options: SimInfraProviderOptions = {}): SimInfraProvider {
  const namespace = options.namespace || undefined;
  const now = options.now ?? ((): Date => new Date());
  const cache = manager.cache;
  const logger = manager.logger.child({ component: 'sim-infra' });
  const fieldManager = options.fieldManager ?? SIM_FIELD_MANAGER;
  let client = manager.client;
  if (fieldManager !== manager.client.fieldManager) {
    const own = new Client(manager.kubeConfig, { fieldManager });
    client = own;
    manager.add(closingRunnable(() => own.close()));
  }
  const workloads = new WorkloadClusters(client, fieldManager, logger);
  manager.add(closingRunnable(() => workloads.close()));

  const scope = { namespace };
  const simClusters = cache.informerFor(SIM_CLUSTER_RESOURCE, scope);
  const simMachines = cache.informerFor(SIM_MACHINE_RESOURCE, scope);
  const clusters = cache.informerFor(CLUSTER_RESOURCE, scope);
  const claims = cache.informerFor(CLAIM_RESOURCE, scope);
  const addresses = cache.informerFor(ADDRESS_RESOURCE, scope);
  const machines = cache.informerFor(MACHINE_RESOURCE, {
    namespace,
    indexers: {
      [MACHINES_BY_CLUSTER_INDEX]: (machine: StoredMachine) => [
        `${machine.metadata.namespace}/${machine.spec.clusterName}`,
      ],
    },
  });
  const simMachinePools = cache.informerFor(SIM_MACHINE_POOL_RESOURCE, scope);
  const machinePools = cache.informerFor(MACHINE_POOL_RESOURCE, {
    namespace,
    indexers: {
      [MACHINE_POOLS_BY_CLUSTER_INDEX]: (machinePool: StoredMachinePool) => [
        `${machinePool.metadata.namespace}/${machinePool.spec.clusterName}`,
      ],
    },
  });
  const filter = resourceHasFilterLabel<KubeObject>(options.watchFilter ?? '');
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;

  const simMachineReconciler = new SimMachineReconciler({
    client,
    simMachines,
    machines,
    machinePools,
    simMachinePools,
    clusters,
    claims,
    addresses,
    workloads,
    recorder: manager.getEventRecorderFor('simmachine'),
    now,
  });
  const simMachineController = new Controller({
    name: 'simmachine',
    for: SIM_MACHINE_RESOURCE,
    forOptions: { namespace, predicates: [filter] },
    reconciler: simMachineReconciler,
    cache,
    registry: manager.registry,
    logger,
    maxConcurrentReconciles: concurrency,
  })
    .owns(CLAIM_RESOURCE, scope)
    .watches(ADDRESS_RESOURCE, addressToClaimOwner(claims, SIM_MACHINE_KIND), scope)
    .watches(MACHINE_RESOURCE, (machine) => infrastructureRequest(machine, SIM_MACHINE_KIND), scope)
    .watches(
      CLUSTER_RESOURCE,
      (cluster) =>
        machines.store
          .byIndex(MACHINES_BY_CLUSTER_INDEX, `${cluster.metadata.namespace}/${cluster.metadata.name}`)
          .flatMap((machine) => infrastructureRequest(machine, SIM_MACHINE_KIND)),
      scope,
    )
    // A pool's instances take bootstrap data and version from the MachinePool.
    .watches(MACHINE_POOL_RESOURCE, (machinePool) => instancesOfMachinePool(simMachines, machinePool), scope)
    .watches(SIM_MACHINE_POOL_RESOURCE, (pool) => simMachinesOwnedBy(simMachines, pool), scope);

  const simClusterReconciler = new SimClusterReconciler({
    client,
    simClusters,
    clusters,
    claims,
    addresses,
    recorder: manager.getEventRecorderFor('simcluster'),
    now,
  });
  const simClusterController = new Controller({
    name: 'simcluster',
    for: SIM_CLUSTER_RESOURCE,
    forOptions: { namespace, predicates: [filter] },
    reconciler: simClusterReconciler,
    cache,
    registry: manager.registry,
    logger,
    maxConcurrentReconciles: concurrency,
  })
    .owns(CLAIM_RESOURCE, scope)
    .watches(ADDRESS_RESOURCE, addressToClaimOwner(claims, SIM_CLUSTER_KIND), scope)
    .watches(CLUSTER_RESOURCE, (cluster) => infrastructureRequest(cluster, SIM_CLUSTER_KIND), scope);

  const simMachinePoolReconciler = new SimMachinePoolReconciler({
    client,
    simMachinePools,
    simMachines,
    machinePools,
    machines,
    clusters,
    now,
  });
  const machinePoolRequest = (machinePool: StoredMachinePool): ObjectKey[] =>
    infrastructureRefRequest(
      machinePool.metadata.namespace,
      machinePool.spec.template.spec.infrastructureRef,
      SIM_MACHINE_POOL_KIND,
    );
  const simMachinePoolController = new Controller({
    name: 'simmachinepool',
    for: SIM_MACHINE_POOL_RESOURCE,
    forOptions: { namespace, predicates: [filter] },
    reconciler: simMachinePoolReconciler,
    cache,
    registry: manager.registry,
    logger,
    maxConcurrentReconciles: concurrency,
  })
    .watches(SIM_MACHINE_RESOURCE, poolsOwning, scope)
    .watches(MACHINE_POOL_RESOURCE, machinePoolRequest, scope)
    .watches(
      CLUSTER_RESOURCE,
      (cluster) =>
        machinePools.store
          .byIndex(MACHINE_POOLS_BY_CLUSTER_INDEX, `${cluster.metadata.namespace}/${cluster.metadata.name}`)
          .flatMap(machinePoolRequest),
      scope,
    );

  manager.add(simMachineController);
  manager.add(simClusterController);
  manager.add(simMachinePoolController);
  logger.info({ namespace: namespace ?? '<all>', group: SIM_GROUP, owner: CLUSTER_GROUP }, 'Sim provider set up');
  return { simClusterController, simMachineController, simMachinePoolController };
}
