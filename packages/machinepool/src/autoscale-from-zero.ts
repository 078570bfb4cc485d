import * as z from 'zod';

/**
 * Autoscaling from zero (optional; Cluster API's "Opt-in Autoscaling from Zero" proposal). With no replica running,
 * the cluster autoscaler cannot look at a Node to learn what a new one would offer, so it reads the infrastructure
 * object behind the node group. For a MachinePool that is the InfraMachinePool itself — the autoscaler follows
 * `MachinePool.spec.template.spec.infrastructureRef` — and it reads two status fields there:
 *
 * - `status.capacity`: resource name → quantity; `cpu` and `memory` must both be present or the node group cannot
 *   scale from zero;
 * - `status.nodeInfo`: `architecture` and `operatingSystem` of the Nodes to come.
 *
 * The autoscaler reads both as maps of **strings** (`unstructured.NestedStringMap`): one integer value (which
 * `corev1.ResourceList`'s int-or-string schema would accept) makes it drop the whole map. So these schemas allow
 * strings only, and the quantities are written in Kubernetes' canonical form.
 */

/** CAPI's `NodeInfo.architecture` values (`api/core/v1beta2`). */
export const NODE_ARCHITECTURES = ['amd64', 'arm64', 's390x', 'ppc64le'] as const;
export type NodeArchitecture = (typeof NODE_ARCHITECTURES)[number];

/** At most this many resources in `status.capacity` (CPU, memory, storage, pods and a few extended resources). */
export const MAX_CAPACITY_RESOURCES = 32;
const MAX_QUANTITY_LENGTH = 64;
const MAX_RESOURCE_NAME_LENGTH = 317; // a DNS-subdomain prefix (253), '/', a name (63)
const MAX_OPERATING_SYSTEM_LENGTH = 63;

/** A non-negative Kubernetes quantity (`resource.ParseQuantity`): digits, optional fraction, one suffix. */
export const QUANTITY_PATTERN = '^(\\d+(\\.\\d*)?|\\.\\d+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?\\d+)?$';
/** A resource name: `cpu`, `memory`, or a qualified extended resource such as `nvidia.com/gpu`. */
export const RESOURCE_NAME_PATTERN = '^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$';

export const ResourceQuantity = z
  .string()
  .min(1)
  .max(MAX_QUANTITY_LENGTH)
  .regex(new RegExp(QUANTITY_PATTERN))
  .describe('A Kubernetes quantity as a string, e.g. 4, 500m, 8Gi.');

/** `status.capacity`: what one new instance offers, as the Node's `status.capacity` will report it. */
export const NodeCapacity = z
  .record(z.string().min(1).max(MAX_RESOURCE_NAME_LENGTH).regex(new RegExp(RESOURCE_NAME_PATTERN)), ResourceQuantity)
  .meta({ maxProperties: MAX_CAPACITY_RESOURCES })
  .describe(
    'Resources of one new instance (cpu and memory at least), read by the cluster autoscaler to scale from zero. Values are strings.',
  );
export type NodeCapacity = z.infer<typeof NodeCapacity>;

/** `status.nodeInfo`: what the autoscaler copies into the Node it imagines. */
export const NodeInfo = z
  .object({
    architecture: z.enum(NODE_ARCHITECTURES).describe('CPU architecture of the instances.').optional(),
    operatingSystem: z
      .string()
      .min(1)
      .max(MAX_OPERATING_SYSTEM_LENGTH)
      .describe('Operating system of the instances, e.g. linux.')
      .optional(),
  })
  .describe('Architecture and operating system of new instances, read by the cluster autoscaler to scale from zero.');
export type NodeInfo = z.infer<typeof NodeInfo>;

/** The two status fields, to spread into an InfraMachinePool's status schema next to `infraMachinePoolStatusFields`. */
export const autoscaleFromZeroStatusFields = {
  capacity: NodeCapacity.optional(),
  nodeInfo: NodeInfo.optional(),
};

