import type { Controller } from '@tally-ipam/controller-kit/controller';
import { MACHINE_POOL_RESOURCE } from '@tally-ipam/machinepool';
import { CLUSTER_RESOURCE, SIM_MACHINE_POOL_RESOURCE, SIM_MACHINE_RESOURCE } from '../resources.js';
import { newSimController, type SimControllerContext } from '../shared.js';
import { SimMachinePoolReconciler } from './reconciler.js';
import {
  MACHINE_POOLS_BY_CLUSTER_INDEX,
  machinePoolClusterKey,
  poolsOwning,
  simMachinePoolOf,
  simMachinePoolsOfCluster,
} from './watches.js';

/** The SimMachinePool controller: its reconciler and what it watches (its instances, its MachinePool, the Cluster). */
export function newSimMachinePoolController(shared: SimControllerContext): Controller {
  const { informers } = shared;
  const scope = { namespace: shared.namespace };
  informers.machinePools.addIndexers({ [MACHINE_POOLS_BY_CLUSTER_INDEX]: machinePoolClusterKey });
  const reconciler = new SimMachinePoolReconciler({
    client: shared.client,
    simMachinePools: informers.simMachinePools,
    simMachines: informers.simMachines,
    machinePools: informers.machinePools,
    machines: informers.machines,
    clusters: informers.clusters,
    now: shared.now,
  });
  return newSimController(shared, 'simmachinepool', SIM_MACHINE_POOL_RESOURCE, reconciler)
    .watches(SIM_MACHINE_RESOURCE, poolsOwning, scope)
    .watches(MACHINE_POOL_RESOURCE, simMachinePoolOf, scope)
    .watches(CLUSTER_RESOURCE, (cluster) => simMachinePoolsOfCluster(informers.machinePools, cluster), scope);
}
