import { Conditions, KIND_PATTERN, ObjectMeta, ObjectName } from '@tally-ipam/api-types';
import {
  autoscaleFromZeroStatusFields,
  infraMachinePoolSpecFields,
  infraMachinePoolStatusFields,
} from '@tally-ipam/machinepool';
import * as z from 'zod';
import {
  SIM_CLUSTER_KIND,
  SIM_CLUSTER_TEMPLATE_KIND,
  SIM_MACHINE_KIND,
  SIM_MACHINE_POOL_KIND,
  SIM_MACHINE_POOL_TEMPLATE_KIND,
  SIM_MACHINE_TEMPLATE_KIND,
  SIM_V1ALPHA1_API_VERSION,
} from './constants.js';

/**
 * The Sim kinds (`infrastructure.cluster.x-k8s.io/v1alpha1`), written against the v1beta2 InfraCluster and
 * InfraMachine contracts. Objects are strict (`z.object`): these are our own CRDs, and the CRD generated from these
 * schemas prunes anything else, so nothing unknown can be stored to be lost.
 */

const immutable = (field: string, why: string) => ({
  'x-kubernetes-validations': [
    { rule: 'self == oldSelf', message: `${field} is immutable: ${why}`, reason: 'FieldValueForbidden' },
  ],
});

/** A reference to an IP pool of any IPAM provider (`IPPoolReference` of CAPI v1beta2: all fields required). */
export const PoolReference = z
  .object({
    apiGroup: ObjectName.describe('API group of the pool kind, e.g. ipam.cluster.x-k8s.io.'),
    kind: z.string().min(1).max(63).regex(new RegExp(KIND_PATTERN)).describe('Pool kind, e.g. TallyIPPool.'),
    name: ObjectName.describe('Pool name; namespaced pools are looked up in the namespace of the claim.'),
  })
  .describe('An IP pool of any IPAM provider; an IPAddressClaim is created against it.');
export type PoolReference = z.infer<typeof PoolReference>;

/** `clusterv1.APIEndpoint` as the v1beta2 contract defines it (both fields optional, omitted when zero). */
export const APIEndpoint = z
  .object({
    host: z.string().min(1).max(512).describe('DNS name or IP address of the control plane.').optional(),
    port: z.int().min(1).max(65535).meta({ format: 'int32' }).describe('TCP port of the control plane.').optional(),
  })
  .describe('The endpoint of the control plane.');
export type APIEndpoint = z.infer<typeof APIEndpoint>;

/** `clusterv1.FailureDomain` (v1beta2: an entry of a list keyed by name). */
export const FailureDomain = z.object({
  name: z.string().min(1).max(256).describe('Unique name of the failure domain.'),
  controlPlane: z.boolean().describe('Whether control-plane machines may be placed here.').optional(),
  attributes: z.record(z.string(), z.string()).describe('Free-form attributes of the failure domain.').optional(),
});
export type FailureDomain = z.infer<typeof FailureDomain>;

const FailureDomains = z
  .array(FailureDomain)
  .min(1)
  .max(100)
  .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] });

/** `clusterv1.MachineAddress`. */
export const MachineAddress = z.object({
  type: z.enum(['Hostname', 'ExternalIP', 'InternalIP', 'ExternalDNS', 'InternalDNS']),
  address: z.string().min(1).max(256),
});
export type MachineAddress = z.infer<typeof MachineAddress>;

