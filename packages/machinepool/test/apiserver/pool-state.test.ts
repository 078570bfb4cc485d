import { setCondition } from '@tally-ipam/controller-kit/capi';
import { type Client, isConflict, isInvalid, type ResourceKind } from '@tally-ipam/controller-kit/client';
import { createTestNamespace, type TestNamespace, testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  autoscaleFromZeroStatus,
  canScaleFromZero,
  checkInfraMachinePoolCRD,
  infraMachinePoolCRDNames,
  machinePoolStatusFromInstances,
  NodeCapacity,
  type PoolInstance,
  READY_CONDITION,
  REPLICAS_READY_CONDITION,
  summarizeReadyCondition,
  writeInfraMachinePoolState,
} from '../../src/index.js';
import { EXAMPLE_GROUP, EXAMPLE_MACHINE_KIND, EXAMPLE_POOL_KIND } from '../fixtures/example-kinds.js';
import { createInfraPool, newClient, POOLS } from './support.js';

const CRDS: ResourceKind = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  namespaced: false,
};

const NOW = new Date('2026-11-22T10:00:00Z');

function instance(index: number, ready = true): PoolInstance {
  return {
    instanceName: `worker-${index}`,
    providerID: `example://pool/worker-${index}`,
    ready,
    addresses: [{ type: 'InternalIP', address: `10.0.0.${index}` }],
    version: 'v1.34.0',
  };
}

/** The contract state a provider's reconcile computes: fields from instances plus ReplicasReady and Ready. */
function contractState(instances: PoolInstance[], desiredReplicas: number, wasProvisioned: boolean) {
  const state = machinePoolStatusFromInstances({
    instances,
    desiredReplicas,
    wasProvisioned,
    observedGeneration: 1,
    infrastructureMachineKind: EXAMPLE_MACHINE_KIND,
  });
  const withReplicas = setCondition([], state.replicasReadyCondition, NOW);
  const conditions = setCondition(
    withReplicas,
    summarizeReadyCondition({ conditions: withReplicas, dependsOn: [REPLICAS_READY_CONDITION], observedGeneration: 1 }),
    NOW,
  );
  return { providerIDList: state.providerIDList, status: { ...state.status, conditions } };
}

