import { StoredObjectMeta } from '@tally-ipam/api-types';
import { type TypedResourceKind, typedResource } from '@tally-ipam/controller-kit/client';
import { z } from 'zod';

/**
 * CAPV's kinds and the Cluster API kinds api-types does not describe, as far as the scenario reads them. Every object
 * read is parsed with these (loose: the rest of each object rides along unread).
 */

export const INFRA_GROUP = 'infrastructure.cluster.x-k8s.io';
const CAPV_API_VERSION = `${INFRA_GROUP}/v1beta1`;

const Condition = z.looseObject({ type: z.string(), status: z.string(), reason: z.string().optional() });

const PoolRef = z.looseObject({ apiGroup: z.string(), kind: z.string(), name: z.string() });

const Device = z.looseObject({
  networkName: z.string(),
  addressesFromPools: z.array(PoolRef).optional(),
  ipAddrs: z.array(z.string()).optional(),
});

const NetworkStatus = z.looseObject({
  macAddr: z.string(),
  ipAddrs: z.array(z.string()).optional(),
  networkName: z.string().optional(),
  connected: z.boolean().optional(),
});

export const StoredVSphereVM = z.looseObject({
  metadata: StoredObjectMeta,
  spec: z.looseObject({
    network: z.looseObject({ devices: z.array(Device) }),
    biosUUID: z.string().optional(),
    bootstrapRef: z.looseObject({ name: z.string() }).optional(),
  }),
  status: z
    .looseObject({
      ready: z.boolean().optional(),
      addresses: z.array(z.string()).optional(),
      network: z.array(NetworkStatus).optional(),
      conditions: z.array(Condition).optional(),
    })
    .optional(),
});
export type StoredVSphereVM = z.infer<typeof StoredVSphereVM>;

export const StoredVSphereMachine = z.looseObject({
  metadata: StoredObjectMeta,
  spec: z.looseObject({ providerID: z.string().optional() }),
  status: z.looseObject({ ready: z.boolean().optional() }).optional(),
});
export type StoredVSphereMachine = z.infer<typeof StoredVSphereMachine>;

/** An object read only for its name (or written, never read back). */
const AnyObject = z.looseObject({ metadata: StoredObjectMeta });
type AnyObject = z.infer<typeof AnyObject>;

const StoredMachineDeployment = z.looseObject({
  metadata: StoredObjectMeta,
  spec: z.looseObject({ replicas: z.number().optional() }),
  status: z.looseObject({ replicas: z.number().optional() }).optional(),
});

/** A pool of either provider: both have `status.ipAddresses.{total,used,free}` (Tally's mirror the reference's). */
export const StoredPool = z.looseObject({
  metadata: StoredObjectMeta,
  status: z
    .looseObject({
      ipAddresses: z.looseObject({ total: z.number(), used: z.number(), free: z.number() }).optional(),
    })
    .optional(),
});
export type StoredPool = z.infer<typeof StoredPool>;

type StoredMachineDeployment = z.infer<typeof StoredMachineDeployment>;

export const VSPHERE_CLUSTER_RESOURCE: TypedResourceKind<AnyObject> = typedResource(
  { apiVersion: CAPV_API_VERSION, kind: 'VSphereCluster', plural: 'vsphereclusters', namespaced: true },
  AnyObject,
);
export const VSPHERE_MACHINE_TEMPLATE_RESOURCE: TypedResourceKind<AnyObject> = typedResource(
  { apiVersion: CAPV_API_VERSION, kind: 'VSphereMachineTemplate', plural: 'vspheremachinetemplates', namespaced: true },
  AnyObject,
);
export const VSPHERE_MACHINE_RESOURCE: TypedResourceKind<StoredVSphereMachine> = typedResource(
  { apiVersion: CAPV_API_VERSION, kind: 'VSphereMachine', plural: 'vspheremachines', namespaced: true },
  StoredVSphereMachine,
);
export const VSPHERE_VM_RESOURCE: TypedResourceKind<StoredVSphereVM> = typedResource(
  { apiVersion: CAPV_API_VERSION, kind: 'VSphereVM', plural: 'vspherevms', namespaced: true },
  StoredVSphereVM,
);
export const MACHINE_DEPLOYMENT_RESOURCE: TypedResourceKind<StoredMachineDeployment> = typedResource(
  { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineDeployment', plural: 'machinedeployments', namespaced: true },
  StoredMachineDeployment,
);
export const SECRET_RESOURCE: TypedResourceKind<AnyObject> = typedResource(
  { apiVersion: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true },
  AnyObject,
);

/** A pool kind of the provider under test, namespaced or cluster-scoped. */
export function poolResource(
  apiVersion: string,
  kind: string,
  plural: string,
  namespaced: boolean,
): TypedResourceKind<StoredPool> {
  return typedResource({ apiVersion, kind, plural, namespaced }, StoredPool);
}

/** The `Ready` condition of an object's `status.conditions`, if any. */
export function conditionOf(
  object: { status?: { conditions?: readonly { type: string; status: string }[] | undefined } | undefined },
  type: string,
): { type: string; status: string } | undefined {
  return object.status?.conditions?.find((condition) => condition.type === type);
}
