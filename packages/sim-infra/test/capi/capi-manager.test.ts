import { readFile } from 'node:fs/promises';
import { CLUSTER_NAME_LABEL } from '@tally-ipam/api-types';
import { isNotFound, type ResourceKind } from '@tally-ipam/controller-kit/client';
import { canScaleFromZero, MACHINE_POOL_RESOURCE, NodeCapacity } from '@tally-ipam/machinepool';
import { createClusterKubeconfigSecret } from '@tally-ipam/testenv';
import { testEnv, withTestNamespace } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  CLUSTER_RESOURCE,
  MACHINE_RESOURCE,
  NODE_RESOURCE,
  SIM_CLUSTER_RESOURCE,
  SIM_GROUP,
  SIM_MACHINE_POOL_RESOURCE,
  SIM_MACHINE_RESOURCE,
} from '../../src/index.js';
import {
  conditionOf,
  createBootstrapSecret,
  createPool,
  eventually,
  type RunningProviders,
  startProviders,
} from '../support.js';

let providers: RunningProviders;

beforeAll(async () => {
  providers = await startProviders();
});

afterAll(async () => {
  await providers?.stop();
});

async function gone(what: string, read: () => Promise<unknown>): Promise<void> {
  await eventually(`${what} gone`, async () => {
    try {
      await read();
      return undefined;
    } catch (error) {
      return isNotFound(error) ? true : undefined;
    }
  });
}

/**
 * What a user writes for a Cluster on Sim with a given control-plane host — CAPI links the objects itself — plus the
 * `<cluster>-kubeconfig` Secret pointing back at the test API server (the simulated workload cluster) and a bootstrap
 * data Secret.
 */
async function createSimClusterForPools(namespace: string, name: string, host: string, bootstrapSecret: string) {
  const env = testEnv();
  const { client } = providers;
  await client.create(SIM_CLUSTER_RESOURCE, {
    apiVersion: `${SIM_GROUP}/v1alpha1`,
    kind: 'SimCluster',
    metadata: { name, namespace },
    spec: { controlPlaneEndpoint: { host, port: 6443 } },
  });
  const cluster = await client.create(CLUSTER_RESOURCE, {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Cluster',
    metadata: { name, namespace },
    spec: { infrastructureRef: { apiGroup: SIM_GROUP, kind: 'SimCluster', name } },
  });
  await createClusterKubeconfigSecret(env.kubeConfig, {
    namespace,
    clusterName: name,
    clusterUid: cluster.metadata.uid ?? '',
    kubeconfigYaml: await readFile(env.kubeconfigPath, 'utf8'),
  });
  await createBootstrapSecret(client, namespace, bootstrapSecret);
}

/** A MachinePool spec as a user writes it: `replicas` Sim instances of the SimMachinePool `infraName`. */
function machinePoolSpec(clusterName: string, replicas: number, bootstrapSecret: string, infraName: string) {
  return {
    clusterName,
    replicas,
    template: {
      spec: {
        clusterName,
        version: 'v1.34.1',
        bootstrap: { dataSecretName: bootstrapSecret },
        infrastructureRef: { apiGroup: SIM_GROUP, kind: 'SimMachinePool', name: infraName },
      },
    },
  };
}

/** The MachinePool once CAPI reports it Running with `replicas` replicas, each with its Node. */
async function runningMachinePool(namespace: string, name: string, replicas: number) {
  // Without a control plane CAPI has no Node watch (ControlPlaneInitialized stays False) and re-checks every 30 s.
  return eventually(
    `MachinePool ${name} Running with ${replicas} replicas`,
    async () => {
      const machinePool = await providers.client.get(MACHINE_POOL_RESOURCE, { namespace, name });
      return machinePool.status?.phase === 'Running' &&
        machinePool.status.replicas === replicas &&
        machinePool.status.nodeRefs?.length === replicas
        ? machinePool
        : undefined;
    },
    { timeoutMs: 240_000 },
  );
}

