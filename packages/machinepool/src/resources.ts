import { Cluster, Machine, MachinePool, ObjectMeta } from '@tally-ipam/api-types';
import { type TypedResourceKind, typedResource } from '@tally-ipam/controller-kit';
import * as z from 'zod';
import { CLUSTER_V1BETA2_API_VERSION, MACHINE_KIND, MACHINEPOOL_KIND } from './constants.js';

/** Objects read from the API server always have a name; the core schemas allow none (for generateName inputs). */
const StoredMeta = ObjectMeta.extend({ name: z.string().min(1) });

export const StoredMachinePool = MachinePool.extend({ metadata: StoredMeta });
export type StoredMachinePool = z.infer<typeof StoredMachinePool>;
export const StoredMachine = Machine.extend({ metadata: StoredMeta });
export type StoredMachine = z.infer<typeof StoredMachine>;
export const StoredCluster = Cluster.extend({ metadata: StoredMeta });
export type StoredCluster = z.infer<typeof StoredCluster>;

/** `cluster.x-k8s.io/v1beta2` MachinePools, parsed with api-types' schema. */
export const MACHINE_POOL_RESOURCE: TypedResourceKind<StoredMachinePool> = typedResource(
  { apiVersion: CLUSTER_V1BETA2_API_VERSION, kind: MACHINEPOOL_KIND, plural: 'machinepools', namespaced: true },
  StoredMachinePool,
);

/** `cluster.x-k8s.io/v1beta2` Machines, parsed with api-types' schema. */
export const MACHINE_RESOURCE: TypedResourceKind<StoredMachine> = typedResource(
  { apiVersion: CLUSTER_V1BETA2_API_VERSION, kind: MACHINE_KIND, plural: 'machines', namespaced: true },
  StoredMachine,
);

/** `cluster.x-k8s.io/v1beta2` Clusters, parsed with api-types' schema. */
export const CLUSTER_RESOURCE: TypedResourceKind<StoredCluster> = typedResource(
  { apiVersion: CLUSTER_V1BETA2_API_VERSION, kind: 'Cluster', plural: 'clusters', namespaced: true },
  StoredCluster,
);
