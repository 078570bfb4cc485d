import type { ObjectKey } from '@tally-ipam/controller-kit/client';
import type { Controller } from '@tally-ipam/controller-kit/controller';
import { MACHINE_POOL_RESOURCE, type StoredMachinePool } from '@tally-ipam/machinepool';
import { SIM_MACHINE_POOL_KIND } from '../api/v1alpha1/constants.js';
import { CLUSTER_RESOURCE, SIM_MACHINE_POOL_RESOURCE, SIM_MACHINE_RESOURCE } from '../resources.js';
import { MACHINE_POOLS_BY_CLUSTER_INDEX, newSimController, type SimControllerContext } from '../shared.js';
import { infrastructureRefRequest, poolsOwning } from '../watches.js';
import { SimMachinePoolReconciler } from './reconciler.js';

/** The SimMachinePool controller: its reconciler and what it watches (its instances, its MachinePool, the Cluster). */
export function newSimMachinePoolController(shared: SimControllerContext): Controller {
  const { informers } = shared;
  const scope = { namespace: shared.namespace };
  const reconciler = new SimMachinePoolReconciler({
    client: shared.client,
    simMachinePools: informers.simMachinePools,
    simMachines: informers.simMachines,
    machinePools: informers.machinePools,
    machines: informers.machines,
    clusters: informers.clusters,
    now: shared.now,
  });
  const machinePoolRequest = (machinePool: StoredMachinePool): ObjectKey[] =>
    infrastructureRefRequest(
      machinePool.metadata.namespace,
      machinePool.spec.template.spec.infrastructureRef,
      SIM_MACHINE_POOL_KIND,
    );
  return newSimController(shared, 'simmachinepool', SIM_MACHINE_POOL_RESOURCE, reconciler)
    .watches(SIM_MACHINE_RESOURCE, poolsOwning, scope)
    .watches(MACHINE_POOL_RESOURCE, machinePoolRequest, scope)
    .watches(
      CLUSTER_RESOURCE,
      (cluster) =>
        informers.machinePools.store
          .byIndex(MACHINE_POOLS_BY_CLUSTER_INDEX, `${cluster.metadata.namespace}/${cluster.metadata.name}`)
          .flatMap(machinePoolRequest),
      scope,
    );
}
