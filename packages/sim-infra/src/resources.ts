import {
  CLUSTER_V1BETA2_API_VERSION,
  Cluster,
  IPAddress,
  IPAddressClaim,
  IPAM_V1BETA2_API_VERSION,
  Machine,
  ObjectMeta,
} from '@tally-ipam/api-types';
import { type TypedResourceKind, typedResource } from '@tally-ipam/controller-kit';
import * as z from 'zod';
import {
  SIM_CLUSTER_KIND,
  SIM_CLUSTER_TEMPLATE_KIND,
  SIM_MACHINE_KIND,
  SIM_MACHINE_POOL_KIND,
  SIM_MACHINE_POOL_TEMPLATE_KIND,
  SIM_MACHINE_TEMPLATE_KIND,
  SIM_V1ALPHA1_API_VERSION,
} from './api/v1alpha1/constants.js';
import {
  SimCluster,
  SimClusterTemplate,
  SimMachine,
  SimMachinePool,
  SimMachinePoolTemplate,
  SimMachineTemplate,
} from './api/v1alpha1/types.js';

/**
 * Every resource the provider reads or writes, each with the zod schema its objects are parsed with where they enter
 * (cache, client). Objects read from the API server always have a name, so the stored schemas require one.
 */
const StoredMeta = ObjectMeta.extend({ name: z.string().min(1) });

export const StoredCluster = Cluster.extend({ metadata: StoredMeta });
export type StoredCluster = z.infer<typeof StoredCluster>;
export const StoredMachine = Machine.extend({ metadata: StoredMeta });
export type StoredMachine = z.infer<typeof StoredMachine>;
export const StoredClaim = IPAddressClaim.extend({ metadata: StoredMeta });
export type StoredClaim = z.infer<typeof StoredClaim>;
export const StoredAddress = IPAddress.extend({ metadata: StoredMeta });
export type StoredAddress = z.infer<typeof StoredAddress>;

/** A Secret as far as the provider reads one: kubeconfig and bootstrap data. */
export const StoredSecret = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: StoredMeta,
  type: z.string().optional(),
  data: z.record(z.string(), z.string()).optional(),
});
export type StoredSecret = z.infer<typeof StoredSecret>;

/** A Node in the workload cluster, as far as the simulated kubelet writes one. */
export const StoredNode = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: StoredMeta,
  spec: z.looseObject({ providerID: z.string().optional() }).optional(),
  status: z
    .looseObject({
      conditions: z.array(z.looseObject({ type: z.string(), status: z.string() })).optional(),
    })
    .optional(),
});
export type StoredNode = z.infer<typeof StoredNode>;

export const SIM_CLUSTER_RESOURCE: TypedResourceKind<SimCluster> = typedResource(
  { apiVersion: SIM_V1ALPHA1_API_VERSION, kind: SIM_CLUSTER_KIND, plural: 'simclusters', namespaced: true },
  SimCluster,
);
export const SIM_MACHINE_RESOURCE: TypedResourceKind<SimMachine> = typedResource(
  { apiVersion: SIM_V1ALPHA1_API_VERSION, kind: SIM_MACHINE_KIND, plural: 'simmachines', namespaced: true },
  SimMachine,
);
export const SIM_CLUSTER_TEMPLATE_RESOURCE: TypedResourceKind<SimClusterTemplate> = typedResource(
  {
    apiVersion: SIM_V1ALPHA1_API_VERSION,
    kind: SIM_CLUSTER_TEMPLATE_KIND,
    plural: 'simclustertemplates',
    namespaced: true,
  },
  SimClusterTemplate,
);
export const SIM_MACHINE_TEMPLATE_RESOURCE: TypedResourceKind<SimMachineTemplate> = typedResource(
  {
    apiVersion: SIM_V1ALPHA1_API_VERSION,
    kind: SIM_MACHINE_TEMPLATE_KIND,
    plural: 'simmachinetemplates',
    namespaced: true,
  },
  SimMachineTemplate,
);
export const CLUSTER_RESOURCE: TypedResourceKind<StoredCluster> = typedResource(
  { apiVersion: CLUSTER_V1BETA2_API_VERSION, kind: 'Cluster', plural: 'clusters', namespaced: true },
  StoredCluster,
);
export const MACHINE_RESOURCE: TypedResourceKind<StoredMachine> = typedResource(
  { apiVersion: CLUSTER_V1BETA2_API_VERSION, kind: 'Machine', plural: 'machines', namespaced: true },
  StoredMachine,
);
export const CLAIM_RESOURCE: TypedResourceKind<StoredClaim> = typedResource(
  { apiVersion: IPAM_V1BETA2_API_VERSION, kind: 'IPAddressClaim', plural: 'ipaddressclaims', namespaced: true },
  StoredClaim,
);
export const ADDRESS_RESOURCE: TypedResourceKind<StoredAddress> = typedResource(
  { apiVersion: IPAM_V1BETA2_API_VERSION, kind: 'IPAddress', plural: 'ipaddresses', namespaced: true },
  StoredAddress,
);
export const SECRET_RESOURCE: TypedResourceKind<StoredSecret> = typedResource(
  { apiVersion: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true },
  StoredSecret,
);
export const NODE_RESOURCE: TypedResourceKind<StoredNode> = typedResource(
  { apiVersion: 'v1', kind: 'Node', plural: 'nodes', namespaced: false },
  StoredNode,
);
export const SIM_MACHINE_POOL_RESOURCE: TypedResourceKind<SimMachinePool> = typedResource(
  { apiVersion: SIM_V1ALPHA1_API_VERSION, kind: SIM_MACHINE_POOL_KIND, plural: 'simmachinepools', namespaced: true },
  SimMachinePool,
);
export const SIM_MACHINE_POOL_TEMPLATE_RESOURCE: TypedResourceKind<SimMachinePoolTemplate> = typedResource(
  {
    apiVersion: SIM_V1ALPHA1_API_VERSION,
    kind: SIM_MACHINE_POOL_TEMPLATE_KIND,
    plural: 'simmachinepooltemplates',
    namespaced: true,
  },
  SimMachinePoolTemplate,
);
