import { getCondition, PAUSED_ANNOTATION } from '@tally-ipam/controller-kit/capi';
import type { Client } from '@tally-ipam/controller-kit/client';
import { createTestNamespace, type TestNamespace, testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLUSTER_NAME_LABEL,
  CLUSTER_RESOURCE,
  conditionsOf,
  ensurePausedCondition,
  formatLabelValue,
  getClusterByLabel,
  getMachinePoolByLabels,
  getOwnerMachine,
  getOwnerMachinePool,
  MACHINE_POOL_RESOURCE,
  MACHINEPOOL_NAME_LABEL,
} from '../../src/index.js';
import {
  createCluster,
  createInfraPool,
  createMachineLikeCapi,
  createMachinePool,
  newClient,
  POOLS,
} from './support.js';

describe('pause and the Paused condition on the real API server', () => {
  let client: Client;
  let namespace: TestNamespace;

  beforeAll(async () => {
    client = newClient();
    namespace = await createTestNamespace(testEnv().kubeConfig, 'mp-pause');
  });
  afterAll(async () => {
    await namespace.delete();
    client.close();
  });

  it('sets Paused=True/Paused while the Cluster is paused, False/NotPaused after, and writes only on change', async () => {
    const cluster = await createCluster(client, namespace.name, 'paused', true);
    const pool = await createInfraPool(client, namespace.name, 'paused-pool');
    const paused = await ensurePausedCondition({ client, resource: POOLS, cluster, object: pool });
    expect(paused).toMatchObject({ paused: true, updated: true });
    expect(getCondition(conditionsOf(paused.object), 'Paused')).toMatchObject({
      status: 'True',
      reason: 'Paused',
      message: 'Cluster spec.paused is set',
      observedGeneration: 1,
    });

    const repeated = await ensurePausedCondition({ client, resource: POOLS, cluster, object: paused.object });
    expect(repeated).toMatchObject({ paused: true, updated: false });

    const unpausedCluster = await client.mergePatch(CLUSTER_RESOURCE, cluster.metadata, { spec: { paused: false } });
    const unpaused = await ensurePausedCondition({
      client,
      resource: POOLS,
      cluster: unpausedCluster,
      object: paused.object,
    });
    expect(unpaused).toMatchObject({ paused: false, updated: true });
    const stored = await client.get(POOLS, { namespace: namespace.name, name: 'paused-pool' });
    expect(getCondition(conditionsOf(stored), 'Paused')).toMatchObject({
      status: 'False',
      reason: 'NotPaused',
      message: '',
    });
  });

  it('the paused annotation on the pool pauses it even without a Cluster', async () => {
    const pool = await createInfraPool(client, namespace.name, 'annotated');
    const annotated = await client.mergePatch(POOLS, pool.metadata, {
      metadata: { annotations: { [PAUSED_ANNOTATION]: '' } },
    });
    const result = await ensurePausedCondition({ client, resource: POOLS, cluster: undefined, object: annotated });
    expect(result.paused).toBe(true);
    expect(getCondition(conditionsOf(result.object), 'Paused')?.message).toBe(
      'ExampleMachinePool has the cluster.x-k8s.io/paused annotation',
    );
  });
});

describe('owner lookups on the real API server', () => {
  let client: Client;
  let namespace: TestNamespace;

  beforeAll(async () => {
    client = newClient();
    namespace = await createTestNamespace(testEnv().kubeConfig, 'mp-owners');
  });
  afterAll(async () => {
    await namespace.delete();
    client.close();
  });

  it('finds the owner MachinePool through the owner reference CAPI sets, and the Cluster through the label', async () => {
    const cluster = await createCluster(client, namespace.name, 'prod');
    const machinePool = await createMachinePool(client, {
      namespace: namespace.name,
      name: 'workers',
      clusterName: 'prod',
      infraPoolName: 'workers',
      dataSecretName: 'workers-bootstrap',
    });
    const owned = await createInfraPool(client, namespace.name, 'workers', machinePool);
    expect((await getOwnerMachinePool(client, owned))?.metadata.uid).toBe(machinePool.metadata.uid);
    expect((await getClusterByLabel(client, owned))?.metadata.uid).toBe(cluster.metadata.uid);

    const orphan = await createInfraPool(client, namespace.name, 'orphan');
    expect(await getOwnerMachinePool(client, orphan)).toBeUndefined();
    expect(await getClusterByLabel(client, orphan)).toBeUndefined();

    await client.delete(MACHINE_POOL_RESOURCE, { namespace: namespace.name, name: 'workers' });
    expect(await getOwnerMachinePool(client, owned)).toBeUndefined();
  });

  it('finds a MachinePool with a name over 63 characters from the hashed pool-name label', async () => {
    const longName = `workers-${'x'.repeat(70)}`;
    const machinePool = await createMachinePool(client, {
      namespace: namespace.name,
      name: longName,
      clusterName: 'prod',
      infraPoolName: 'long',
    });
    await createMachinePool(client, {
      namespace: namespace.name,
      name: 'other',
      clusterName: 'prod',
      infraPoolName: 'o',
    });
    const labels = { [CLUSTER_NAME_LABEL]: 'prod', [MACHINEPOOL_NAME_LABEL]: formatLabelValue(longName) };
    expect(labels[MACHINEPOOL_NAME_LABEL]).toMatch(/^hash_.{6}_z$/);
    expect((await getMachinePoolByLabels(client, namespace.name, labels))?.metadata.uid).toBe(machinePool.metadata.uid);
    expect(
      await getMachinePoolByLabels(client, namespace.name, { ...labels, [CLUSTER_NAME_LABEL]: 'another-cluster' }),
    ).toBeUndefined();
    await expect(getMachinePoolByLabels(client, namespace.name, { [CLUSTER_NAME_LABEL]: 'prod' })).rejects.toThrow(
      /labels lack cluster.x-k8s.io\/pool-name/,
    );
  });

  it('finds the owner Machine of an InfraMachine once the Machine controller owns it', async () => {
    const machinePool = await createMachinePool(client, {
      namespace: namespace.name,
      name: 'mpm',
      clusterName: 'prod',
      infraPoolName: 'mpm',
    });
    const infraMachine = { kind: 'ExampleMachine', metadata: { name: 'mpm-0', namespace: namespace.name } };
    const machine = await createMachineLikeCapi(client, machinePool, infraMachine);
    const owned = {
      ...infraMachine,
      metadata: {
        ...infraMachine.metadata,
        ownerReferences: [
          {
            apiVersion: machine.apiVersion,
            kind: 'Machine',
            name: 'mpm-0',
            uid: machine.metadata.uid ?? '',
            controller: true,
          },
        ],
      },
    };
    expect((await getOwnerMachine(client, owned))?.metadata.uid).toBe(machine.metadata.uid);
    expect(await getOwnerMachine(client, infraMachine)).toBeUndefined();
  });
});
