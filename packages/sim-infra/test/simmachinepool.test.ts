import { isNotFound } from '@tally-ipam/controller-kit/client';
import { canScaleFromZero, MACHINE_POOL_RESOURCE, NodeCapacity } from '@tally-ipam/machinepool';
import { withTestNamespace } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLAIM_RESOURCE,
  CLUSTER_RESOURCE,
  MACHINE_RESOURCE,
  NODE_RESOURCE,
  SIM_GROUP,
  SIM_MACHINE_POOL_RESOURCE,
  SIM_MACHINE_RESOURCE,
  type SimMachinePool,
} from '../src/index.js';
import { createLinkedPools, instancesOf, objectState, poolState } from './pool-support.js';
import {
  conditionOf,
  createBootstrapSecret,
  createCluster,
  createPool,
  eventually,
  type RunningProviders,
  startProviders,
  unique,
} from './support.js';

let providers: RunningProviders;

beforeAll(async () => {
  providers = await startProviders();
});

afterAll(async () => {
  await providers?.stop();
});

/** The pool once it reports `replicas` instances, all with provider IDs in its list. */
async function settled(namespace: string, name: string, replicas: number): Promise<SimMachinePool> {
  return eventually(
    `SimMachinePool ${name} with ${replicas} replicas`,
    async () => {
      const pool = await providers.client.get(SIM_MACHINE_POOL_RESOURCE, { namespace, name });
      return pool.status?.replicas === replicas &&
        (pool.spec.providerIDList?.length ?? 0) === replicas &&
        conditionOf(pool, 'ReplicasReady')?.status === 'True'
        ? pool
        : undefined;
    },
    { describe: () => poolState(providers.client, namespace, name) },
  );
}