describe('InfraMachinePool contract fields on the real API server', () => {
  let client: Client;
  let namespace: TestNamespace;

  beforeAll(async () => {
    client = newClient();
    namespace = await createTestNamespace(testEnv().kubeConfig, 'mp-state');
  });
  afterAll(async () => {
    await namespace.delete();
    client.close();
  });

  it('the installed CRDs pass checkInfraMachinePoolCRD as the API server returns them', async () => {
    const names = infraMachinePoolCRDNames(EXAMPLE_GROUP, EXAMPLE_POOL_KIND);
    const pool = await client.get(CRDS, { name: names.infraMachinePool });
    const template = await client.get(CRDS, { name: names.infraMachinePoolTemplate });
    expect(checkInfraMachinePoolCRD(pool, { machinePoolMachines: true })).toEqual([]);
    expect(checkInfraMachinePoolCRD(template, { template: true })).toEqual([]);
  });

  it('keeps every field the helpers write, writes nothing when nothing changed, and removes an emptied list', async () => {
    const created = await createInfraPool(client, namespace.name, 'state');
    const desired = contractState([instance(3), instance(1), instance(2, false)], 3, false);
    const first = await writeInfraMachinePoolState({ client, resource: POOLS, infraMachinePool: created, ...desired });
    expect(first).toMatchObject({ specUpdated: true, statusUpdated: true });

    const stored = await client.get(POOLS, { namespace: namespace.name, name: 'state' });
    expect(stored.spec?.providerIDList).toEqual([
      'example://pool/worker-1',
      'example://pool/worker-2',
      'example://pool/worker-3',
    ]);
    expect(stored.status).toMatchObject({
      ready: true,
      initialization: { provisioned: true },
      replicas: 3,
      infrastructureMachineKind: EXAMPLE_MACHINE_KIND,
    });
    expect(stored.status?.instances).toEqual([
      {
        instanceName: 'worker-1',
        providerID: 'example://pool/worker-1',
        addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
        version: 'v1.34.0',
        ready: true,
      },
      {
        instanceName: 'worker-2',
        providerID: 'example://pool/worker-2',
        addresses: [{ type: 'InternalIP', address: '10.0.0.2' }],
        version: 'v1.34.0',
        ready: false,
      },
      {
        instanceName: 'worker-3',
        providerID: 'example://pool/worker-3',
        addresses: [{ type: 'InternalIP', address: '10.0.0.3' }],
        version: 'v1.34.0',
        ready: true,
      },
    ]);
    expect(stored.status?.conditions?.map(({ type, status, reason }) => ({ type, status, reason }))).toEqual([
      { type: REPLICAS_READY_CONDITION, status: 'True', reason: 'ReplicasReady' },
      { type: READY_CONDITION, status: 'True', reason: 'Ready' },
    ]);

    const again = await writeInfraMachinePoolState({ client, resource: POOLS, infraMachinePool: stored, ...desired });
    expect(again).toMatchObject({ specUpdated: false, statusUpdated: false });
    expect(again.object.metadata.resourceVersion).toBe(stored.metadata.resourceVersion);

    const scaledToZero = contractState([], 0, stored.status?.ready === true);
    await writeInfraMachinePoolState({ client, resource: POOLS, infraMachinePool: stored, ...scaledToZero });
    const empty = await client.get(POOLS, { namespace: namespace.name, name: 'state' });
    expect(empty.spec).not.toHaveProperty('providerIDList');
    expect(empty.status).toMatchObject({
      ready: true,
      initialization: { provisioned: true },
      replicas: 0,
      instances: [],
    });
  });

  it('a state computed from a stale read fails with a Conflict instead of overwriting', async () => {
    const created = await createInfraPool(client, namespace.name, 'stale');
    await writeInfraMachinePoolState({
      client,
      resource: POOLS,
      infraMachinePool: created,
      ...contractState([instance(1)], 1, false),
    });
    const stale = writeInfraMachinePoolState({
      client,
      resource: POOLS,
      infraMachinePool: created,
      ...contractState([instance(1), instance(2)], 2, false),
    });
    await expect(stale).rejects.toSatisfy(isConflict);
  });

  it('keeps the scale-from-zero capacity and nodeInfo as strings, rewrites nothing unchanged, refuses an integer quantity', async () => {
    const created = await createInfraPool(client, namespace.name, 'from-zero');
    const fromZero = autoscaleFromZeroStatus({
      size: { cpuMillicores: 2000, memoryBytes: 4 * 1024 ** 3 },
      architecture: 'arm64',
      operatingSystem: 'linux',
    });
    const desired = contractState([], 0, false);
    const status = { ...desired.status, ...fromZero };
    const first = await writeInfraMachinePoolState({
      client,
      resource: POOLS,
      infraMachinePool: created,
      providerIDList: desired.providerIDList,
      status,
    });
    expect(first.statusUpdated).toBe(true);

    const stored = await client.get(POOLS, { namespace: namespace.name, name: 'from-zero' });
    expect(stored.status).toMatchObject({
      replicas: 0,
      capacity: { cpu: '2', memory: '4Gi' },
      nodeInfo: { architecture: 'arm64', operatingSystem: 'linux' },
    });
    // What cluster-autoscaler reads back (a map of strings) lets the empty pool scale from zero.
    expect(canScaleFromZero({ capacity: NodeCapacity.parse(stored.status?.capacity) })).toBe(true);
    const again = await writeInfraMachinePoolState({
      client,
      resource: POOLS,
      infraMachinePool: stored,
      providerIDList: desired.providerIDList,
      status,
    });
    expect(again.statusUpdated).toBe(false);

    // ResourceList's int-or-string would take 2; the autoscaler's string-map read would then drop the whole capacity.
    await expect(client.patchStatus(POOLS, stored, { capacity: { cpu: 2, memory: '4Gi' } })).rejects.toSatisfy(
      isInvalid,
    );
    await expect(client.patchStatus(POOLS, stored, { nodeInfo: { architecture: 'riscv64' } })).rejects.toSatisfy(
      isInvalid,
    );
  });

  it('the API server prunes status.failureReason: the contract CRD leaves it out (CAPI v1.12 crashes on it)', async () => {
    const created = await createInfraPool(client, namespace.name, 'no-failure-fields');
    const written = await client.patchStatus(POOLS, created, { failureReason: 'InvalidConfiguration', replicas: 0 });
    expect(written.status).toEqual({ replicas: 0 });
  });
});
