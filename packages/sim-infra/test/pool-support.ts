import type { KubeObject } from '@tally-ipam/controller-kit/cache';
import { type Client, isNotFound, type ObjectKey, type ResourceKind } from '@tally-ipam/controller-kit/client';
import { formatLabelValue, MACHINE_POOL_RESOURCE, type StoredMachinePool } from '@tally-ipam/machinepool';
import { SIM_GROUP, SIM_MACHINE_POOL_RESOURCE, SIM_MACHINE_RESOURCE, type SimMachine } from '../src/index.js';

// What the SimMachinePool tests share: a MachinePool linked to its SimMachinePool, its instances, and the state a
// wait on the pool prints when it times out.

/** The pool's instances, as CAPI selects MachinePool Machines: by the pool-name label. */
export async function instancesOf(client: Client, namespace: string, pool: string): Promise<SimMachine[]> {
  const list = await client.list(SIM_MACHINE_RESOURCE, {
    namespace,
    labelSelector: `cluster.x-k8s.io/pool-name=${formatLabelValue(pool)}`,
  });
  return list.items;
}

/**
 * What a wait on a pool prints on timeout: the pool's providerIDList and status, and each instance's provider ID and
 * conditions, so that a failure says which step stalled (too many instances, one without a provider ID, and why).
 */
export async function poolState(client: Client, namespace: string, name: string): Promise<unknown> {
  const pool = await client.get(SIM_MACHINE_POOL_RESOURCE, { namespace, name });
  const instances = await instancesOf(client, namespace, name);
  return {
    providerIDList: pool.spec.providerIDList,
    status: pool.status,
    instances: instances.map((instance) => ({
      name: instance.metadata.name,
      deleting: instance.metadata.deletionTimestamp !== undefined,
      providerID: instance.spec.providerID,
      conditions: instance.status?.conditions?.map(
        (condition) => `${condition.type}=${condition.status} ${condition.reason ?? ''}: ${condition.message ?? ''}`,
      ),
    })),
  };
}

/** What a wait on one object prints on timeout: whether it is there, being deleted (by whom), and its status. */
export async function objectState(client: Client, resource: ResourceKind, key: ObjectKey): Promise<unknown> {
  try {
    // Any kind: its spec and status are read as they come, only to be printed.
    const object: { readonly spec?: unknown; readonly status?: unknown } & KubeObject = await client.get(resource, key);
    return {
      [resource.kind]: key.name,
      deletionTimestamp: object.metadata.deletionTimestamp,
      finalizers: object.metadata.finalizers,
      spec: object.spec,
      status: object.status,
    };
  } catch (error) {
    if (isNotFound(error)) return { [resource.kind]: key.name, gone: true };
    throw error;
  }
}

export interface LinkedPoolOptions {
  readonly clusterName: string;
  readonly replicas: number;
  /** `MachinePool.spec.template.spec.bootstrap.dataSecretName`; none yet when absent. */
  readonly dataSecretName?: string;
  readonly version?: string;
  /** The SimMachinePool's `spec.template`. */
  readonly template: Record<string, unknown>;
}

/**
 * A MachinePool and its SimMachinePool as CAPI's MachinePool controller links them (controller reference and
 * cluster-name label on the infrastructure object); CAPI's webhook would default replicas, so it is always set.
 */
export async function createLinkedPools(
  client: Client,
  namespace: string,
  name: string,
  options: LinkedPoolOptions,
): Promise<StoredMachinePool> {
  const labels = { 'cluster.x-k8s.io/cluster-name': options.clusterName };
  const machinePool = await client.create(MACHINE_POOL_RESOURCE, {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'MachinePool',
    metadata: { name, namespace, labels },
    spec: {
      clusterName: options.clusterName,
      replicas: options.replicas,
      template: {
        spec: {
          clusterName: options.clusterName,
          ...(options.version ? { version: options.version } : {}),
          bootstrap: options.dataSecretName ? { dataSecretName: options.dataSecretName } : {},
          infrastructureRef: { apiGroup: SIM_GROUP, kind: 'SimMachinePool', name },
        },
      },
    },
  });
  await client.create(SIM_MACHINE_POOL_RESOURCE, {
    apiVersion: `${SIM_GROUP}/v1alpha1`,
    kind: 'SimMachinePool',
    metadata: {
      name,
      namespace,
      labels,
      ownerReferences: [
        {
          apiVersion: 'cluster.x-k8s.io/v1beta2',
          kind: 'MachinePool',
          name,
          uid: machinePool.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { template: options.template },
  });
  return machinePool;
}