/** The size of one instance, in the units a provider's backend usually knows it. */
export interface InstanceSize {
  /** CPU in millicores (2 cores = 2000); a positive integer. */
  readonly cpuMillicores: number;
  /** Memory in bytes; a positive integer. */
  readonly memoryBytes: number;
  /** Ephemeral storage in bytes, when the provider knows it. */
  readonly ephemeralStorageBytes?: number | undefined;
  /**
   * Further resources (`nvidia.com/gpu: "2"`), as quantities. `pods` has no effect on cluster-autoscaler today: its
   * `capacity.cluster-autoscaler.kubernetes.io/maxPods` annotation, defaulted to 110, overrides it.
   */
  readonly extended?: Readonly<Record<string, string>> | undefined;
}

export interface AutoscaleFromZeroInput {
  readonly size: InstanceSize;
  readonly architecture: NodeArchitecture;
  readonly operatingSystem: string;
}

export interface AutoscaleFromZeroStatus {
  readonly capacity: NodeCapacity;
  readonly nodeInfo: { readonly architecture: NodeArchitecture; readonly operatingSystem: string };
}

/** An instance size that cannot be announced to the autoscaler; names the field and the value. */
export class InstanceSizeError extends Error {
  override readonly name = 'InstanceSizeError';
}

/**
 * The `status.capacity` and `status.nodeInfo` to merge into an InfraMachinePool's status (write them with
 * `writeInfraMachinePoolState`, which sends nothing when they are unchanged). Quantities are canonical, so the same
 * size always yields the same strings and an unchanged pool is never rewritten.
 */
export function autoscaleFromZeroStatus(input: AutoscaleFromZeroInput): AutoscaleFromZeroStatus {
  const capacity: Record<string, string> = {};
  for (const [name, quantity] of Object.entries(input.size.extended ?? {})) {
    capacity[name] = parseField(ResourceQuantity, quantity, `size.extended[${JSON.stringify(name)}]`);
  }
  capacity.cpu = formatMillicores(input.size.cpuMillicores, 'size.cpuMillicores');
  capacity.memory = formatBytes(input.size.memoryBytes, 'size.memoryBytes');
  if (input.size.ephemeralStorageBytes !== undefined) {
    capacity['ephemeral-storage'] = formatBytes(input.size.ephemeralStorageBytes, 'size.ephemeralStorageBytes');
  }
  return {
    capacity: parseField(NodeCapacity, capacity, 'capacity'),
    nodeInfo: {
      architecture: parseField(z.enum(NODE_ARCHITECTURES), input.architecture, 'architecture'),
      operatingSystem: parseField(NodeInfo.shape.operatingSystem, input.operatingSystem, 'operatingSystem') ?? '',
    },
  };
}

/** Whether the autoscaler can scale a node group backed by this status from zero: `cpu` and `memory` are both set. */
export function canScaleFromZero(status: {
  readonly capacity?: Readonly<Record<string, string>> | undefined;
}): boolean {
  return status.capacity?.cpu !== undefined && status.capacity.memory !== undefined;
}

/** CPU in Kubernetes' canonical form: whole cores as a plain number (`4`), anything else in millicores (`1500m`). */
export function formatMillicores(millicores: number, field = 'millicores'): string {
  assertPositiveInteger(millicores, field);
  return millicores % 1000 === 0 ? String(millicores / 1000) : `${millicores}m`;
}

const BINARY_SUFFIXES = ['Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'] as const;

/** Bytes in Kubernetes' canonical binary form: the largest of Ki…Ei that divides exactly (`8Gi`), else bytes. */
export function formatBytes(bytes: number, field = 'bytes'): string {
  assertPositiveInteger(bytes, field);
  let value = BigInt(bytes);
  let suffix = '';
  for (const next of BINARY_SUFFIXES) {
    if (value % 1024n !== 0n) break;
    value /= 1024n;
    suffix = next;
  }
  return `${value}${suffix}`;
}

function assertPositiveInteger(value: number, field: string): void {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new InstanceSizeError(`${field} must be a positive whole number, got ${String(value).slice(0, 32)}`);
  }
}

function parseField<T>(schema: z.ZodType<T>, value: unknown, field: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const shown = JSON.stringify(value) ?? String(value);
  throw new InstanceSizeError(
    `${field} ${shown.length > 40 ? `${shown.slice(0, 40)}…` : shown} cannot be announced to the autoscaler: ${parsed.error.issues.map((issue) => issue.message).join('; ')}`,
  );
}
