import * as z from 'zod';
import {
  CLUSTER_KIND,
  CLUSTER_V1BETA2_API_VERSION,
  MACHINE_KIND,
  MACHINEPOOL_KIND,
} from './cluster/v1beta2/constants.js';
import { Cluster, Machine, MachinePool } from './cluster/v1beta2/types.js';
import { IPADDRESS_KIND, IPADDRESSCLAIM_KIND, IPAM_V1BETA2_API_VERSION } from './ipam/v1beta2/constants.js';
import { IPAddress, IPAddressClaim } from './ipam/v1beta2/types.js';
import { ObjectMeta } from './meta/v1/types.js';

/**
 * A resource with the zod schema its objects are parsed with where they enter (cache, client). Structurally the
 * controller kit's `TypedResourceKind`, so these descriptors go straight into `Client` and `Cache` calls without
 * api-types depending on the kit (the kit depends on api-types for Cluster API names).
 */
export interface TypedResourceDescriptor<T> {
  /** `group/version`, or `v1` for the core group. */
  readonly apiVersion: string;
  readonly kind: string;
  /** Lower-case plural as served by the API server. */
  readonly plural: string;
  readonly namespaced: boolean;
  readonly schema: z.ZodType<T>;
}

/** Objects read from the API server always have a name; the type schemas allow none (for generateName inputs). */
export const StoredObjectMeta = ObjectMeta.extend({ name: z.string().min(1) });

export const StoredCluster = Cluster.extend({ metadata: StoredObjectMeta });
export type StoredCluster = z.infer<typeof StoredCluster>;
export const StoredMachine = Machine.extend({ metadata: StoredObjectMeta });
export type StoredMachine = z.infer<typeof StoredMachine>;
export const StoredMachinePool = MachinePool.extend({ metadata: StoredObjectMeta });
export type StoredMachinePool = z.infer<typeof StoredMachinePool>;
export const StoredClaim = IPAddressClaim.extend({ metadata: StoredObjectMeta });
export type StoredClaim = z.infer<typeof StoredClaim>;
export const StoredAddress = IPAddress.extend({ metadata: StoredObjectMeta });
export type StoredAddress = z.infer<typeof StoredAddress>;

/** `cluster.x-k8s.io/v1beta2` Clusters. */
export const CLUSTER_RESOURCE: TypedResourceDescriptor<StoredCluster> = {
  apiVersion: CLUSTER_V1BETA2_API_VERSION,
  kind: CLUSTER_KIND,
  plural: 'clusters',
  namespaced: true,
  schema: StoredCluster,
};
/** `cluster.x-k8s.io/v1beta2` Machines. */
export const MACHINE_RESOURCE: TypedResourceDescriptor<StoredMachine> = {
  apiVersion: CLUSTER_V1BETA2_API_VERSION,
  kind: MACHINE_KIND,
  plural: 'machines',
  namespaced: true,
  schema: StoredMachine,
};
/** `cluster.x-k8s.io/v1beta2` MachinePools. */
export const MACHINE_POOL_RESOURCE: TypedResourceDescriptor<StoredMachinePool> = {
  apiVersion: CLUSTER_V1BETA2_API_VERSION,
  kind: MACHINEPOOL_KIND,
  plural: 'machinepools',
  namespaced: true,
  schema: StoredMachinePool,
};
/** `ipam.cluster.x-k8s.io/v1beta2` IPAddressClaims. */
export const CLAIM_RESOURCE: TypedResourceDescriptor<StoredClaim> = {
  apiVersion: IPAM_V1BETA2_API_VERSION,
  kind: IPADDRESSCLAIM_KIND,
  plural: 'ipaddressclaims',
  namespaced: true,
  schema: StoredClaim,
};
/** `ipam.cluster.x-k8s.io/v1beta2` IPAddresses. */
export const ADDRESS_RESOURCE: TypedResourceDescriptor<StoredAddress> = {
  apiVersion: IPAM_V1BETA2_API_VERSION,
  kind: IPADDRESS_KIND,
  plural: 'ipaddresses',
  namespaced: true,
  schema: StoredAddress,
};
