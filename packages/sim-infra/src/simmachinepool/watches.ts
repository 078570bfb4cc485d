import type { KubeObject, SharedInformer } from '@tally-ipam/controller-kit/cache';
import type { ObjectKey } from '@tally-ipam/controller-kit/client';
import type { StoredMachinePool } from '@tally-ipam/machinepool';
import { SIM_GROUP, SIM_MACHINE_POOL_KIND } from '../api/v1alpha1/constants.js';
import type { StoredCluster } from '../resources.js';
import { infrastructureRefRequest } from '../watches.js';

// What only the SimMachinePool controller's watches look up: which SimMachinePools an event of another kind concerns.

/** Index of the MachinePool informer: `<namespace>/<spec.clusterName>`, so that a Cluster event finds its pools. */
export const MACHINE_POOLS_BY_CLUSTER_INDEX = 'simInfra:clusterName';

export function machinePoolClusterKey(machinePool: StoredMachinePool): string[] {
  return [`${machinePool.metadata.namespace}/${machinePool.spec.clusterName}`];
}

/** MachinePool → the SimMachinePool its template's `infrastructureRef` names. */
export function simMachinePoolOf(machinePool: StoredMachinePool): ObjectKey[] {
  return infrastructureRefRequest(
    machinePool.metadata.namespace,
    machinePool.spec.template.spec.infrastructureRef,
    SIM_MACHINE_POOL_KIND,
  );
}

/** Cluster → the SimMachinePools of its MachinePools (the index must be on `machinePools`). */
export function simMachinePoolsOfCluster(
  machinePools: SharedInformer<StoredMachinePool>,
  cluster: StoredCluster,
): ObjectKey[] {
  return machinePools.store
    .byIndex(MACHINE_POOLS_BY_CLUSTER_INDEX, `${cluster.metadata.namespace}/${cluster.metadata.name}`)
    .flatMap(simMachinePoolOf);
}

/** SimMachine → the SimMachinePools among its owners (a pool's instance has a non-controller reference to it). */
export function poolsOwning(simMachine: KubeObject): ObjectKey[] {
  return (simMachine.metadata.ownerReferences ?? [])
    .filter((ref) => ref.kind === SIM_MACHINE_POOL_KIND && ref.apiVersion.startsWith(`${SIM_GROUP}/`))
    .map((ref) => ({ namespace: simMachine.metadata.namespace, name: ref.name }));
}
