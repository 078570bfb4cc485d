import { isDeepStrictEqual } from 'node:util';
import type { KubeObject, OwnerReference } from '@tally-ipam/controller-kit/cache';
import { type Client, isNotFound, ownerReferenceTo, type ResourceKind } from '@tally-ipam/controller-kit/client';
import type { Logger } from 'pino';
import { CLUSTER_GROUP, CLUSTER_NAME_LABEL, MACHINE_KIND, MACHINEPOOL_NAME_LABEL } from './constants.js';
import { InfraMachineObject } from './contract-fields.js';
import { formatLabelValue } from './label-format.js';
import type { PoolInstance } from './pool-status.js';
import { DEFAULT_MACHINE_POOL_REPLICAS } from './pool-status.js';
import { MACHINE_RESOURCE, type StoredMachine } from './resources.js';
import { type DeletionPreference, type ScaleDownCandidate, selectReplicasToDelete } from './scale-down.js';

/** The parts of a MachinePool the MachinePool Machines helpers read. */
export interface MachinePoolIdentity {
  readonly metadata: { readonly name: string };
  readonly spec: { readonly clusterName: string; readonly replicas?: number | undefined };
}

/**
 * The labels CAPI's MachinePool controller selects a pool's InfraMachines (and its own Machines) by:
 * `cluster.x-k8s.io/cluster-name=<spec.clusterName>` and `cluster.x-k8s.io/pool-name=<MustFormatValue(name)>`.
 */
export function machinePoolMachineLabels(machinePool: MachinePoolIdentity): Record<string, string> {
  return {
    [CLUSTER_NAME_LABEL]: machinePool.spec.clusterName,
    [MACHINEPOOL_NAME_LABEL]: formatLabelValue(machinePool.metadata.name),
  };
}

/** The same labels as a label selector string. */
export function machinePoolMachineSelector(machinePool: MachinePoolIdentity): string {
  return Object.entries(machinePoolMachineLabels(machinePool))
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
}

export interface DesiredInfraMachineInput {
  /** The InfraMachinePool, as read from the API server (its uid goes into the owner reference). */
  readonly infraMachinePool: KubeObject;
  readonly machinePool: MachinePoolIdentity;
  /** The InfraMachine resource: same apiVersion as the InfraMachinePool. */
  readonly infraMachineResource: ResourceKind;
  /** InfraMachine name: the instance name (CAPI names the Machine after it). */
  readonly name: string;
  /** The provider's InfraMachine spec for this instance. */
  readonly spec: Readonly<Record<string, unknown>>;
}

/** The server-side apply configuration of one MachinePool Machine's InfraMachine. */
export interface InfraMachineApplyConfiguration {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly labels: Record<string, string>;
    readonly ownerReferences: OwnerReference[];
  };
  readonly spec: Readonly<Record<string, unknown>>;
}

/**
 * The InfraMachine CAPI expects for one replica: the InfraMachinePool's apiVersion (CAPI lists `<Kind>List` with
 * it), CAPI's pool labels, and a **non-controller** owner reference to the InfraMachinePool — the Machine controller
 * later makes the Machine the controller, which fails if another controller reference exists. Applied with
 * server-side apply, the owner references other managers wrote (the Machine's) stay: the list merges by uid.
 */
export function desiredInfraMachine(input: DesiredInfraMachineInput): InfraMachineApplyConfiguration {
  const namespace = input.infraMachinePool.metadata.namespace;
  if (!namespace) {
    throw new Error(
      `InfraMachinePool "${input.infraMachinePool.metadata.name}" has no namespace: MachinePool Machines live in the pool's namespace`,
    );
  }
  assertSameApiVersion(input.infraMachinePool, input.infraMachineResource);
  return {
    apiVersion: input.infraMachineResource.apiVersion,
    kind: input.infraMachineResource.kind,
    metadata: {
      name: input.name,
      namespace,
      labels: machinePoolMachineLabels(input.machinePool),
      ownerReferences: [ownerReferenceTo(input.infraMachinePool, { controller: false })],
    },
    spec: input.spec,
  };
}

