import type { KubeObject } from '@tally-ipam/controller-kit/cache';
import { Client, type TypedResourceKind, typedResource } from '@tally-ipam/controller-kit/client';
import { waitFor } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import {
  CLUSTER_NAME_LABEL,
  CLUSTER_RESOURCE,
  InfraMachineObject,
  InfraMachinePoolObject,
  MACHINE_POOL_RESOURCE,
  MACHINE_RESOURCE,
  machinePoolMachineLabels,
  type StoredCluster,
  type StoredMachine,
  type StoredMachinePool,
} from '../../src/index.js';
import {
  EXAMPLE_GROUP,
  EXAMPLE_MACHINE_RESOURCE,
  EXAMPLE_POOL_KIND,
  EXAMPLE_POOL_RESOURCE,
} from '../fixtures/example-kinds.js';

export const FIELD_MANAGER = 'machinepool-tests';
export const POLL_INTERVAL_MS = 200;

export const POOLS: TypedResourceKind<InfraMachinePoolObject> = typedResource(
  EXAMPLE_POOL_RESOURCE,
  InfraMachinePoolObject,
);
export const INFRA_MACHINES: TypedResourceKind<InfraMachineObject> = typedResource(
  EXAMPLE_MACHINE_RESOURCE,
  InfraMachineObject,
);

export function newClient(): Client {
  return new Client(testEnv().kubeConfig, { fieldManager: FIELD_MANAGER });
}

/**
 * testenv's `waitFor` with this suite's interval: polls `check` until it returns a value. The deadline is testenv's
 * default, a bound for a hang: what these tests await (an object written, a watch event) is a few requests, however
 * long a busy machine delays them.
 */
export function eventually<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  return waitFor(what, check, { intervalMs: POLL_INTERVAL_MS });
}

export function createCluster(client: Client, namespace: string, name: string, paused = false): Promise<StoredCluster> {
  return client.create(CLUSTER_RESOURCE, {
    metadata: { namespace, name },
    spec: { paused },
  });
}

export interface MachinePoolOptions {
  readonly namespace: string;
  readonly name: string;
  readonly clusterName: string;
  readonly infraPoolName: string;
  readonly replicas?: number;
  readonly dataSecretName?: string;
}

/** A MachinePool as a user writes it, with the cluster-name label CAPI's controller would add. */
export function createMachinePool(client: Client, options: MachinePoolOptions): Promise<StoredMachinePool> {
  return client.create(MACHINE_POOL_RESOURCE, {
    metadata: {
      namespace: options.namespace,
      name: options.name,
      labels: { [CLUSTER_NAME_LABEL]: options.clusterName },
    },
    spec: {
      clusterName: options.clusterName,
      replicas: options.replicas ?? 1,
      template: {
        spec: {
          clusterName: options.clusterName,
          bootstrap: options.dataSecretName === undefined ? {} : { dataSecretName: options.dataSecretName },
          infrastructureRef: { apiGroup: EXAMPLE_GROUP, kind: EXAMPLE_POOL_KIND, name: options.infraPoolName },
        },
      },
    },
  });
}

/**
 * An InfraMachinePool as CAPI's MachinePool controller leaves it after `reconcileExternal`: a controller owner
 * reference to the MachinePool and the cluster-name label.
 */
export function createInfraPool(
  client: Client,
  namespace: string,
  name: string,
  owner?: StoredMachinePool,
): Promise<InfraMachinePoolObject> {
  return client.create(POOLS, {
    metadata: {
      namespace,
      name,
      ...(owner
        ? {
            labels: { [CLUSTER_NAME_LABEL]: owner.spec.clusterName },
            ownerReferences: [
              {
                apiVersion: owner.apiVersion,
                kind: owner.kind,
                name: owner.metadata.name,
                uid: owner.metadata.uid ?? '',
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          }
        : {}),
    },
    spec: { template: { image: 'example/node:v1.34.0' } },
  });
}

/** What CAPI's MachinePool controller creates for an InfraMachine (`computeDesiredMachine`). */
export function createMachineLikeCapi(
  client: Client,
  machinePool: StoredMachinePool,
  infraMachine: KubeObject,
): Promise<StoredMachine> {
  return client.create(MACHINE_RESOURCE, {
    metadata: {
      namespace: machinePool.metadata.namespace,
      name: infraMachine.metadata.name,
      labels: machinePoolMachineLabels(machinePool),
      ownerReferences: [
        {
          apiVersion: machinePool.apiVersion,
          kind: machinePool.kind,
          name: machinePool.metadata.name,
          uid: machinePool.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      clusterName: machinePool.spec.clusterName,
      bootstrap: { dataSecretName: '' },
      infrastructureRef: { apiGroup: EXAMPLE_GROUP, kind: infraMachine.kind ?? '', name: infraMachine.metadata.name },
    },
  });
}
