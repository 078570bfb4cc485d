import type { Controller } from '@tally-ipam/controller-kit/controller';
import { MACHINE_POOL_RESOURCE } from '@tally-ipam/machinepool';
import { SIM_MACHINE_KIND } from '../api/v1alpha1/constants.js';
import {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  CLUSTER_RESOURCE,
  MACHINE_RESOURCE,
  SIM_MACHINE_POOL_RESOURCE,
  SIM_MACHINE_RESOURCE,
} from '../resources.js';
import { newSimController, type SimControllerContext } from '../shared.js';
import { addressToClaimOwner, infrastructureRequest } from '../watches.js';
import { SimMachineReconciler } from './reconciler.js';
import {
  instancesOfMachinePool,
  MACHINES_BY_CLUSTER_INDEX,
  machineClusterKey,
  simMachinesOfCluster,
  simMachinesOwnedBy,
} from './watches.js';

/**
 * The SimMachine controller: its reconciler and what it watches (its claims and their IPAddresses, its Machine and
 * Cluster, and for a pool's instance the MachinePool and SimMachinePool it takes bootstrap data and version from).
 */
export function newSimMachineController(shared: SimControllerContext): Controller {
  const { informers } = shared;
  const scope = { namespace: shared.namespace };
  informers.machines.addIndexers({ [MACHINES_BY_CLUSTER_INDEX]: machineClusterKey });
  const reconciler = new SimMachineReconciler({
    client: shared.client,
    simMachines: informers.simMachines,
    machines: informers.machines,
    machinePools: informers.machinePools,
    simMachinePools: informers.simMachinePools,
    clusters: informers.clusters,
    claims: informers.claims,
    addresses: informers.addresses,
    workloads: shared.workloads,
    recorder: shared.recorderFor('simmachine'),
    now: shared.now,
  });
  return (
    newSimController(shared, 'simmachine', SIM_MACHINE_RESOURCE, reconciler)
      .owns(CLAIM_RESOURCE, scope)
      .watches(ADDRESS_RESOURCE, addressToClaimOwner(informers.claims, SIM_MACHINE_KIND), scope)
      .watches(MACHINE_RESOURCE, (machine) => infrastructureRequest(machine, SIM_MACHINE_KIND), scope)
      .watches(CLUSTER_RESOURCE, (cluster) => simMachinesOfCluster(informers.machines, cluster), scope)
      // A pool's instances take bootstrap data and version from the MachinePool.
      .watches(
        MACHINE_POOL_RESOURCE,
        (machinePool) => instancesOfMachinePool(informers.simMachines, machinePool),
        scope,
      )
      .watches(SIM_MACHINE_POOL_RESOURCE, (pool) => simMachinesOwnedBy(informers.simMachines, pool), scope)
  );
}
