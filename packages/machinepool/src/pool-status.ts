import type { MachineAddress } from '@tally-ipam/api-types';
import type { ConditionInput } from '@tally-ipam/controller-kit/capi';
import { REPLICAS_READY_CONDITION, REPLICAS_READY_REASON, WAITING_FOR_REPLICAS_REASON } from './constants.js';
import type { InfraMachinePoolInstanceStatus } from './contract-fields.js';
import { compareCodePoints, normalizeProviderIDList } from './provider-ids.js';

/** One instance (VM, container, simulated machine) of the pool, as the provider's backend reports it. */
export interface PoolInstance {
  /** Unique within the pool; with MachinePool Machines it is also the InfraMachine's (and Machine's) name. */
  readonly instanceName: string;
  /** Set once the backend knows it; must equal the Node's `spec.providerID` exactly. */
  readonly providerID?: string | undefined;
  /** The instance runs and is usable. */
  readonly ready: boolean;
  readonly addresses?: readonly MachineAddress[] | undefined;
  /** Kubernetes version of the instance, when known. */
  readonly version?: string | undefined;
}

/** An instance list that cannot describe a pool (duplicate names or provider IDs); names the offenders. */
export class PoolInstancesError extends Error {
  override readonly name = 'PoolInstancesError';
}

export interface PoolStatusInput {
  readonly instances: readonly PoolInstance[];
  /** `MachinePool.spec.replicas`; CAPI defaults it to 1 through its webhook, and so does this helper when absent. */
  readonly desiredReplicas: number | undefined;
  /**
   * Whether the pool already reported itself provisioned (`status.ready`). CAPI re-reads `status.ready` on every
   * reconcile and copies it to `MachinePool.status.initialization.infrastructureProvisioned`, so once true it stays
   * true — a pool scaling or replacing instances is still provisioned.
   */
  readonly wasProvisioned: boolean;
  /** `metadata.generation` of the InfraMachinePool, for the conditions' `observedGeneration`. */
  readonly observedGeneration: number;
  /** The InfraMachine kind when the provider implements MachinePool Machines; omitted otherwise. */
  readonly infrastructureMachineKind?: string | undefined;
}

/** The contract fields computed from the instances: what to write to the InfraMachinePool. */
export interface PoolContractState {
  /** Sorted, unique; undefined when empty (an absent list, not `[]`: see the README on CAPI's deep-equal). */
  readonly providerIDList: string[] | undefined;
  readonly status: {
    /** Number of instances that exist (the contract's "most recently observed number of replicas"). */
    readonly replicas: number;
    /** What CAPI v1.12 reads. */
    readonly ready: boolean;
    /** What the contract doc names; written alongside `ready` so the future switch needs no provider change. */
    readonly initialization: { readonly provisioned: boolean };
    readonly instances: InfraMachinePoolInstanceStatus[];
    readonly infrastructureMachineKind?: string;
  };
  /** Instances reporting ready. */
  readonly readyReplicas: number;
  /** `ReplicasReady`: True when as many instances as desired exist and all have a provider ID. */
  readonly replicasReadyCondition: ConditionInput;
}

/** CAPI's webhook default for `MachinePool.spec.replicas`. */
export const DEFAULT_MACHINE_POOL_REPLICAS = 1;

/**
 * Computes the contract fields from the provider's instances, following CAPD's DockerMachinePool: the pool is
 * provisioned once the number of instances equals the desired replicas and every instance has a provider ID, and
 * stays provisioned afterwards.
 */
export function machinePoolStatusFromInstances(input: PoolStatusInput): PoolContractState {
  const instances = [...input.instances].sort((a, b) => compareCodePoints(a.instanceName, b.instanceName));
  assertUnique(instances);
  const desired = input.desiredReplicas ?? DEFAULT_MACHINE_POOL_REPLICAS;
  const providerIDList = normalizeProviderIDList(instances.map((instance) => instance.providerID));
  const withProviderID = instances.filter((instance) => instance.providerID);
  const allReplicasUp = instances.length === desired && withProviderID.length === instances.length;
  const provisioned = input.wasProvisioned || allReplicasUp;
  const readyReplicas = instances.filter((instance) => instance.ready).length;
  return {
    providerIDList: providerIDList.length > 0 ? providerIDList : undefined,
    status: {
      replicas: instances.length,
      ready: provisioned,
      initialization: { provisioned },
      instances: instances.map(instanceStatus),
      ...(input.infrastructureMachineKind ? { infrastructureMachineKind: input.infrastructureMachineKind } : {}),
    },
    readyReplicas,
    replicasReadyCondition: allReplicasUp
      ? {
          type: REPLICAS_READY_CONDITION,
          status: 'True',
          reason: REPLICAS_READY_REASON,
          message: '',
          observedGeneration: input.observedGeneration,
        }
      : {
          type: REPLICAS_READY_CONDITION,
          status: 'False',
          reason: WAITING_FOR_REPLICAS_REASON,
          message: `${withProviderID.length} of ${desired} desired replicas have a provider ID (${instances.length} instances exist)`,
          observedGeneration: input.observedGeneration,
        },
  };
}

function instanceStatus(instance: PoolInstance): InfraMachinePoolInstanceStatus {
  return {
    instanceName: instance.instanceName,
    ...(instance.providerID ? { providerID: instance.providerID } : {}),
    ...(instance.addresses && instance.addresses.length > 0 ? { addresses: [...instance.addresses] } : {}),
    ...(instance.version ? { version: instance.version } : {}),
    ready: instance.ready,
  };
}

function assertUnique(sortedInstances: readonly PoolInstance[]): void {
  const owners = new Map<string, string>();
  for (let index = 0; index < sortedInstances.length; index++) {
    const instance = sortedInstances[index];
    if (instance === undefined) continue;
    if (index > 0 && sortedInstances[index - 1]?.instanceName === instance.instanceName) {
      throw new PoolInstancesError(
        `instance name ${JSON.stringify(instance.instanceName)} appears twice: instance names must be unique within a pool`,
      );
    }
    if (!instance.providerID) continue;
    const other = owners.get(instance.providerID);
    if (other !== undefined) {
      throw new PoolInstancesError(
        `instances ${JSON.stringify(other)} and ${JSON.stringify(instance.instanceName)} share provider ID ${JSON.stringify(instance.providerID)}: each instance needs its own (it must match exactly one Node)`,
      );
    }
    owners.set(instance.providerID, instance.instanceName);
  }
}
