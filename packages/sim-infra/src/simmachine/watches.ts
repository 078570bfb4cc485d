import { type KubeObject, OWNER_UID_INDEX, type SharedInformer } from '@tally-ipam/controller-kit/cache';
import type { ObjectKey } from '@tally-ipam/controller-kit/client';
import { formatLabelValue, MACHINEPOOL_NAME_LABEL, type StoredMachinePool } from '@tally-ipam/machinepool';
import { SIM_MACHINE_KIND } from '../api/v1alpha1/constants.js';
import type { StoredCluster, StoredMachine } from '../resources.js';
import { infrastructureRequest } from '../watches.js';

// What only the SimMachine controller's watches look up: which SimMachines an event of another kind concerns.

/** Index of the Machine informer: `<namespace>/<spec.clusterName>`, so that a Cluster event finds its Machines. */
export const MACHINES_BY_CLUSTER_INDEX = 'simInfra:clusterName';

export function machineClusterKey(machine: StoredMachine): string[] {
  return [`${machine.metadata.namespace}/${machine.spec.clusterName}`];
}

/** Cluster → the SimMachines of its Machines (the index must be on `machines`). */
export function simMachinesOfCluster(machines: SharedInformer<StoredMachine>, cluster: StoredCluster): ObjectKey[] {
  return machines.store
    .byIndex(MACHINES_BY_CLUSTER_INDEX, `${cluster.metadata.namespace}/${cluster.metadata.name}`)
    .flatMap((machine) => infrastructureRequest(machine, SIM_MACHINE_KIND));
}

/** The SimMachines that carry a MachinePool's labels (CAPI's selection of MachinePool Machines). */
export function instancesOfMachinePool(
  simMachines: SharedInformer<KubeObject>,
  machinePool: StoredMachinePool,
): ObjectKey[] {
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
export function simMachinesOwnedBy(simMachines: SharedInformer<KubeObject>, pool: KubeObject): ObjectKey[] {
  const uid = pool.metadata.uid;
  if (!uid) return [];
  return simMachines.store
    .byIndex(OWNER_UID_INDEX, uid)
    .map((simMachine) => ({ namespace: simMachine.metadata.namespace, name: simMachine.metadata.name }));
}
