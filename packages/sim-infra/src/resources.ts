import { StoredObjectMeta } from '@tally-ipam/api-types';
import { type TypedResourceKind, typedResource } from '@tally-ipam/controller-kit/client';
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
 * (cache, client). The Cluster API kinds come from @tally-ipam/api-types (re-exported: they are part of this
 * package's published API); the Sim kinds and the provider's partial views of Secrets and Nodes are defined here.
 */
export {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  CLUSTER_RESOURCE,
  MACHINE_RESOURCE,
  StoredAddress,
  StoredClaim,
  StoredCluster,
  StoredMachine,
} from '@tally-ipam/api-types';

/** A Secret as far as the provider reads one: kubeconfig and bootstrap data. */
export const StoredSecret = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: StoredObjectMeta,
  type: z.string().optional(),
  data: z.record(z.string(), z.string()).optional(),
});
export type StoredSecret = z.infer<typeof StoredSecret>;

/** A Node in the workload cluster, as far as the simulated kubelet writes one. */
export const StoredNode = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: StoredObjectMeta,
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
