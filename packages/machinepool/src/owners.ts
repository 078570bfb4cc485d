import type { KubeObject } from '@tally-ipam/controller-kit/cache';
import { type Client, findOwnerReference, isNotFound, type RequestOptions } from '@tally-ipam/controller-kit/client';
import {
  CLUSTER_GROUP,
  CLUSTER_NAME_LABEL,
  MACHINE_KIND,
  MACHINEPOOL_KIND,
  MACHINEPOOL_NAME_LABEL,
} from './constants.js';
import { formatLabelValue } from './label-format.js';
import {
  CLUSTER_RESOURCE,
  MACHINE_POOL_RESOURCE,
  MACHINE_RESOURCE,
  type StoredCluster,
  type StoredMachine,
  type StoredMachinePool,
} from './resources.js';

/**
 * How a provider finds the objects around its InfraMachinePool and InfraMachines, the way CAPI's own `util`
 * functions do. Each returns undefined when the owner is not (yet) there — CAPI sets owner references after the
 * provider object exists, so "no owner yet" is a normal state to wait in, not an error.
 */

function namespaceOf(object: KubeObject, what: string): string {
  const namespace = object.metadata.namespace;
  if (!namespace) {
    throw new Error(
      `cannot look up the ${what} of ${object.kind ?? 'object'} "${object.metadata.name}": it has no namespace (InfraMachinePool contract objects are namespaced)`,
    );
  }
  return namespace;
}

async function getIfExists<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/**
 * `util.GetOwnerMachinePool`: the MachinePool named by an owner reference of kind `MachinePool` in group
 * `cluster.x-k8s.io` (any version, controller or not) — CAPI's MachinePool controller sets it on the InfraMachinePool
 * it references. Undefined when there is no such reference yet or the MachinePool is gone.
 */
export async function getOwnerMachinePool(
  client: Client,
  infraMachinePool: KubeObject,
  options: RequestOptions = {},
): Promise<StoredMachinePool | undefined> {
  const reference = findOwnerReference(infraMachinePool, { apiGroup: CLUSTER_GROUP, kind: MACHINEPOOL_KIND });
  if (!reference) return undefined;
  const namespace = namespaceOf(infraMachinePool, 'owner MachinePool');
  return getIfExists(() => client.get(MACHINE_POOL_RESOURCE, { namespace, name: reference.name }, options));
}

/**
 * `util.GetOwnerMachine`: the Machine named by an owner reference of kind `Machine` in group `cluster.x-k8s.io`.
 * With MachinePool Machines, CAPI's Machine controller makes it the InfraMachine's controller.
 */
export async function getOwnerMachine(
  client: Client,
  infraMachine: KubeObject,
  options: RequestOptions = {},
): Promise<StoredMachine | undefined> {
  const reference = findOwnerReference(infraMachine, { apiGroup: CLUSTER_GROUP, kind: MACHINE_KIND });
  if (!reference) return undefined;
  const namespace = namespaceOf(infraMachine, 'owner Machine');
  return getIfExists(() => client.get(MACHINE_RESOURCE, { namespace, name: reference.name }, options));
}

/**
 * The Cluster an object belongs to by its `cluster.x-k8s.io/cluster-name` label (CAPI's MachinePool controller sets
 * it on the InfraMachinePool; CAPD reads the Cluster the same way). Undefined without the label or the Cluster.
 */
export async function getClusterByLabel(
  client: Client,
  object: KubeObject,
  options: RequestOptions = {},
): Promise<StoredCluster | undefined> {
  const name = object.metadata.labels?.[CLUSTER_NAME_LABEL];
  if (!name) return undefined;
  const namespace = namespaceOf(object, 'Cluster');
  return getIfExists(() => client.get(CLUSTER_RESOURCE, { namespace, name }, options));
}

/**
 * `labels.IsMachinePoolOwned`: the object carries the `cluster.x-k8s.io/pool-name` label or has an owner of kind
 * `MachinePool`. An InfraMachine reconciler uses it to take bootstrap data and version from the MachinePool instead
 * of the Machine.
 */
export function isMachinePoolOwned(object: KubeObject): boolean {
  if (object.metadata.labels?.[MACHINEPOOL_NAME_LABEL] !== undefined) return true;
  return (object.metadata.ownerReferences ?? []).some((reference) => reference.kind === MACHINEPOOL_KIND);
}

/**
 * `util.GetMachinePoolByLabels`: the MachinePool an InfraMachine belongs to, from its labels. The pool-name label may
 * be a hash (names over 63 characters), so MachinePools of the labelled cluster are listed and matched through
 * `formatLabelValue`. Throws when the pool-name label is missing; undefined when no MachinePool matches.
 */
export async function getMachinePoolByLabels(
  client: Client,
  namespace: string,
  labels: Readonly<Record<string, string>> | undefined,
  options: RequestOptions = {},
): Promise<StoredMachinePool | undefined> {
  const poolLabel = labels?.[MACHINEPOOL_NAME_LABEL];
  if (poolLabel === undefined) {
    throw new Error(
      `cannot find the MachinePool of an object in namespace ${namespace}: its labels lack ${MACHINEPOOL_NAME_LABEL}`,
    );
  }
  const clusterName = labels?.[CLUSTER_NAME_LABEL];
  const pools = await client.listAll(MACHINE_POOL_RESOURCE, {
    namespace,
    labelSelector: clusterName ? `${CLUSTER_NAME_LABEL}=${clusterName}` : undefined,
    signal: options.signal,
  });
  return pools.items.find((pool) => formatLabelValue(pool.metadata.name) === poolLabel);
}