/** The template `metadata` (`clusterv1.ObjectMeta`): labels and annotations for the objects made from it. */
export const TemplateObjectMeta = z.object({
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

/** Objects read back from the API server always have a name. */
const StoredMeta = ObjectMeta.extend({ name: z.string().min(1) });

const StatusConditions = Conditions.describe(
  'Conditions: Ready (mirrored by Cluster API into the owner), Paused, and the kind-specific ones.',
);

// ---------------------------------------------------------------------------------------------------------------
// SimCluster

const ENDPOINT_POOL_REF_DESCRIPTION =
  'Allocate the control-plane host from this IP pool (an IPAddressClaim named <SimCluster>-control-plane-endpoint) when controlPlaneEndpoint.host is empty.';

/**
 * The InfraCluster contract: `spec.controlPlaneEndpoint` is immutable once set — once both host and port are there
 * (CAPI's `APIEndpoint.IsValid`), since CAPI copies it into the Cluster and machines are built against it. A host
 * without a port may still be completed. On `spec`, not on the field, so that removing the field is refused too (a
 * rule on an optional field does not run when the field is gone).
 */
const ENDPOINT_IMMUTABLE_ONCE_SET = {
  'x-kubernetes-validations': [
    {
      rule: '!has(oldSelf.controlPlaneEndpoint) || !has(oldSelf.controlPlaneEndpoint.host) || !has(oldSelf.controlPlaneEndpoint.port) || (has(self.controlPlaneEndpoint) && self.controlPlaneEndpoint == oldSelf.controlPlaneEndpoint)',
      message: 'spec.controlPlaneEndpoint is immutable once host and port are set (the InfraCluster contract)',
      reason: 'FieldValueForbidden',
      fieldPath: '.controlPlaneEndpoint',
    },
  ],
};

/**
 * The spec's fields. Objects get CEL immutability rules; templates do not, because a template's immutability is
 * checked by the admission webhook, which must let CAPI's topology dry-run requests through (CEL cannot see dryRun).
 */
function simClusterSpec(withImmutability: boolean) {
  const poolRef = PoolReference.describe(ENDPOINT_POOL_REF_DESCRIPTION);
  const spec = z.object({
    controlPlaneEndpoint: APIEndpoint.optional(),
    controlPlaneEndpointPoolRef: (withImmutability
      ? poolRef.meta(immutable('controlPlaneEndpointPoolRef', 'the endpoint is allocated once'))
      : poolRef
    ).optional(),
    failureDomains: FailureDomains.describe('Failure domains the simulated cloud offers; copied to status.').optional(),
  });
  return withImmutability ? spec.meta(ENDPOINT_IMMUTABLE_ONCE_SET) : spec;
}

export const SimClusterSpec = simClusterSpec(true);
export type SimClusterSpec = z.infer<typeof SimClusterSpec>;

export const SimClusterStatus = z.object({
  initialization: z
    .object({
      provisioned: z
        .boolean()
        .describe('True once the cluster infrastructure is ready (the v1beta2 contract field Cluster API reads).')
        .optional(),
    })
    .optional(),
  failureDomains: FailureDomains.describe(
    'Failure domains machines may be placed in (read by Cluster API).',
  ).optional(),
  conditions: StatusConditions.optional(),
  observedGeneration: z.int().min(0).meta({ format: 'int64' }).optional(),
});
export type SimClusterStatus = z.infer<typeof SimClusterStatus>;

export const SimCluster = z
  .object({
    apiVersion: z.literal(SIM_V1ALPHA1_API_VERSION),
    kind: z.literal(SIM_CLUSTER_KIND),
    metadata: StoredMeta,
    spec: SimClusterSpec.default({}),
    status: SimClusterStatus.optional(),
  })
  .describe('SimCluster: the simulated infrastructure of one Cluster API Cluster.');
export type SimCluster = z.infer<typeof SimCluster>;

export const SimClusterTemplate = z
  .object({
    apiVersion: z.literal(SIM_V1ALPHA1_API_VERSION),
    kind: z.literal(SIM_CLUSTER_TEMPLATE_KIND),
    metadata: StoredMeta,
    spec: z.object({
      template: z.object({ metadata: TemplateObjectMeta.optional(), spec: simClusterSpec(false) }),
    }),
  })
  .describe('SimClusterTemplate: SimClusters for ClusterClass; spec.template.spec is immutable.');
export type SimClusterTemplate = z.infer<typeof SimClusterTemplate>;

// ---------------------------------------------------------------------------------------------------------------
// SimMachine

/** A device name doubles as part of claim names, so it is one DNS label without '-' (e.g. eth0, ens192). */
export const DEVICE_NAME_PATTERN = '^[a-z][a-z0-9]{0,14}$';

export const NetworkDevice = z.object({
  name: z
    .string()
    .regex(new RegExp(DEVICE_NAME_PATTERN))
    .max(15)
    .describe(
      'Interface name (lower-case letters and digits, starting with a letter); claims use the index when absent.',
    )
    .optional(),
  addressesFromPools: z
    .array(PoolReference)
    .max(16)
    .describe('One IPAddressClaim per pool; a device takes at most one address per family from IPAM in the usual case.')
    .meta({ 'x-kubernetes-list-type': 'atomic' })
    .optional(),
});
export type NetworkDevice = z.infer<typeof NetworkDevice>;

const NetworkSpec = z
  .object({
    devices: z
      .array(NetworkDevice)
      .max(8)
      .describe('Network devices of the instance.')
      .meta({
        'x-kubernetes-list-type': 'atomic',
        'x-kubernetes-validations': [
          {
            rule: 'self.all(d, !has(d.name) || self.exists_one(e, has(e.name) && e.name == d.name))',
            message: 'device names must be unique',
            reason: 'FieldValueDuplicate',
          },
        ],
      }),
  })
  .describe('Network configuration; immutable on a SimMachine (addresses are claimed for it once).');

/** Limits of a simulated instance size: up to 1024 cores and 16 TiB of memory, as the largest real machines. */
const MAX_SIM_CPUS = 1024;
const MIN_SIM_MEMORY_MIB = 64;
const MAX_SIM_MEMORY_MIB = 16 * 1024 * 1024;

/**
 * The simulated size of an instance. Its Node reports it as capacity, and a SimMachinePool announces the size of the
 * instances it would create (`status.capacity`) so that the cluster autoscaler can scale it from zero.
 */
export const SimInstanceSize = z
  .object({
    cpus: z.int().min(1).max(MAX_SIM_CPUS).describe('Simulated CPU cores.'),
    memoryMiB: z.int().min(MIN_SIM_MEMORY_MIB).max(MAX_SIM_MEMORY_MIB).describe('Simulated memory in MiB.'),
  })
  .describe('Simulated size of the instance (2 CPUs and 4096 MiB when absent); its Node reports it as capacity.');
export type SimInstanceSize = z.infer<typeof SimInstanceSize>;

export const SimMachineSpec = z.object({
  providerID: z
    .string()
    .min(1)
    .max(512)
    .describe('Set by the provider once the simulated instance exists: sim://<namespace>/<name>.')
    .meta({
      'x-kubernetes-validations': [
        { rule: 'self == oldSelf', message: 'providerID is immutable once set', reason: 'FieldValueForbidden' },
      ],
    })
    .optional(),
  network: NetworkSpec.meta(immutable('network', 'IP addresses are claimed for the devices once')).optional(),
  size: SimInstanceSize.meta(immutable('size', 'a simulated instance is not resized')).optional(),
});
export type SimMachineSpec = z.infer<typeof SimMachineSpec>;

export const DeviceStatus = z.object({
  name: z.string().min(1).max(15),
  ipAddrs: z
    .array(z.string().min(1).max(43))
    .max(16)
    .describe('Addresses with prefix length, e.g. 10.0.0.5/24.')
    .optional(),
  gateway4: z.string().min(1).max(39).optional(),
  gateway6: z.string().min(1).max(39).optional(),
});
export type DeviceStatus = z.infer<typeof DeviceStatus>;

export const SimMachineStatus = z.object({
  initialization: z
    .object({
      provisioned: z
        .boolean()
        .describe('True once the simulated instance exists (the v1beta2 contract field Cluster API reads).')
        .optional(),
    })
    .optional(),
  addresses: z
    .array(MachineAddress)
    .max(64)
    .describe('Addresses of the instance; Cluster API copies them to Machine.status.addresses.')
    .meta({ 'x-kubernetes-list-type': 'atomic' })
    .optional(),
  devices: z
    .array(DeviceStatus)
    .max(8)
    .describe('Per-device view of the allocated addresses and gateways.')
    .meta({ 'x-kubernetes-list-type': 'atomic' })
    .optional(),
  failureDomain: z
    .string()
    .min(1)
    .max(256)
    .describe('Where the instance runs (Machine.spec.failureDomain).')
    .optional(),
  conditions: StatusConditions.optional(),
  observedGeneration: z.int().min(0).meta({ format: 'int64' }).optional(),
});
export type SimMachineStatus = z.infer<typeof SimMachineStatus>;

export const SimMachine = z
  .object({
    apiVersion: z.literal(SIM_V1ALPHA1_API_VERSION),
    kind: z.literal(SIM_MACHINE_KIND),
    metadata: StoredMeta,
    spec: SimMachineSpec.default({}),
    status: SimMachineStatus.optional(),
  })
  .describe('SimMachine: a simulated instance whose addresses come from IPAM pools.');
export type SimMachine = z.infer<typeof SimMachine>;

/**
 * A template carries no provider ID (every machine cloned from it gets its own) and no CEL immutability: the admission
 * webhook checks that, with the topology dry-run exception.
 */
const SimMachineTemplateResourceSpec = z.object({ network: NetworkSpec.optional(), size: SimInstanceSize.optional() });

export const SimMachineTemplate = z
  .object({
    apiVersion: z.literal(SIM_V1ALPHA1_API_VERSION),
    kind: z.literal(SIM_MACHINE_TEMPLATE_KIND),
    metadata: StoredMeta,
    spec: z.object({
      template: z.object({ metadata: TemplateObjectMeta.optional(), spec: SimMachineTemplateResourceSpec }),
    }),
    // What the cluster autoscaler reads to scale a MachineDeployment or MachineSet of these machines from zero.
    status: z.object(autoscaleFromZeroStatusFields).optional(),
  })
  .describe(
    'SimMachineTemplate: SimMachines for MachineDeployments, MachineSets and ClusterClass; spec.template.spec is immutable.',
  );
export type SimMachineTemplate = z.infer<typeof SimMachineTemplate>;

// ---------------------------------------------------------------------------------------------------------------
// SimMachinePool

/** What every instance of a pool is made from: the spec of the SimMachine created for it. */
const InstanceTemplate = z
  .object({ network: NetworkSpec.optional(), size: SimInstanceSize.optional() })
  .describe('The SimMachine spec of every instance (MachinePool Machines); each instance claims its own addresses.');

export const SimMachinePoolSpec = z.object({
  ...infraMachinePoolSpecFields,
  template: InstanceTemplate.default({}),
});
export type SimMachinePoolSpec = z.infer<typeof SimMachinePoolSpec>;

export const SimMachinePoolStatus = z.object({ ...infraMachinePoolStatusFields, ...autoscaleFromZeroStatusFields });
export type SimMachinePoolStatus = z.infer<typeof SimMachinePoolStatus>;

export const SimMachinePool = z
  .object({
    apiVersion: z.literal(SIM_V1ALPHA1_API_VERSION),
    kind: z.literal(SIM_MACHINE_POOL_KIND),
    metadata: StoredMeta,
    spec: SimMachinePoolSpec.default({ template: {} }),
    status: SimMachinePoolStatus.optional(),
  })
  .describe('SimMachinePool: simulated instances of a MachinePool, one SimMachine (MachinePool Machine) each.');
export type SimMachinePool = z.infer<typeof SimMachinePool>;

export const SimMachinePoolTemplate = z
  .object({
    apiVersion: z.literal(SIM_V1ALPHA1_API_VERSION),
    kind: z.literal(SIM_MACHINE_POOL_TEMPLATE_KIND),
    metadata: StoredMeta,
    spec: z.object({
      template: z.object({
        metadata: TemplateObjectMeta.optional(),
        spec: z.object({ template: InstanceTemplate.default({}) }),
      }),
    }),
  })
  .describe('SimMachinePoolTemplate: SimMachinePools for ClusterClass; spec.template.spec is immutable.');
export type SimMachinePoolTemplate = z.infer<typeof SimMachinePoolTemplate>;