describe('SimMachinePool', () => {
  it('runs MachinePool Machines that each claim their own address, scales up and down, and deletes', async () => {
    const ns = await withTestNamespace(undefined, 'sim-pool');
    const { client } = providers;
    const ipPool = await createPool(client, ns.name, 'pool-v4', { addresses: ['10.50.0.10-10.50.0.30'], prefix: 24 });
    const cluster = await createCluster(client, ns.name, 'mpc', { infrastructureProvisioned: true });
    await createBootstrapSecret(client, ns.name, 'mp-bootstrap');
    const name = unique('workers');
    await createLinkedPools(client, ns.name, name, {
      clusterName: 'mpc',
      replicas: 2,
      version: 'v1.34.2',
      dataSecretName: 'mp-bootstrap',
      template: { network: { devices: [{ name: 'eth0', addressesFromPools: [ipPool] }] } },
    });

    const two = await settled(ns.name, name, 2);
    // What CAPI v1.12's MachinePool controller reads: status.ready (and the contract doc's initialization field),
    // replicas, a sorted providerIDList, and the InfraMachine kind that turns MachinePool Machines on.
    expect(two.status?.ready).toBe(true);
    expect(two.status?.initialization).toEqual({ provisioned: true });
    expect(two.status?.infrastructureMachineKind).toBe('SimMachine');
    expect(two.spec.providerIDList).toEqual([...(two.spec.providerIDList ?? [])].sort());
    const instances = await instancesOf(client, ns.name, name);
    expect(instances).toHaveLength(2);
    expect(two.spec.providerIDList).toEqual(instances.map((instance) => instance.spec.providerID).sort());
    for (const instance of instances) {
      expect(instance.metadata.labels).toMatchObject({
        'cluster.x-k8s.io/cluster-name': 'mpc',
        'cluster.x-k8s.io/pool-name': name,
      });
      // Non-controller: CAPI's Machine controller makes the Machine the controller later.
      expect(instance.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'SimMachinePool', name, controller: false }),
      ]);
      const claim = await client.get(CLAIM_RESOURCE, { namespace: ns.name, name: `${instance.metadata.name}-eth0-0` });
      expect(claim.spec.clusterName).toBe('mpc');
      // The pool counts an instance once it has a provider ID; its addresses may land in a later status write.
      const internalIP = await eventually(
        `InternalIP of ${instance.metadata.name}`,
        async () => {
          const current = await client.get(SIM_MACHINE_RESOURCE, { namespace: ns.name, name: instance.metadata.name });
          return current.status?.addresses?.find((address) => address.type === 'InternalIP')?.address;
        },
        {
          describe: () =>
            objectState(client, SIM_MACHINE_RESOURCE, { namespace: ns.name, name: instance.metadata.name }),
        },
      );
      expect(internalIP).toMatch(/^10\.50\.0\.\d+$/);
      const node = await eventually(
        `Node ${instance.metadata.name}`,
        async () => {
          const found = await client.get(NODE_RESOURCE, { name: instance.metadata.name });
          return found.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? found : undefined;
        },
        {
          describe: async () => ({
            node: await objectState(client, NODE_RESOURCE, { name: instance.metadata.name }),
            instance: await objectState(client, SIM_MACHINE_RESOURCE, {
              namespace: ns.name,
              name: instance.metadata.name,
            }),
          }),
        },
      );
      expect(node.spec?.providerID).toBe(instance.spec.providerID);
      expect(node.status).toMatchObject({ nodeInfo: { kubeletVersion: 'v1.34.2' } });
    }
    expect(two.status?.instances?.map((instance) => instance.instanceName)).toEqual(
      instances.map((instance) => instance.metadata.name).sort(),
    );

    await client.mergePatch(MACHINE_POOL_RESOURCE, { namespace: ns.name, name }, { spec: { replicas: 3 } });
    const three = await settled(ns.name, name, 3);
    expect(three.status?.ready).toBe(true);

    // Scale down goes through the owner Machines. Play CAPI's MachinePool and Machine controllers: one Machine per
    // instance, made the instance's controller.
    const machines = new Map<string, string>();
    for (const instance of await instancesOf(client, ns.name, name)) {
      const machine = await client.create(MACHINE_RESOURCE, {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Machine',
        metadata: {
          name: instance.metadata.name,
          namespace: ns.name,
          labels: { 'cluster.x-k8s.io/cluster-name': 'mpc', 'cluster.x-k8s.io/pool-name': name },
        },
        spec: {
          clusterName: 'mpc',
          bootstrap: { dataSecretName: '' },
          infrastructureRef: { apiGroup: SIM_GROUP, kind: 'SimMachine', name: instance.metadata.name },
        },
      });
      machines.set(instance.metadata.name, machine.metadata.uid ?? '');
      // Appended with a JSON patch: the providers keep writing the SimMachine, so a resourceVersion would be stale.
      await client.jsonPatch(SIM_MACHINE_RESOURCE, { namespace: ns.name, name: instance.metadata.name }, [
        {
          op: 'add',
          path: '/metadata/ownerReferences/-',
          value: {
            apiVersion: 'cluster.x-k8s.io/v1beta2',
            kind: 'Machine',
            name: instance.metadata.name,
            uid: machine.metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        },
      ]);
    }
    await client.mergePatch(MACHINE_POOL_RESOURCE, { namespace: ns.name, name }, { spec: { replicas: 1 } });
    const deleted = await eventually(
      'two owner Machines deleted',
      async () => {
        const gone: string[] = [];
        for (const machineName of machines.keys()) {
          try {
            await client.get(MACHINE_RESOURCE, { namespace: ns.name, name: machineName });
          } catch (error) {
            if (isNotFound(error)) gone.push(machineName);
          }
        }
        return gone.length === 2 ? gone : undefined;
      },
      {
        describe: async () => ({
          machines: await Promise.all(
            [...machines.keys()].map((machineName) =>
              objectState(client, MACHINE_RESOURCE, { namespace: ns.name, name: machineName }),
            ),
          ),
          pool: await poolState(client, ns.name, name),
        }),
      },
    );
    // Never an extra instance while CAPI catches up, and never a SimMachine deleted behind CAPI's back.
    expect(await instancesOf(client, ns.name, name)).toHaveLength(3);
    // CAPI's Machine controller would now delete the SimMachines of the deleted Machines.
    for (const machineName of deleted) {
      await client.delete(SIM_MACHINE_RESOURCE, { namespace: ns.name, name: machineName });
    }
    const one = await settled(ns.name, name, 1);
    const survivor = [...machines.keys()].find((machineName) => !deleted.includes(machineName));
    expect(one.spec.providerIDList).toEqual([`sim://${ns.name}/${survivor}`]);
    // The deleted instances give their addresses back: their claims go with them.
    for (const machineName of deleted) {
      await eventually(
        `claim of ${machineName} deleted`,
        async () => {
          try {
            await client.get(CLAIM_RESOURCE, { namespace: ns.name, name: `${machineName}-eth0-0` });
            return undefined;
          } catch (error) {
            return isNotFound(error) ? true : undefined;
          }
        },
        { describe: () => objectState(client, CLAIM_RESOURCE, { namespace: ns.name, name: `${machineName}-eth0-0` }) },
      );
    }

    // Deleting the pool deletes the remaining instance through its Machine, then lets go.
    await client.delete(SIM_MACHINE_POOL_RESOURCE, { namespace: ns.name, name });
    await eventually(
      'survivor Machine deleted',
      async () => {
        try {
          await client.get(MACHINE_RESOURCE, { namespace: ns.name, name: survivor ?? '' });
          return undefined;
        } catch (error) {
          return isNotFound(error) ? true : undefined;
        }
      },
      {
        describe: async () => ({
          machine: await objectState(client, MACHINE_RESOURCE, { namespace: ns.name, name: survivor ?? '' }),
          pool: await poolState(client, ns.name, name),
        }),
      },
    );
    // Playing CAPI's Machine controller again; the pool may have deleted the instance itself by now, since its Machine
    // is gone (an instance without a Machine is deleted directly once the pool is being deleted).
    await client.delete(SIM_MACHINE_RESOURCE, { namespace: ns.name, name: survivor ?? '' }).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
    await eventually(
      'SimMachinePool gone',
      async () => {
        try {
          await client.get(SIM_MACHINE_POOL_RESOURCE, { namespace: ns.name, name });
          return undefined;
        } catch (error) {
          return isNotFound(error) ? true : undefined;
        }
      },
      {
        describe: async () => ({
          pool: await objectState(client, SIM_MACHINE_POOL_RESOURCE, { namespace: ns.name, name }),
          instances: await poolState(client, ns.name, name).catch(() => 'pool gone'),
        }),
      },
    );
    expect(cluster.metadata.name).toBe('mpc');
  });

  it('announces its instance size for autoscaling from zero where cluster-autoscaler looks; its Nodes have that size', async () => {
    const ns = await withTestNamespace(undefined, 'sim-pool-zero');
    const { client } = providers;
    await createCluster(client, ns.name, 'mpz', { infrastructureProvisioned: true });
    await createBootstrapSecret(client, ns.name, 'mpz-bootstrap');
    const name = unique('from-zero');
    const machinePool = await createLinkedPools(client, ns.name, name, {
      clusterName: 'mpz',
      replicas: 0,
      dataSecretName: 'mpz-bootstrap',
      template: { size: { cpus: 4, memoryMiB: 8192 } },
    });

    // cluster-autoscaler's way in: the MachinePool's infrastructureRef, resource = lower-case kind + "s".
    const ref = machinePool.spec.template.spec.infrastructureRef;
    expect(SIM_MACHINE_POOL_RESOURCE.plural).toBe(`${ref.kind.toLowerCase()}s`);
    const empty = await eventually(
      'an empty pool announcing its size',
      async () => {
        const pool = await client.get(SIM_MACHINE_POOL_RESOURCE, { namespace: ns.name, name: ref.name });
        return pool.status?.ready === true && pool.status.capacity ? pool : undefined;
      },
      { describe: () => poolState(client, ns.name, ref.name) },
    );
    expect(empty.status).toMatchObject({
      replicas: 0,
      capacity: { cpu: '4', memory: '8Gi' },
      nodeInfo: { architecture: 'amd64', operatingSystem: 'linux' },
    });
    // Read as the autoscaler reads it (a map of strings): cpu and memory, so the group can grow from zero.
    expect(canScaleFromZero({ capacity: NodeCapacity.parse(empty.status?.capacity) })).toBe(true);

    await client.mergePatch(MACHINE_POOL_RESOURCE, { namespace: ns.name, name }, { spec: { replicas: 1 } });
    await settled(ns.name, name, 1);
    const [instance] = await instancesOf(client, ns.name, name);
    expect(instance?.spec.size).toEqual({ cpus: 4, memoryMiB: 8192 });
    const node = await eventually(
      'the instance Node',
      async () => {
        const found = await client.get(NODE_RESOURCE, { name: instance?.metadata.name ?? '' });
        return found.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? found : undefined;
      },
      {
        describe: async () => ({
          node: await objectState(client, NODE_RESOURCE, { name: instance?.metadata.name ?? '' }),
          pool: await poolState(client, ns.name, name),
        }),
      },
    );
    // The Node that joins is the one the autoscaler was promised.
    expect(node.status).toMatchObject({
      capacity: { cpu: '4', memory: '8Gi' },
      allocatable: { cpu: '4', memory: '8Gi' },
      nodeInfo: { architecture: 'amd64', operatingSystem: 'linux' },
    });

    // A new size is announced at once; the running instance keeps its own (a SimMachine's size is immutable).
    await client.mergePatch(
      SIM_MACHINE_POOL_RESOURCE,
      { namespace: ns.name, name },
      { spec: { template: { size: { cpus: 8, memoryMiB: 16384 } } } },
    );
    await eventually(
      'the new size announced',
      async () => {
        const pool = await client.get(SIM_MACHINE_POOL_RESOURCE, { namespace: ns.name, name });
        return pool.status?.capacity?.cpu === '8' && pool.status.capacity.memory === '16Gi' ? pool : undefined;
      },
      { describe: () => poolState(client, ns.name, name) },
    );
    const kept = await client.get(SIM_MACHINE_RESOURCE, { namespace: ns.name, name: instance?.metadata.name ?? '' });
    expect(kept.spec.size).toEqual({ cpus: 4, memoryMiB: 8192 });
    await client.delete(NODE_RESOURCE, { name: node.metadata.name });
  });

  it('creates no instance before the bootstrap data exists, and none while paused', async () => {
    const ns = await withTestNamespace(undefined, 'sim-pool-wait');
    const { client } = providers;
    await createCluster(client, ns.name, 'mpw', { infrastructureProvisioned: true, paused: true });
    const name = unique('waiting');
    await createLinkedPools(client, ns.name, name, { clusterName: 'mpw', replicas: 2, template: {} });
    const paused = await eventually(
      'Paused',
      async () => {
        const pool = await client.get(SIM_MACHINE_POOL_RESOURCE, { namespace: ns.name, name });
        return conditionOf(pool, 'Paused')?.status === 'True' ? pool : undefined;
      },
      { describe: () => poolState(client, ns.name, name) },
    );
    expect(paused.metadata.finalizers).toBeUndefined();
    expect(await instancesOf(client, ns.name, name)).toHaveLength(0);

    await client.mergePatch(CLUSTER_RESOURCE, { namespace: ns.name, name: 'mpw' }, { spec: { paused: false } });
    const waiting = await eventually(
      'WaitingForBootstrapData',
      async () => {
        const pool = await client.get(SIM_MACHINE_POOL_RESOURCE, { namespace: ns.name, name });
        return conditionOf(pool, 'Ready')?.reason === 'WaitingForBootstrapData' ? pool : undefined;
      },
      { describe: () => poolState(client, ns.name, name) },
    );
    expect(waiting.status?.infrastructureMachineKind).toBe('SimMachine');
    expect(waiting.status?.ready).toBeUndefined();
    expect(await instancesOf(client, ns.name, name)).toHaveLength(0);

    await createBootstrapSecret(client, ns.name, 'late');
    await client.mergePatch(
      MACHINE_POOL_RESOURCE,
      { namespace: ns.name, name },
      { spec: { template: { spec: { bootstrap: { dataSecretName: 'late' } } } } },
    );
    const ready = await settled(ns.name, name, 2);
    expect(ready.status?.ready).toBe(true);
    for (const instance of await instancesOf(client, ns.name, name)) {
      await client.delete(NODE_RESOURCE, { name: instance.metadata.name });
    }
  });
});