function assertSameApiVersion(infraMachinePool: KubeObject, infraMachineResource: ResourceKind): void {
  if (infraMachinePool.apiVersion !== infraMachineResource.apiVersion) {
    throw new Error(
      `InfraMachine kind ${infraMachineResource.kind} is served as ${infraMachineResource.apiVersion}, but InfraMachinePool "${infraMachinePool.metadata.name}" is ${infraMachinePool.apiVersion ?? '<no apiVersion>'}: CAPI lists the InfraMachines with the pool's apiVersion, so both kinds must share group and version`,
    );
  }
}

/** True when `existing` lacks something `desired` states (label, owner reference, spec field). */
function differsFromDesired(existing: InfraMachineObject, desired: InfraMachineApplyConfiguration): boolean {
  const labels = existing.metadata.labels ?? {};
  if (Object.entries(desired.metadata.labels).some(([key, value]) => labels[key] !== value)) return true;
  const references = existing.metadata.ownerReferences ?? [];
  for (const wanted of desired.metadata.ownerReferences) {
    const found = references.find((reference) => reference.uid === wanted.uid);
    if (!found || found.controller === true) return true;
  }
  const spec: Record<string, unknown> = existing.spec ?? {};
  return Object.entries(desired.spec).some(([key, value]) => !isDeepStrictEqual(spec[key], value));
}

export interface ReconcileMachinePoolMachinesInput {
  readonly client: Client;
  /** The InfraMachinePool as read from the API server. */
  readonly infraMachinePool: KubeObject;
  /** Its owner MachinePool (`getOwnerMachinePool`). */
  readonly machinePool: MachinePoolIdentity;
  /**
   * The instances that exist and are not being torn down. An instance whose InfraMachine is being deleted must not
   * be listed once its teardown started, or its InfraMachine would be created again.
   */
  readonly instances: readonly (PoolInstance & { readonly outdated?: boolean | undefined })[];
  /** The InfraMachine resource (same group and version as the InfraMachinePool). */
  readonly infraMachineResource: ResourceKind;
  /** The InfraMachine spec for an instance (e.g. `{ providerID }` plus the pool template's fields). */
  readonly template: (instance: PoolInstance) => Readonly<Record<string, unknown>>;
  /** Order among replicas of equal rank on scale-down; newest first by default. */
  readonly deletionPreference?: DeletionPreference | undefined;
  readonly logger?: Logger | undefined;
  readonly signal?: AbortSignal | undefined;
}

export interface ReconcileMachinePoolMachinesResult {
  /** InfraMachines created for new instances. */
  readonly created: string[];
  /** InfraMachines whose labels, owner reference or spec were brought back to the desired state. */
  readonly updated: string[];
  /** Machines deleted: for instances that are gone, and for excess replicas on scale-down. */
  readonly deletedMachines: string[];
  /**
   * InfraMachines that should go but have no Machine yet: left alone until CAPI's MachinePool controller created it
   * (deleting the InfraMachine now would race with that). Requeue while this is not empty.
   */
  readonly waitingForMachine: string[];
}

/**
 * Keeps the MachinePool Machines of one pool in line with its instances (CAPD's `reconcileDockerMachines`):
 * 1. every instance has an InfraMachine of the same name ({@link desiredInfraMachine}), created or repaired with
 *    server-side apply;
 * 2. an InfraMachine whose instance is gone is removed by deleting its **owner Machine** — CAPI then drains the Node
 *    and deletes the InfraMachine, whose own reconciler releases what is left;
 * 3. scale-down: provisioned replicas beyond `MachinePool.spec.replicas` are removed the same way, in the order of
 *    {@link selectReplicasToDelete}. Replicas whose Machine is already being deleted no longer count.
 * An InfraMachine is never deleted directly.
 */
