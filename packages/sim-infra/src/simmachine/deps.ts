import type { SharedInformer } from '@tally-ipam/controller-kit/cache';
import type { Client, EventRecorder } from '@tally-ipam/controller-kit/client';
import type { StoredMachinePool } from '@tally-ipam/machinepool';
import type { SimMachine, SimMachinePool } from '../api/v1alpha1/types.js';
import type { StoredAddress, StoredClaim, StoredCluster, StoredMachine } from '../resources.js';
import type { WorkloadClusters } from '../simulated-cloud.js';

/** Secrets and the workload cluster are not watched: look again after this long while waiting on them. */
export const POLL_UNWATCHED_MS = 5_000;

export interface SimMachineReconcilerDeps {
  readonly client: Client;
  readonly simMachines: SharedInformer<SimMachine>;
  readonly machines: SharedInformer<StoredMachine>;
  readonly machinePools: SharedInformer<StoredMachinePool>;
  readonly simMachinePools: SharedInformer<SimMachinePool>;
  readonly clusters: SharedInformer<StoredCluster>;
  readonly claims: SharedInformer<StoredClaim>;
  readonly addresses: SharedInformer<StoredAddress>;
  readonly workloads: WorkloadClusters;
  readonly recorder: EventRecorder;
  readonly now: () => Date;
}

/** What an instance is provisioned for: from its Machine, or from its MachinePool for a pool's instance. */
export interface InstanceOwner {
  readonly clusterName: string;
  /** Where the bootstrap data Secret name comes from, for messages. */
  readonly bootstrapSource: string;
  readonly dataSecretName: string | undefined;
  readonly version: string | undefined;
  readonly failureDomain: string | undefined;
  readonly controlPlane: boolean;
}