describe('Sim next to the real Cluster API manager (v1.12)', () => {
  it('a Cluster and a Machine reach Provisioned and Running with IPAM addresses, and delete cleanly', async () => {
    const env = testEnv();
    const ns = await withTestNamespace(env.kubeConfig, 'sim-capi');
    const { client } = providers;
    const vips = await createPool(client, ns.name, 'vips', { addresses: ['10.60.0.100-10.60.0.109'], prefix: 24 });
    const nodes = await createPool(client, ns.name, 'nodes', {
      addresses: ['10.60.1.10-10.60.1.50'],
      prefix: 24,
      gateway: '10.60.1.1',
    });

    // Only what a user writes: CAPI links the objects (owner references, labels) itself.
    await client.create(SIM_CLUSTER_RESOURCE, {
      apiVersion: `${SIM_GROUP}/v1alpha1`,
      kind: 'SimCluster',
      metadata: { name: 'capi', namespace: ns.name },
      spec: { controlPlaneEndpointPoolRef: vips, failureDomains: [{ name: 'fd-a', controlPlane: true }] },
    });
    const cluster = await client.create(CLUSTER_RESOURCE, {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { name: 'capi', namespace: ns.name },
      spec: { infrastructureRef: { apiGroup: SIM_GROUP, kind: 'SimCluster', name: 'capi' } },
    });
    await createClusterKubeconfigSecret(env.kubeConfig, {
      namespace: ns.name,
      clusterName: 'capi',
      clusterUid: cluster.metadata.uid ?? '',
      kubeconfigYaml: await readFile(env.kubeconfigPath, 'utf8'),
    });

    const provisionedCluster = await eventually('Cluster Provisioned', async () => {
      const current = await client.get(CLUSTER_RESOURCE, { namespace: ns.name, name: 'capi' });
      return current.status?.phase === 'Provisioned' ? current : undefined;
    });
    const simCluster = await client.get(SIM_CLUSTER_RESOURCE, { namespace: ns.name, name: 'capi' });
    expect(simCluster.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Cluster', name: 'capi', uid: cluster.metadata.uid }),
    ]);
    expect(simCluster.metadata.labels?.[CLUSTER_NAME_LABEL]).toBe('capi');
    expect(provisionedCluster.status?.initialization?.infrastructureProvisioned).toBe(true);
    // CAPI copied the endpoint Sim allocated from IPAM, and the failure domains.
    expect(provisionedCluster.spec?.controlPlaneEndpoint).toEqual(simCluster.spec.controlPlaneEndpoint);
    expect(simCluster.spec.controlPlaneEndpoint?.host).toMatch(/^10\.60\.0\.10\d$/);
    expect(provisionedCluster.status).toMatchObject({ failureDomains: [{ name: 'fd-a', controlPlane: true }] });
    expect(conditionOf(provisionedCluster, 'InfrastructureReady')).toMatchObject({ status: 'True' });

    await createBootstrapSecret(client, ns.name, 'worker-bootstrap');
    await client.create(SIM_MACHINE_RESOURCE, {
      apiVersion: `${SIM_GROUP}/v1alpha1`,
      kind: 'SimMachine',
      metadata: { name: 'worker-0', namespace: ns.name },
      spec: { network: { devices: [{ name: 'eth0', addressesFromPools: [nodes] }] } },
    });
    await client.create(MACHINE_RESOURCE, {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      metadata: { name: 'worker-0', namespace: ns.name },
      spec: {
        clusterName: 'capi',
        version: 'v1.34.1',
        bootstrap: { dataSecretName: 'worker-bootstrap' },
        infrastructureRef: { apiGroup: SIM_GROUP, kind: 'SimMachine', name: 'worker-0' },
      },
    });

    const running = await eventually('Machine Running with a nodeRef', async () => {
      const machine = await client.get(MACHINE_RESOURCE, { namespace: ns.name, name: 'worker-0' });
      return machine.status?.phase === 'Running' && machine.status.nodeRef ? machine : undefined;
    });
    const simMachine = await client.get(SIM_MACHINE_RESOURCE, { namespace: ns.name, name: 'worker-0' });
    const address = await client.get(ADDRESS_RESOURCE, { namespace: ns.name, name: 'worker-0-eth0-0' });
    expect(simMachine.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Machine', name: 'worker-0', controller: true }),
    ]);
    expect(running.spec.providerID).toBe(`sim://${ns.name}/worker-0`);
    expect(running.status?.nodeRef?.name).toBe('worker-0');
    expect(running.status?.addresses).toEqual([
      { type: 'Hostname', address: 'worker-0' },
      { type: 'InternalIP', address: address.spec.address },
    ]);
    expect(conditionOf(running, 'InfrastructureReady')).toMatchObject({ status: 'True' });

    // Deleting the Cluster: CAPI deletes the Machine (which deletes the SimMachine and the Node), then the SimCluster;
    // Sim gives every address back on the way.
    await client.delete(CLUSTER_RESOURCE, { namespace: ns.name, name: 'capi' });
    await gone('Cluster', () => client.get(CLUSTER_RESOURCE, { namespace: ns.name, name: 'capi' }));
    await gone('SimMachine', () => client.get(SIM_MACHINE_RESOURCE, { namespace: ns.name, name: 'worker-0' }));
    await gone('SimCluster', () => client.get(SIM_CLUSTER_RESOURCE, { namespace: ns.name, name: 'capi' }));
    const claims = await client.list(CLAIM_RESOURCE, { namespace: ns.name });
    expect(claims.items).toEqual([]);
    await expect(client.get(NODE_RESOURCE, { name: 'worker-0' })).rejects.toSatisfy(isNotFound);
  });

  it('a MachinePool runs its replicas as MachinePool Machines, scales down through them, and deletes cleanly', async () => {
    const env = testEnv();
    const ns = await withTestNamespace(env.kubeConfig, 'sim-capi-mp');
    const { client } = providers;
    const nodes = await createPool(client, ns.name, 'nodes', { addresses: ['10.61.1.10-10.61.1.50'], prefix: 24 });
    await createSimClusterForPools(ns.name, 'pools', '192.0.2.61', 'pool-bootstrap');
    await client.create(SIM_MACHINE_POOL_RESOURCE, {
      apiVersion: `${SIM_GROUP}/v1alpha1`,
      kind: 'SimMachinePool',
      metadata: { name: 'workers', namespace: ns.name },
      spec: { template: { network: { devices: [{ name: 'eth0', addressesFromPools: [nodes] }] } } },
    });
    await client.create(MACHINE_POOL_RESOURCE, {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'MachinePool',
      metadata: { name: 'workers', namespace: ns.name },
      spec: machinePoolSpec('pools', 2, 'pool-bootstrap', 'workers'),
    });

    const two = await runningMachinePool(ns.name, 'workers', 2);
    const pool = await client.get(SIM_MACHINE_POOL_RESOURCE, { namespace: ns.name, name: 'workers' });
    expect(two.spec.providerIDList).toEqual(pool.spec.providerIDList);
    expect(pool.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'MachinePool', name: 'workers', controller: true }),
    ]);
    // CAPI made one Machine per SimMachine (same name) and took over as its controller.
    const machines = await eventually(
      'two MachinePool Machines Running',
      async () => {
        const list = await client.list(MACHINE_RESOURCE, { namespace: ns.name });
        return list.items.length === 2 && list.items.every((machine) => machine.status?.phase === 'Running')
          ? list.items
          : undefined;
      },
      { timeoutMs: 240_000 },
    );
    for (const machine of machines) {
      const simMachine = await client.get(SIM_MACHINE_RESOURCE, { namespace: ns.name, name: machine.metadata.name });
      expect(machine.spec.providerID).toBe(simMachine.spec.providerID);
      expect(simMachine.metadata.ownerReferences).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ kind: 'SimMachinePool', name: 'workers', controller: false }),
          expect.objectContaining({ kind: 'Machine', name: machine.metadata.name, controller: true }),
        ]),
      );
      expect(machine.status?.addresses).toContainEqual(expect.objectContaining({ type: 'InternalIP' }));
    }

    await client.mergePatch(MACHINE_POOL_RESOURCE, { namespace: ns.name, name: 'workers' }, { spec: { replicas: 1 } });
    const one = await runningMachinePool(ns.name, 'workers', 1);
    expect(one.spec.providerIDList).toHaveLength(1);
    await eventually('one SimMachine and one claim left', async () => {
      const simMachines = await client.list(SIM_MACHINE_RESOURCE, { namespace: ns.name });
      const claims = await client.list(CLAIM_RESOURCE, { namespace: ns.name });
      return simMachines.items.length === 1 && claims.items.length === 1 ? true : undefined;
    });

    await client.delete(CLUSTER_RESOURCE, { namespace: ns.name, name: 'pools' });
    await gone('Cluster', () => client.get(CLUSTER_RESOURCE, { namespace: ns.name, name: 'pools' }));
    await gone('SimMachinePool', () => client.get(SIM_MACHINE_POOL_RESOURCE, { namespace: ns.name, name: 'workers' }));
    expect((await client.list(SIM_MACHINE_RESOURCE, { namespace: ns.name })).items).toEqual([]);
    expect((await client.list(CLAIM_RESOURCE, { namespace: ns.name })).items).toEqual([]);
  });

  it('an empty MachinePool announces its instance size and grows from zero through /scale, as cluster-autoscaler does', async () => {
    const env = testEnv();
    const ns = await withTestNamespace(env.kubeConfig, 'sim-capi-zero');
    const { client } = providers;
    await createSimClusterForPools(ns.name, 'zero', '192.0.2.62', 'zero-bootstrap');
    await client.create(SIM_MACHINE_POOL_RESOURCE, {
      apiVersion: `${SIM_GROUP}/v1alpha1`,
      kind: 'SimMachinePool',
      metadata: { name: 'elastic', namespace: ns.name },
      spec: { template: { size: { cpus: 4, memoryMiB: 8192 } } },
    });
    await client.create(MACHINE_POOL_RESOURCE, {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'MachinePool',
      metadata: {
        name: 'elastic',
        namespace: ns.name,
        annotations: {
          'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size': '0',
          'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size': '3',
        },
      },
      spec: machinePoolSpec('zero', 0, 'zero-bootstrap', 'elastic'),
    });

    // With no replica, what the autoscaler reads on the object the MachinePool's infrastructureRef names.
    const empty = await eventually(
      'the empty SimMachinePool provisioned and announcing its size',
      async () => {
        const pool = await client.get(SIM_MACHINE_POOL_RESOURCE, { namespace: ns.name, name: 'elastic' });
        return pool.status?.ready === true && pool.status.capacity ? pool : undefined;
      },
      { timeoutMs: 240_000 },
    );
    expect(empty.status).toMatchObject({
      replicas: 0,
      capacity: { cpu: '4', memory: '8Gi' },
      nodeInfo: { architecture: 'amd64', operatingSystem: 'linux' },
    });
    expect(canScaleFromZero({ capacity: NodeCapacity.parse(empty.status?.capacity) })).toBe(true);

    // cluster-autoscaler sets the size through the MachinePool's scale subresource.
    const machinePoolScale: ResourceKind = {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'MachinePool',
      plural: 'machinepools',
      namespaced: true,
    };
    await client.mergePatch(
      machinePoolScale,
      { namespace: ns.name, name: 'elastic' },
      { spec: { replicas: 1 } },
      { subresource: 'scale' },
    );
    const grown = await runningMachinePool(ns.name, 'elastic', 1);
    // The Node that joined is the Node the autoscaler was told to expect.
    const node = await client.get(NODE_RESOURCE, { name: grown.status?.nodeRefs?.[0]?.name ?? '' });
    expect(node.status).toMatchObject({
      capacity: { cpu: '4', memory: '8Gi' },
      nodeInfo: { architecture: 'amd64', operatingSystem: 'linux' },
    });

    await client.delete(CLUSTER_RESOURCE, { namespace: ns.name, name: 'zero' });
    await gone('Cluster', () => client.get(CLUSTER_RESOURCE, { namespace: ns.name, name: 'zero' }));
    await gone('SimMachinePool', () => client.get(SIM_MACHINE_POOL_RESOURCE, { namespace: ns.name, name: 'elastic' }));
    expect((await client.list(SIM_MACHINE_RESOURCE, { namespace: ns.name })).items).toEqual([]);
  });
});