export async function reconcileMachinePoolMachines(
  input: ReconcileMachinePoolMachinesInput,
): Promise<ReconcileMachinePoolMachinesResult> {
  const { client, infraMachinePool, machinePool, signal } = input;
  assertSameApiVersion(infraMachinePool, input.infraMachineResource);
  const namespace = infraMachinePool.metadata.namespace;
  if (!namespace) {
    throw new Error(`InfraMachinePool "${infraMachinePool.metadata.name}" has no namespace`);
  }
  const labelSelector = machinePoolMachineSelector(machinePool);
  const infraMachines = await listInfraMachines(client, input.infraMachineResource, namespace, labelSelector, signal);
  const machines = await client.listAll(MACHINE_RESOURCE, { namespace, labelSelector, signal });
  const machinesByName = new Map(machines.items.map((machine) => [machine.metadata.name, machine]));
  const infraMachinesByName = new Map(infraMachines.map((infraMachine) => [infraMachine.metadata.name, infraMachine]));
  const result: ReconcileMachinePoolMachinesResult = {
    created: [],
    updated: [],
    deletedMachines: [],
    waitingForMachine: [],
  };

  const instanceNames = new Set<string>();
  for (const instance of input.instances) {
    instanceNames.add(instance.instanceName);
    const existing = infraMachinesByName.get(instance.instanceName);
    if (existing?.metadata.deletionTimestamp) continue;
    const desired = desiredInfraMachine({
      infraMachinePool,
      machinePool,
      infraMachineResource: input.infraMachineResource,
      name: instance.instanceName,
      spec: input.template(instance),
    });
    if (existing && !differsFromDesired(existing, desired)) continue;
    await client.apply(input.infraMachineResource, desired, { signal });
    (existing ? result.updated : result.created).push(instance.instanceName);
    input.logger?.info(
      { infraMachine: `${namespace}/${instance.instanceName}`, kind: desired.kind },
      existing ? 'updated MachinePool Machine infrastructure' : 'created MachinePool Machine infrastructure',
    );
  }

  const ownerMachineOf = (infraMachine: InfraMachineObject): StoredMachine | undefined => {
    const reference = (infraMachine.metadata.ownerReferences ?? []).find(
      (owner) => owner.kind === MACHINE_KIND && owner.apiVersion.startsWith(`${CLUSTER_GROUP}/`),
    );
    return reference ? machinesByName.get(reference.name) : undefined;
  };

  const deleteOwnerMachine = async (infraMachine: InfraMachineObject, why: string): Promise<void> => {
    const machine = ownerMachineOf(infraMachine);
    if (!machine) {
      result.waitingForMachine.push(infraMachine.metadata.name);
      return;
    }
    if (machine.metadata.deletionTimestamp) return;
    try {
      await client.delete(
        MACHINE_RESOURCE,
        { namespace, name: machine.metadata.name },
        { preconditions: { uid: machine.metadata.uid }, signal },
      );
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    result.deletedMachines.push(machine.metadata.name);
    input.logger?.info(
      { machine: `${namespace}/${machine.metadata.name}`, infraMachine: infraMachine.metadata.name, why },
      'deleted MachinePool Machine',
    );
  };

  for (const infraMachine of infraMachines) {
    if (instanceNames.has(infraMachine.metadata.name) || infraMachine.metadata.deletionTimestamp) continue;
    await deleteOwnerMachine(infraMachine, 'its instance is gone');
  }

  const outdated = new Set(input.instances.filter((instance) => instance.outdated).map((i) => i.instanceName));
  const candidates: ScaleDownCandidate[] = [];
  for (const infraMachine of infraMachines) {
    if (!instanceNames.has(infraMachine.metadata.name) || infraMachine.metadata.deletionTimestamp) continue;
    const machine = ownerMachineOf(infraMachine);
    if (!machine || machine.metadata.deletionTimestamp) continue;
    candidates.push({
      name: infraMachine.metadata.name,
      provisioned: infraMachine.status?.initialization?.provisioned === true,
      outdated: outdated.has(infraMachine.metadata.name),
      machineAnnotations: machine.metadata.annotations ?? {},
      creationTimestamp: infraMachine.metadata.creationTimestamp,
    });
  }
  const desiredReplicas = machinePool.spec.replicas ?? DEFAULT_MACHINE_POOL_REPLICAS;
  for (const name of selectReplicasToDelete(candidates, desiredReplicas, input.deletionPreference)) {
    const infraMachine = infraMachinesByName.get(name);
    if (infraMachine) await deleteOwnerMachine(infraMachine, `scale down to ${desiredReplicas} replicas`);
  }
  return result;
}

async function listInfraMachines(
  client: Client,
  resource: ResourceKind,
  namespace: string,
  labelSelector: string | undefined,
  signal: AbortSignal | undefined,
): Promise<InfraMachineObject[]> {
  const list = await client.listAll(resource, { namespace, labelSelector, signal });
  return list.items.map((item) => {
    const parsed = InfraMachineObject.safeParse(item);
    if (!parsed.success) {
      throw new Error(
        `${resource.kind} ${namespace}/${item.metadata.name} does not have the InfraMachine contract's shape (${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}): check its CRD schema`,
      );
    }
    return parsed.data;
  });
}

export interface DeleteMachinePoolMachinesInput {
  readonly client: Client;
  /** The InfraMachinePool being deleted, as read from the API server. */
  readonly infraMachinePool: KubeObject;
  readonly infraMachineResource: ResourceKind;
  readonly logger?: Logger | undefined;
  readonly signal?: AbortSignal | undefined;
}

export interface DeleteMachinePoolMachinesResult {
  /** Machines whose deletion this call requested (again, if one was already being deleted). */
  readonly deletedMachines: string[];
  /** InfraMachines deleted directly because no Machine ever owned them (nothing in CAPI refers to them). */
  readonly deletedInfraMachines: string[];
  /** InfraMachines this call found (deleting or not): keep the pool's finalizer and requeue until it is empty. */
  readonly remaining: string[];
}

/**
 * The delete path of an InfraMachinePool with MachinePool Machines (CAPD's `reconcileDelete`): every InfraMachine the
 * pool owns (found by owner reference, so it works after the MachinePool is gone) is removed through its owner
 * Machine, so Nodes are drained; one that never got a Machine is deleted directly. CAPI's MachinePool controller does
 * not delete MP Machines itself, and on a cluster without garbage collection nothing else would.
 */
export async function deleteMachinePoolMachines(
  input: DeleteMachinePoolMachinesInput,
): Promise<DeleteMachinePoolMachinesResult> {
  const { client, infraMachinePool, signal } = input;
  const namespace = infraMachinePool.metadata.namespace;
  const poolUid = infraMachinePool.metadata.uid;
  if (!namespace || !poolUid) {
    throw new Error(
      `InfraMachinePool "${infraMachinePool.metadata.name}" needs a namespace and a uid (read it from the API server) to find its InfraMachines`,
    );
  }
  assertSameApiVersion(infraMachinePool, input.infraMachineResource);
  const all = await listInfraMachines(client, input.infraMachineResource, namespace, undefined, signal);
  const owned = all.filter((infraMachine) =>
    (infraMachine.metadata.ownerReferences ?? []).some((reference) => reference.uid === poolUid),
  );
  const result: DeleteMachinePoolMachinesResult = { deletedMachines: [], deletedInfraMachines: [], remaining: [] };
  for (const infraMachine of owned) {
    result.remaining.push(infraMachine.metadata.name);
    if (infraMachine.metadata.deletionTimestamp) continue;
    const reference = (infraMachine.metadata.ownerReferences ?? []).find(
      (owner) => owner.kind === MACHINE_KIND && owner.apiVersion.startsWith(`${CLUSTER_GROUP}/`),
    );
    const deleted = reference
      ? await deleteIfPresent(client, MACHINE_RESOURCE, namespace, reference.name, reference.uid, signal)
      : false;
    if (deleted && reference) {
      result.deletedMachines.push(reference.name);
      input.logger?.info({ machine: `${namespace}/${reference.name}` }, 'deleting MachinePool Machine with its pool');
      continue;
    }
    // No Machine (never created, or already gone after CAPI's Machine controller finished): nothing drains this
    // replica any more, so the InfraMachine goes directly.
    const name = infraMachine.metadata.name;
    if (await deleteIfPresent(client, input.infraMachineResource, namespace, name, infraMachine.metadata.uid, signal)) {
      result.deletedInfraMachines.push(name);
      input.logger?.info({ infraMachine: `${namespace}/${name}` }, 'deleting InfraMachine without a Machine');
    }
  }
  return result;
}

/** Deletes the object if it still exists with that uid; false when it was already gone. */
async function deleteIfPresent(
  client: Client,
  resource: ResourceKind,
  namespace: string,
  name: string,
  uid: string | undefined,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  try {
    await client.delete(resource, { namespace, name }, { preconditions: { uid }, signal });
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}
