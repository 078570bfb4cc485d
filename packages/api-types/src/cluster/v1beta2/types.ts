import * as z from 'zod';
import { KIND_PATTERN } from '../../meta/v1/patterns.js';
import { Conditions, ObjectMeta, ObjectName } from '../../meta/v1/types.js';
import { CLUSTER_KIND, CLUSTER_V1BETA2_API_VERSION, MACHINE_KIND, MACHINEPOOL_KIND } from './constants.js';

/**
 * The parts of `cluster.x-k8s.io/v1beta2` Cluster, Machine and MachinePool that Tally reads (pausing, cluster
 * membership, addresses, provider IDs). Every object is loose so that everything else round-trips untouched.
 */

/** A `cluster.x-k8s.io/v1beta2` object of one kind; loose, like its parts. */
function clusterObject<K extends string, Spec extends z.ZodType, Status extends z.ZodType>(
  kind: K,
  spec: Spec,
  status: Status,
) {
  return z.looseObject({
    apiVersion: z.literal(CLUSTER_V1BETA2_API_VERSION),
    kind: z.literal(kind),
    metadata: ObjectMeta,
    spec,
    status: status.optional(),
  });
}

/** `ContractVersionedObjectReference`: the version comes from the referenced CRD's contract label. */
export const ContractVersionedObjectReference = z.looseObject({
  apiGroup: ObjectName,
  kind: z.string().min(1).max(63).regex(new RegExp(KIND_PATTERN)),
  name: ObjectName,
});
export type ContractVersionedObjectReference = z.infer<typeof ContractVersionedObjectReference>;

export const ClusterSpec = z.looseObject({
  paused: z.boolean().optional(),
  controlPlaneRef: ContractVersionedObjectReference.optional(),
  infrastructureRef: ContractVersionedObjectReference.optional(),
  controlPlaneEndpoint: z.looseObject({ host: z.string().optional(), port: z.int().optional() }).optional(),
});
export type ClusterSpec = z.infer<typeof ClusterSpec>;

export const ClusterStatus = z.looseObject({
  conditions: Conditions.optional(),
  initialization: z
    .looseObject({
      infrastructureProvisioned: z.boolean().optional(),
      controlPlaneInitialized: z.boolean().optional(),
    })
    .optional(),
  phase: z.string().optional(),
  observedGeneration: z.int().optional(),
});
export type ClusterStatus = z.infer<typeof ClusterStatus>;

export const Cluster = clusterObject(CLUSTER_KIND, ClusterSpec.optional(), ClusterStatus);
export type Cluster = z.infer<typeof Cluster>;

export const MachineAddress = z.looseObject({
  type: z.enum(['Hostname', 'ExternalIP', 'InternalIP', 'ExternalDNS', 'InternalDNS']),
  address: z.string().min(1).max(256),
});
export type MachineAddress = z.infer<typeof MachineAddress>;

export const MachineSpec = z.looseObject({
  clusterName: z.string().min(1).max(63),
  bootstrap: z
    .looseObject({ configRef: ContractVersionedObjectReference.optional(), dataSecretName: z.string().optional() })
    .optional(),
  infrastructureRef: ContractVersionedObjectReference,
  version: z.string().optional(),
  providerID: z.string().optional(),
  failureDomain: z.string().optional(),
});
export type MachineSpec = z.infer<typeof MachineSpec>;

/**
 * `status.initialization` of a Machine and of a MachinePool (upstream's `MachineInitializationStatus` and
 * `MachinePoolInitializationStatus`, the same two fields of the bootstrap and infrastructure contracts).
 */
const MachineInitializationStatus = z.looseObject({
  infrastructureProvisioned: z.boolean().optional(),
  bootstrapDataSecretCreated: z.boolean().optional(),
});

export const MachineStatus = z.looseObject({
  conditions: Conditions.optional(),
  addresses: z.array(MachineAddress).optional(),
  nodeRef: z.looseObject({ name: z.string() }).optional(),
  phase: z.string().optional(),
  initialization: MachineInitializationStatus.optional(),
  observedGeneration: z.int().optional(),
});
export type MachineStatus = z.infer<typeof MachineStatus>;

export const Machine = clusterObject(MACHINE_KIND, MachineSpec, MachineStatus);
export type Machine = z.infer<typeof Machine>;

export const MachinePoolSpec = z.looseObject({
  clusterName: z.string().min(1).max(63),
  replicas: z.int().min(0).optional(),
  template: z.looseObject({
    metadata: z.looseObject({}).optional(),
    spec: MachineSpec,
  }),
  providerIDList: z.array(z.string()).optional(),
  failureDomains: z.array(z.string()).optional(),
});
export type MachinePoolSpec = z.infer<typeof MachinePoolSpec>;

export const MachinePoolStatus = z.looseObject({
  conditions: Conditions.optional(),
  replicas: z.int().optional(),
  readyReplicas: z.int().optional(),
  availableReplicas: z.int().optional(),
  phase: z.string().optional(),
  nodeRefs: z.array(z.looseObject({ name: z.string().optional() })).optional(),
  initialization: MachineInitializationStatus.optional(),
  observedGeneration: z.int().optional(),
});
export type MachinePoolStatus = z.infer<typeof MachinePoolStatus>;

export const MachinePool = clusterObject(MACHINEPOOL_KIND, MachinePoolSpec, MachinePoolStatus);
export type MachinePool = z.infer<typeof MachinePool>;
