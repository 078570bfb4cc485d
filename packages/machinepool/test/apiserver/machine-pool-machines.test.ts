import { Client, isNotFound, setControllerReference } from '@tally-ipam/controller-kit/client';
import { createTestNamespace, type TestNamespace, testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DELETE_MACHINE_ANNOTATION,
  deleteMachinePoolMachines,
  formatLabelValue,
  type InfraMachineObject,
  MACHINE_POOL_RESOURCE,
  MACHINE_RESOURCE,
  type PoolInstance,
  reconcileMachinePoolMachines,
  type StoredMachinePool,
} from '../../src/index.js';
import { EXAMPLE_API_VERSION, EXAMPLE_MACHINE_RESOURCE } from '../fixtures/example-kinds.js';
import {
  createInfraPool,
  createMachineLikeCapi,
  createMachinePool,
  eventually,
  INFRA_MACHINES,
  newClient,
  POOLS,
} from './support.js';

function instance(name: string): PoolInstance {
  return { instanceName: name, providerID: `example://workers/${name}`, ready: true };
}

const template = (poolInstance: PoolInstance): Record<string, unknown> => ({
  providerID: poolInstance.providerID,
  image: 'example/node:v1.34.0',
});

describe('MachinePool Machines on the real API server', () => {
  let client: Client;
  let namespace: TestNamespace;

  beforeAll(async () => {
    client = newClient();
    namespace = await createTestNamespace(testEnv().kubeConfig, 'mp-machines');
  });
  afterAll(async () => {
    await namespace.delete();
    client.close();
  });

  /** Lists InfraMachines exactly as CAPI's MachinePool controller does: the pool's apiVersion and the two labels. */
  async function listLikeCapi(machinePoolName: string): Promise<InfraMachineObject[]> {
    const list = await client.listAll(INFRA_MACHINES, {
      namespace: namespace.name,
      labelSelector: `cluster.x-k8s.io/pool-name=${formatLabelValue(machinePoolName)},cluster.x-k8s.io/cluster-name=prod`,
    });
    return list.items.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  }

  async function machineGone(name: string): Promise<true | undefined> {
    try {
      await client.get(MACHINE_RESOURCE, { namespace: namespace.name, name });
      return undefined;
    } catch (error) {
      if (isNotFound(error)) return true;
      throw error;
    }
  }

  async function readMachinePool(name: string): Promise<StoredMachinePool> {
    return client.get(MACHINE_POOL_RESOURCE, { namespace: namespace.name, name });
  }

  it('creates InfraMachines CAPI finds, survives the Machine controller taking control, scales down through Machines', async () => {
    let machinePool = await createMachinePool(client, {
      namespace: namespace.name,
      name: 'workers',
      clusterName: 'prod',
      infraPoolName: 'workers',
      replicas: 3,
      dataSecretName: 'workers-bootstrap',
    });
    const pool = await createInfraPool(client, namespace.name, 'workers', machinePool);
    const reconcile = (instances: PoolInstance[]) =>
      reconcileMachinePoolMachines({
        client,
        infraMachinePool: pool,
        machinePool,
        instances,
        infraMachineResource: EXAMPLE_MACHINE_RESOURCE,
        template,
      });

    // 1. One InfraMachine per instance, with CAPI's labels and a non-controller owner reference to the pool.
    const first = await reconcile([instance('worker-a'), instance('worker-b'), instance('worker-c')]);
    expect(first).toEqual({
      created: ['worker-a', 'worker-b', 'worker-c'],
      updated: [],
      deletedMachines: [],
      waitingForMachine: [],
    });
    const created = await listLikeCapi('workers');
    expect(created.map((infraMachine) => infraMachine.metadata.name)).toEqual(['worker-a', 'worker-b', 'worker-c']);
    for (const infraMachine of created) {
      expect(infraMachine.apiVersion).toBe(pool.apiVersion);
      expect(infraMachine.metadata.labels).toEqual({
        'cluster.x-k8s.io/cluster-name': 'prod',
        'cluster.x-k8s.io/pool-name': 'workers',
      });
      expect(infraMachine.metadata.ownerReferences).toEqual([
        {
          apiVersion: EXAMPLE_API_VERSION,
          kind: 'ExampleMachinePool',
          name: 'workers',
          uid: pool.metadata.uid,
          controller: false,
        },
      ]);
      expect(infraMachine.spec).toEqual({
        providerID: `example://workers/${infraMachine.metadata.name}`,
        image: 'example/node:v1.34.0',
      });
    }
    expect(await reconcile([instance('worker-a'), instance('worker-b'), instance('worker-c')])).toEqual({
      created: [],
      updated: [],
      deletedMachines: [],
      waitingForMachine: [],
    });

    // 2. CAPI's MachinePool controller creates a Machine per InfraMachine; the Machine controller makes the Machine the
    //    InfraMachine's controller — which throws AlreadyOwnedError if the pool's reference were a controller one.
    //    CAPI writes with its own field manager, as the real controllers do.
    const capi = new Client(testEnv().kubeConfig, { fieldManager: 'capi-machine-controller' });
    for (const infraMachine of created) {
      const machine = await createMachineLikeCapi(capi, machinePool, infraMachine);
      const controlled = setControllerReference(infraMachine, machine);
      const updated = await capi.update(INFRA_MACHINES, controlled);
      await capi.patchStatus(INFRA_MACHINES, updated, { initialization: { provisioned: true } });
    }
    capi.close();
    expect(await reconcile([instance('worker-a'), instance('worker-b'), instance('worker-c')])).toEqual({
      created: [],
      updated: [],
      deletedMachines: [],
      waitingForMachine: [],
    });
    // A template change re-applies every InfraMachine; server-side apply keeps the Machine's controller reference.
    const newImage = (poolInstance: PoolInstance): Record<string, unknown> => ({
      ...template(poolInstance),
      image: 'example/node:v1.34.1',
    });
    const reapplied = await reconcileMachinePoolMachines({
      client,
      infraMachinePool: pool,
      machinePool,
      instances: [instance('worker-a'), instance('worker-b'), instance('worker-c')],
      infraMachineResource: EXAMPLE_MACHINE_RESOURCE,
      template: newImage,
    });
    expect(reapplied.updated).toEqual(['worker-a', 'worker-b', 'worker-c']);
    for (const infraMachine of await listLikeCapi('workers')) {
      expect(infraMachine.spec?.image).toBe('example/node:v1.34.1');
      expect(infraMachine.status?.initialization?.provisioned).toBe(true);
      expect(infraMachine.metadata.ownerReferences?.map(({ kind, controller }) => ({ kind, controller }))).toEqual([
        { kind: 'ExampleMachinePool', controller: false },
        { kind: 'Machine', controller: true },
      ]);
    }

    // 3. Scale down to 2 with the autoscaler's delete-machine annotation on worker-a (newest-first would pick worker-c):
    //    the owner Machine is deleted, the InfraMachine is left to CAPI's Machine controller.
    await client.mergePatch(
      MACHINE_RESOURCE,
      { namespace: namespace.name, name: 'worker-a' },
      {
        metadata: { annotations: { [DELETE_MACHINE_ANNOTATION]: 'true' } },
      },
    );
    machinePool = await client.mergePatch(MACHINE_POOL_RESOURCE, machinePool.metadata, { spec: { replicas: 2 } });
    const scaledDown = await reconcile([instance('worker-a'), instance('worker-b'), instance('worker-c')]);
    expect(scaledDown.deletedMachines).toEqual(['worker-a']);
    await eventually('Machine worker-a to be deleted', () => machineGone('worker-a'));
    expect((await listLikeCapi('workers')).map((infraMachine) => infraMachine.metadata.name)).toContain('worker-a');
    // While worker-a drains, it no longer counts: nothing more is deleted.
    expect(
      (await reconcile([instance('worker-a'), instance('worker-b'), instance('worker-c')])).deletedMachines,
    ).toEqual([]);

    // 4. CAPI's Machine controller deletes the InfraMachine, whose reconciler tears the instance down: not re-created.
    await client.delete(INFRA_MACHINES, { namespace: namespace.name, name: 'worker-a' });
    expect(await reconcile([instance('worker-b'), instance('worker-c')])).toEqual({
      created: [],
      updated: [],
      deletedMachines: [],
      waitingForMachine: [],
    });

    // 5. An instance that vanished out of band: its Machine is deleted so CAPI drains and cleans up.
    expect((await reconcile([instance('worker-b')])).deletedMachines).toEqual(['worker-c']);
    await eventually('Machine worker-c to be deleted', () => machineGone('worker-c'));
    machinePool = await readMachinePool('workers');
    expect(machinePool.spec.replicas).toBe(2);
  });

  it('re-applies a changed spec, waits for a Machine before removing, and the pool reference lets GC clean up', async () => {
    const longName = `workers-${'y'.repeat(60)}`;
    const machinePool = await createMachinePool(client, {
      namespace: namespace.name,
      name: longName,
      clusterName: 'prod',
      infraPoolName: 'long',
      replicas: 1,
    });
    const pool = await createInfraPool(client, namespace.name, 'long', machinePool);
    const reconcile = (instances: PoolInstance[]) =>
      reconcileMachinePoolMachines({
        client,
        infraMachinePool: pool,
        machinePool,
        instances,
        infraMachineResource: EXAMPLE_MACHINE_RESOURCE,
        template,
      });
    expect((await reconcile([instance('long-0')])).created).toEqual(['long-0']);
    const [created] = await listLikeCapi(longName);
    expect(created?.metadata.labels?.['cluster.x-k8s.io/pool-name']).toBe(formatLabelValue(longName));

    // Someone changed the spec the provider owns: the next reconcile applies it back.
    await client.mergePatch(
      INFRA_MACHINES,
      { namespace: namespace.name, name: 'long-0' },
      { spec: { image: 'other' } },
    );
    expect((await reconcile([instance('long-0')])).updated).toEqual(['long-0']);
    expect((await listLikeCapi(longName))[0]?.spec?.image).toBe('example/node:v1.34.0');

    // Its instance is gone but CAPI has not created the Machine yet: nothing is deleted, the caller requeues.
    expect(await reconcile([])).toEqual({
      created: [],
      updated: [],
      deletedMachines: [],
      waitingForMachine: ['long-0'],
    });
    expect(await listLikeCapi(longName)).toHaveLength(1);

    // The pool goes: kube-controller-manager's garbage collector removes the InfraMachine it owned alone.
    await client.delete(POOLS, { namespace: namespace.name, name: 'long' });
    await eventually('InfraMachine long-0 to be garbage-collected', async () =>
      (await listLikeCapi(longName)).length === 0 ? true : undefined,
    );
  });

  it('refuses an InfraMachine kind served under another apiVersion than the pool', async () => {
    const machinePool = await createMachinePool(client, {
      namespace: namespace.name,
      name: 'mismatch',
      clusterName: 'prod',
      infraPoolName: 'mismatch',
    });
    const pool = await createInfraPool(client, namespace.name, 'mismatch', machinePool);
    await expect(
      reconcileMachinePoolMachines({
        client,
        infraMachinePool: pool,
        machinePool,
        instances: [instance('m-0')],
        infraMachineResource: { ...EXAMPLE_MACHINE_RESOURCE, apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1' },
        template,
      }),
    ).rejects.toThrow(/CAPI lists the InfraMachines with the pool's apiVersion/);
  });
});

describe('deleting a pool with MachinePool Machines on the real API server', () => {
  let client: Client;
  let namespace: TestNamespace;

  beforeAll(async () => {
    client = newClient();
    namespace = await createTestNamespace(testEnv().kubeConfig, 'mp-delete');
  });
  afterAll(async () => {
    await namespace.delete();
    client.close();
  });

  it('deletes owner Machines, deletes InfraMachines that never got one, and reports what remains', async () => {
    const machinePool = await createMachinePool(client, {
      namespace: namespace.name,
      name: 'doomed',
      clusterName: 'prod',
      infraPoolName: 'doomed',
      replicas: 2,
    });
    const pool = await createInfraPool(client, namespace.name, 'doomed', machinePool);
    const other = await createInfraPool(client, namespace.name, 'other', machinePool);
    const base = { client, machinePool, infraMachineResource: EXAMPLE_MACHINE_RESOURCE, template };
    await reconcileMachinePoolMachines({
      ...base,
      infraMachinePool: pool,
      instances: [instance('d-0'), instance('d-1')],
    });
    await reconcileMachinePoolMachines({ ...base, infraMachinePool: other, instances: [instance('o-0')] });
    const withMachine = await client.get(INFRA_MACHINES, { namespace: namespace.name, name: 'd-0' });
    const machine = await createMachineLikeCapi(client, machinePool, withMachine);
    await client.update(INFRA_MACHINES, setControllerReference(withMachine, machine));

    const first = await deleteMachinePoolMachines({
      client,
      infraMachinePool: pool,
      infraMachineResource: EXAMPLE_MACHINE_RESOURCE,
    });
    expect(first).toEqual({ deletedMachines: ['d-0'], deletedInfraMachines: ['d-1'], remaining: ['d-0', 'd-1'] });
    await eventually('Machine d-0 to be deleted', () => machineGone('d-0'));

    // CAPI's Machine controller deletes the InfraMachine of a deleted Machine; here the test does.
    await client.delete(INFRA_MACHINES, { namespace: namespace.name, name: 'd-0' });
    const second = await deleteMachinePoolMachines({
      client,
      infraMachinePool: pool,
      infraMachineResource: EXAMPLE_MACHINE_RESOURCE,
    });
    expect(second).toEqual({ deletedMachines: [], deletedInfraMachines: [], remaining: [] });
    // The other pool's InfraMachine is untouched.
    expect(
      (await client.get(INFRA_MACHINES, { namespace: namespace.name, name: 'o-0' })).metadata.deletionTimestamp,
    ).toBeUndefined();
  });

  async function machineGone(name: string): Promise<true | undefined> {
    try {
      await client.get(MACHINE_RESOURCE, { namespace: namespace.name, name });
      return undefined;
    } catch (error) {
      if (isNotFound(error)) return true;
      throw error;
    }
  }
});
