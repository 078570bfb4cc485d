import { randomUUID } from 'node:crypto';
import { Store } from '@tally-ipam/controller-kit/cache';
import { Client } from '@tally-ipam/controller-kit/client';
import type { ReconcileContext } from '@tally-ipam/controller-kit/controller';
import { MACHINE_POOL_RESOURCE, type StoredMachinePool } from '@tally-ipam/machinepool';
import { testEnv, withTestNamespace } from '@tally-ipam/testenv/vitest';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  SIM_MACHINE_POOL_RESOURCE,
  type SimMachine,
  type SimMachinePool,
  SimMachinePoolReconciler,
  StoredCluster,
  type StoredMachine,
} from '../src/index.js';
import { createLinkedPools, instancesOf } from './pool-support.js';
import { createBootstrapSecret, unique } from './support.js';

// The SimMachinePool reconciler when its SimMachine informer lags behind its own creates (as under load, where the
// retry after a 409 runs before the watch delivers them): it must count the instances that exist, not the cached ones.

let client: Client;

beforeAll(() => {
  client = new Client(testEnv().kubeConfig, { fieldManager: 'sim-pool-stale-cache-test' });
});

afterAll(() => {
  client?.close();
});

const context: ReconcileContext = {
  logger: pino({ level: 'silent' }),
  signal: new AbortController().signal,
  reconcileID: randomUUID(),
};

it('creates each missing instance once, however far its SimMachine cache lags behind', async () => {
  const ns = await withTestNamespace(undefined, 'sim-pool-stale');
  // The Cluster exists only in this test's store: the providers other test files run leave this pool alone.
  const clusterName = unique('unseen');
  const cluster = StoredCluster.parse({
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Cluster',
    metadata: { name: clusterName, namespace: ns.name, uid: randomUUID() },
    spec: {},
    status: { initialization: { infrastructureProvisioned: true } },
  });
  await createBootstrapSecret(client, ns.name, 'data');
  const name = unique('lagging');
  await createLinkedPools(client, ns.name, name, { clusterName, replicas: 2, dataSecretName: 'data', template: {} });

  const pools = new Store<SimMachinePool>();
  const machinePools = new Store<StoredMachinePool>();
  const clusters = new Store<StoredCluster>();
  clusters.upsert(cluster);
  const reconciler = new SimMachinePoolReconciler({
    client,
    simMachinePools: { store: pools },
    // The lag taken to its end: this cache never shows a SimMachine.
    simMachines: { store: new Store<SimMachine>() },
    machinePools: { store: machinePools },
    machines: { store: new Store<StoredMachine>() },
    clusters: { store: clusters },
    now: () => new Date(),
  });

  // Three passes, each with the pool and MachinePool as the API server has them (their informers caught up).
  for (let pass = 0; pass < 3; pass++) {
    pools.upsert(await client.get(SIM_MACHINE_POOL_RESOURCE, { namespace: ns.name, name }));
    machinePools.upsert(await client.get(MACHINE_POOL_RESOURCE, { namespace: ns.name, name }));
    await reconciler.reconcile({ namespace: ns.name, name }, context);
  }

  expect(await instancesOf(client, ns.name, name)).toHaveLength(2);
  const pool = await client.get(SIM_MACHINE_POOL_RESOURCE, { namespace: ns.name, name });
  expect(pool.status?.replicas).toBe(2);
  expect(pool.status?.instances?.map((instance) => instance.instanceName).sort()).toEqual(
    (await instancesOf(client, ns.name, name)).map((instance) => instance.metadata.name).sort(),
  );

  // Only this test reconciles the pool: its delete pass drops the finalizer, so that the namespace can go.
  await client.delete(SIM_MACHINE_POOL_RESOURCE, { namespace: ns.name, name });
  pools.upsert(await client.get(SIM_MACHINE_POOL_RESOURCE, { namespace: ns.name, name }));
  await reconciler.reconcile({ namespace: ns.name, name }, context);
});
