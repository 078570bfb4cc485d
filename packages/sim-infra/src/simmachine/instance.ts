import { CLUSTER_GROUP, MACHINE_KIND, MACHINEPOOL_KIND } from '@tally-ipam/api-types';
import { findOwnerReference, isNotFound } from '@tally-ipam/controller-kit/client';
import type { ReconcileContext } from '@tally-ipam/controller-kit/controller';
import { bootstrapDataSecretName, isMachinePoolOwned, type StoredMachinePool } from '@tally-ipam/machinepool';
import {
  SIM_GROUP,
  SIM_MACHINE_POOL_KIND,
  WAITING_FOR_BOOTSTRAP_DATA_REASON,
  WAITING_FOR_CLUSTER_INFRASTRUCTURE_REASON,
  WAITING_FOR_IP_ADDRESSES_REASON,
} from '../api/v1alpha1/constants.js';
import type { SimMachine } from '../api/v1alpha1/types.js';
import { SECRET_RESOURCE, type StoredCluster } from '../resources.js';
import type { ConditionVerdict } from '../util/conditions.js';

import { type InstanceOwner, POLL_UNWATCHED_MS, type SimMachineReconcilerDeps } from './deps.js';

/** Label CAPI puts on control-plane Machines (`clusterv1.MachineControlPlaneLabel`). */
const CONTROL_PLANE_LABEL = 'cluster.x-k8s.io/control-plane';

/** The instance step of a SimMachine's reconcile: what it is made for, and whether it can be created yet. */
export class SimMachineInstance {
  constructor(private readonly deps: SimMachineReconcilerDeps) {}

  /**
   * What the instance is made for. A plain SimMachine belongs to its owner Machine. A MachinePool Machine
   * (`labels.IsMachinePoolOwned`) takes cluster, bootstrap data and version from the MachinePool, as CAPD's
   * DockerMachine does — CAPI gives its Machine an empty `dataSecretName`; before CAPI created that Machine, the
   * instance is reached through its SimMachinePool, so a pool can provision (and list provider IDs) on its own.
   */
  ownerOf(simMachine: SimMachine): InstanceOwner | undefined {
    const namespace = simMachine.metadata.namespace ?? '';
    const machineRef = findOwnerReference(simMachine, { apiGroup: CLUSTER_GROUP, kind: MACHINE_KIND });
    const machine = machineRef ? this.deps.machines.store.get(`${namespace}/${machineRef.name}`) : undefined;
    const machinePool = isMachinePoolOwned(simMachine) ? this.machinePoolOf(simMachine) : undefined;
    if (machinePool) {
      return {
        clusterName: machinePool.spec.clusterName,
        bootstrapSource: `MachinePool ${machinePool.metadata.name} (spec.template.spec.bootstrap.dataSecretName)`,
        dataSecretName: bootstrapDataSecretName(machinePool),
        version: machinePool.spec.template.spec.version,
        failureDomain: machine?.spec.failureDomain || undefined,
        controlPlane: false,
      };
    }
    if (!machine) return undefined;
    return {
      clusterName: machine.spec.clusterName,
      bootstrapSource: `Machine ${machine.metadata.name} (spec.bootstrap.dataSecretName)`,
      dataSecretName: machine.spec.bootstrap?.dataSecretName || undefined,
      version: machine.spec.version,
      failureDomain: machine.spec.failureDomain || undefined,
      controlPlane: machine.metadata.labels?.[CONTROL_PLANE_LABEL] !== undefined,
    };
  }

  /** SimMachine → its SimMachinePool (non-controller owner) → the pool's MachinePool (CAPI's controller owner). */
  private machinePoolOf(simMachine: SimMachine): StoredMachinePool | undefined {
    const namespace = simMachine.metadata.namespace ?? '';
    const poolRef = findOwnerReference(simMachine, { apiGroup: SIM_GROUP, kind: SIM_MACHINE_POOL_KIND });
    const pool = poolRef ? this.deps.simMachinePools.store.get(`${namespace}/${poolRef.name}`) : undefined;
    const machinePoolRef = pool
      ? findOwnerReference(pool, { apiGroup: CLUSTER_GROUP, kind: MACHINEPOOL_KIND })
      : undefined;
    return machinePoolRef ? this.deps.machinePools.store.get(`${namespace}/${machinePoolRef.name}`) : undefined;
  }

  /** Why the instance cannot be created yet, in the contract's order; undefined when it can. */
  async provisioningBlocker(
    simMachine: SimMachine,
    owner: InstanceOwner,
    cluster: StoredCluster,
    addresses: ConditionVerdict,
    context: ReconcileContext,
  ): Promise<{ verdict: ConditionVerdict; requeueAfterMs?: number | undefined } | undefined> {
    const namespace = simMachine.metadata.namespace ?? '';
    if (cluster.status?.initialization?.infrastructureProvisioned !== true) {
      return {
        verdict: {
          status: 'False',
          reason: WAITING_FOR_CLUSTER_INFRASTRUCTURE_REASON,
          message: `Cluster ${cluster.metadata.name} does not have status.initialization.infrastructureProvisioned yet`,
        },
      };
    }
    const dataSecretName = owner.dataSecretName;
    if (!dataSecretName) {
      return {
        verdict: {
          status: 'False',
          reason: WAITING_FOR_BOOTSTRAP_DATA_REASON,
          message: `no bootstrap data yet: ${owner.bootstrapSource} is empty`,
        },
      };
    }
    try {
      await this.deps.client.get(SECRET_RESOURCE, { namespace, name: dataSecretName }, { signal: context.signal });
    } catch (error) {
      if (!isNotFound(error)) throw error;
      return {
        verdict: {
          status: 'False',
          reason: WAITING_FOR_BOOTSTRAP_DATA_REASON,
          message: `bootstrap data Secret ${dataSecretName} named by ${owner.bootstrapSource} does not exist yet`,
        },
        requeueAfterMs: POLL_UNWATCHED_MS,
      };
    }
    if (addresses.status !== 'True') {
      return {
        verdict: {
          status: 'False',
          reason: WAITING_FOR_IP_ADDRESSES_REASON,
          message: `waiting for IP addresses: ${addresses.message}`,
        },
      };
    }
    return undefined;
  }
}
