import { inspectIP } from '@tally-ipam/api-types';
import { isConflict, isNotFound } from '@tally-ipam/controller-kit/client';
import { LEASE_RESOURCE } from '@tally-ipam/controller-kit/manager';
import { withTestNamespace } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  CLUSTER_RESOURCE,
  MACHINE_RESOURCE,
  NODE_RESOURCE,
  SIM_MACHINE_FINALIZER,
  SIM_MACHINE_RESOURCE,
  type SimMachine,
  type StoredClaim,
} from '../src/index.js';
import { NODE_LEASE_DURATION_SECONDS, NODE_LEASE_NAMESPACE } from '../src/simulated-cloud.js';
import {
  conditionOf,
  createBootstrapSecret,
  createCluster,
  createMachine,
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

async function getSimMachine(namespace: string, name: string): Promise<SimMachine> {
  return providers.client.get(SIM_MACHINE_RESOURCE, { namespace, name });
}

async function readyMachine(namespace: string, name: string): Promise<SimMachine> {
  return eventually(`SimMachine ${name} Ready`, async () => {
    const simMachine = await getSimMachine(namespace, name);
    return conditionOf(simMachine, 'Ready')?.status === 'True' ? simMachine : undefined;
  });
}

/**
 * Rewrites a claim's finalizers with its resourceVersion as precondition, reading again after a Conflict: the IPAM
 * provider and the Sim provider write the same claim meanwhile.
 */
async function editClaimFinalizers(
  namespace: string,
  name: string,
  edit: (finalizers: string[]) => string[],
): Promise<void> {
  await eventually(`finalizers of claim ${name} edited`, async () => {
    const claim = await providers.client.get(CLAIM_RESOURCE, { namespace, name });
    try {
      await providers.client.mergePatch(
        CLAIM_RESOURCE,
        { namespace, name },
        {
          metadata: {
            resourceVersion: claim.metadata.resourceVersion,
            finalizers: edit([...(claim.metadata.finalizers ?? [])]),
          },
        },
      );
      return true;
    } catch (error) {
      if (isConflict(error)) return undefined;
      throw error;
    }
  });
}

function inRange(address: string, first: string, last: string): boolean {
  const value = inspectIP(address);
  const low = inspectIP(first);
  const high = inspectIP(last);
  if (!value.ok || !low.ok || !high.ok) return false;
  return value.value.value >= low.value.value && value.value.value <= high.value.value;
}

describe('SimMachine with IPAM', () => {
  it('claims an IPv4 and an IPv6 address from Tally pools, provisions, and registers a Ready Node', async () => {
    const ns = await withTestNamespace(undefined, 'sim-machine');
    const { client } = providers;
    const v4 = await createPool(client, ns.name, 'nodes-v4', {
      addresses: ['10.20.0.10-10.20.0.20'],
      prefix: 24,
      gateway: '10.20.0.1',
    });
    const v6 = await createPool(client, ns.name, 'nodes-v6', {
      addresses: ['fd00:20::10-fd00:20::20'],
      prefix: 64,
      gateway: 'fd00:20::1',
    });
    await createCluster(client, ns.name, 'c1', { infrastructureProvisioned: true });
    await createBootstrapSecret(client, ns.name, 'bootstrap-data');
    const name = unique('worker');
    const { simMachine } = await createMachine(client, ns.name, {
      name,
      clusterName: 'c1',
      dataSecretName: 'bootstrap-data',
      failureDomain: 'fd-a',
      version: 'v1.34.1',
      devices: [{ name: 'eth0', addressesFromPools: [v4] }, { addressesFromPools: [v6] }],
    });

    const ready = await readyMachine(ns.name, name);

    // One claim per (device, pool), named <machine>-<device name or index>-<pool index>, as the IPAM contract asks.
    const claims = await Promise.all(
      [`${name}-eth0-0`, `${name}-1-0`].map((claimName) =>
        client.get(CLAIM_RESOURCE, { namespace: ns.name, name: claimName }),
      ),
    );
    for (const [claim, pool] of [
      [claims[0], v4],
      [claims[1], v6],
    ] as const) {
      expect(claim?.spec).toEqual({ clusterName: 'c1', poolRef: pool });
      expect(claim?.metadata.labels).toEqual({ 'cluster.x-k8s.io/cluster-name': 'c1' });
      expect(claim?.metadata.ownerReferences).toEqual([
        {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
          kind: 'SimMachine',
          name,
          uid: simMachine.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
    }
    const addresses = await Promise.all(
      claims.map((claim) =>
        client.get(ADDRESS_RESOURCE, { namespace: ns.name, name: claim?.status?.addressRef?.name ?? '' }),
      ),
    );
    const [ipv4, ipv6] = addresses.map((address) => address.spec);
    expect(inRange(ipv4?.address ?? '', '10.20.0.10', '10.20.0.20')).toBe(true);
    expect(inRange(ipv6?.address ?? '', 'fd00:20::10', 'fd00:20::20')).toBe(true);

    // Everything CAPI's Machine controller reads (§2.3): providerID, provisioned, addresses; plus the failure domain.
    expect(ready.spec.providerID).toBe(`sim://${ns.name}/${name}`);
    expect(ready.status?.initialization).toEqual({ provisioned: true });
    expect(ready.status?.addresses).toEqual([
      { type: 'Hostname', address: name },
      { type: 'InternalIP', address: ipv4?.address },
      { type: 'InternalIP', address: ipv6?.address },
    ]);
    expect(ready.status?.devices).toEqual([
      { name: 'eth0', ipAddrs: [`${ipv4?.address}/24`], gateway4: '10.20.0.1' },
      { name: '1', ipAddrs: [`${ipv6?.address}/64`], gateway6: 'fd00:20::1' },
    ]);
    expect(ready.status?.failureDomain).toBe('fd-a');
    expect(ready.metadata.finalizers).toContain(SIM_MACHINE_FINALIZER);
    expect(conditionOf(ready, 'IPAddressesReady')).toMatchObject({
      status: 'True',
      reason: 'IPAddressesAllocated',
      message: '2/2 IP addresses allocated',
    });
    expect(conditionOf(ready, 'InstanceProvisioned')).toMatchObject({ status: 'True', reason: 'Provisioned' });
    expect(conditionOf(ready, 'NodeProvisioned')).toMatchObject({ status: 'True', reason: 'NodeReady' });
    expect(conditionOf(ready, 'Paused')).toMatchObject({ status: 'False', reason: 'NotPaused' });

    // The simulated kubelet: a Node with exactly the provider ID, Ready and without pressure.
    const node = await client.get(NODE_RESOURCE, { name });
    expect(node.spec?.providerID).toBe(ready.spec.providerID);
    const nodeConditions = Object.fromEntries((node.status?.conditions ?? []).map((c) => [c.type, c.status]));
    expect(nodeConditions).toEqual({
      Ready: 'True',
      MemoryPressure: 'False',
      DiskPressure: 'False',
      PIDPressure: 'False',
    });
    expect(node.status).toMatchObject({
      nodeInfo: { kubeletVersion: 'v1.34.1' },
      addresses: [
        { type: 'InternalIP', address: ipv4?.address },
        { type: 'InternalIP', address: ipv6?.address },
        { type: 'Hostname', address: name },
      ],
    });
    await client.delete(NODE_RESOURCE, { name });
  });

  it('keeps the Node heartbeat Lease renewed, as a kubelet does (node lifecycle controllers judge Nodes by it)', async () => {
    const ns = await withTestNamespace(undefined, 'sim-heartbeat');
    const { client } = providers;
    const pool = await createPool(client, ns.name, 'pool', { addresses: ['10.22.0.0/28'], prefix: 28 });
    await createCluster(client, ns.name, 'hb', { infrastructureProvisioned: true });
    await createBootstrapSecret(client, ns.name, 'bootstrap-data');
    const name = unique('heartbeat');
    await createMachine(client, ns.name, {
      name,
      clusterName: 'hb',
      dataSecretName: 'bootstrap-data',
      devices: [{ name: 'eth0', addressesFromPools: [pool] }],
    });
    await readyMachine(ns.name, name);
    const node = await client.get(NODE_RESOURCE, { name });
    const readLease = async () => {
      try {
        return await client.get(LEASE_RESOURCE, { namespace: NODE_LEASE_NAMESPACE, name });
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    };
    const first = await eventually(`Lease ${NODE_LEASE_NAMESPACE}/${name}`, readLease);
    expect(first.spec).toMatchObject({ holderIdentity: name, leaseDurationSeconds: NODE_LEASE_DURATION_SECONDS });
    expect(first.metadata).toMatchObject({
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: node.metadata.uid }],
    });
    // Renewed by a later reconcile (the SimMachine is requeued for it), not only written once.
    const renewed = await eventually(`Lease ${name} renewed`, async () => {
      const lease = await readLease();
      return lease?.spec?.renewTime !== first.spec?.renewTime ? lease : undefined;
    });
    expect(Date.parse(renewed?.spec?.renewTime ?? '')).toBeGreaterThan(Date.parse(first.spec?.renewTime ?? ''));
    await client.delete(NODE_RESOURCE, { name });
  });

  it('waits for the cluster infrastructure and the bootstrap data before provisioning', async () => {
    const ns = await withTestNamespace(undefined, 'sim-gates');
    const { client } = providers;
    const pool = await createPool(client, ns.name, 'pool', { addresses: ['10.21.0.0/28'], prefix: 28 });
    await createCluster(client, ns.name, 'c2', { infrastructureProvisioned: false });
    const name = unique('gated');
    await createMachine(client, ns.name, { name, clusterName: 'c2', devices: [{ addressesFromPools: [pool] }] });

    const waitingForInfra = await eventually('WaitingForClusterInfrastructureReady', async () => {
      const simMachine = await getSimMachine(ns.name, name);
      return conditionOf(simMachine, 'InstanceProvisioned')?.reason === 'WaitingForClusterInfrastructureReady' &&
        conditionOf(simMachine, 'IPAddressesReady')?.status === 'True'
        ? simMachine
        : undefined;
    });
    // Addresses are claimed early (they do not depend on the cluster), but nothing is provisioned.
    expect(waitingForInfra.spec.providerID).toBeUndefined();
    expect(waitingForInfra.status?.initialization).toBeUndefined();
    expect(conditionOf(waitingForInfra, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'WaitingForClusterInfrastructureReady',
    });

    await client.mergePatch(
      CLUSTER_RESOURCE,
      { namespace: ns.name, name: 'c2' },
      { status: { initialization: { infrastructureProvisioned: true } } },
      { subresource: 'status' },
    );
    const waitingForBootstrap = await eventually('WaitingForBootstrapData', async () => {
      const simMachine = await getSimMachine(ns.name, name);
      return conditionOf(simMachine, 'InstanceProvisioned')?.reason === 'WaitingForBootstrapData'
        ? simMachine
        : undefined;
    });
    expect(waitingForBootstrap.spec.providerID).toBeUndefined();
    expect(conditionOf(waitingForBootstrap, 'InstanceProvisioned')?.message).toBe(
      `no bootstrap data yet: Machine ${name} (spec.bootstrap.dataSecretName) is empty`,
    );

    await createBootstrapSecret(client, ns.name, 'late-bootstrap');
    await client.mergePatch(
      MACHINE_RESOURCE,
      { namespace: ns.name, name },
      { spec: { bootstrap: { dataSecretName: 'late-bootstrap' } } },
    );
    const ready = await readyMachine(ns.name, name);
    expect(ready.spec.providerID).toBe(`sim://${ns.name}/${name}`);
    await client.delete(NODE_RESOURCE, { name });
  });

  it('reports invalid IPAddresses from another IPAM provider, naming the claim and the value', async () => {
    const ns = await withTestNamespace(undefined, 'sim-invalid');
    const { client } = providers;
    // A pool kind no controller here serves: the test plays that IPAM provider and hands out bad addresses.
    const pool = { apiGroup: 'ipam.example.com', kind: 'ExamplePool', name: 'bad' };
    await createCluster(client, ns.name, 'c3', { infrastructureProvisioned: true });
    await createBootstrapSecret(client, ns.name, 'bootstrap-data');
    const name = unique('invalid');
    await createMachine(client, ns.name, {
      name,
      clusterName: 'c3',
      dataSecretName: 'bootstrap-data',
      devices: [
        { name: 'eth0', addressesFromPools: [pool] },
        { name: 'eth1', addressesFromPools: [pool, pool] },
      ],
    });
    const bind = async (claimName: string, spec: { address: string; prefix: number; gateway?: string }) => {
      const claim = await eventually(`claim ${claimName}`, () =>
        client.get(CLAIM_RESOURCE, { namespace: ns.name, name: claimName }),
      );
      await client.create(ADDRESS_RESOURCE, {
        apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
        kind: 'IPAddress',
        metadata: { name: claimName, namespace: ns.name },
        spec: { claimRef: { name: claimName }, poolRef: pool, ...spec },
      });
      await client.patchStatus(CLAIM_RESOURCE, claim, { addressRef: { name: claimName } });
    };
    await bind(`${name}-eth0-0`, { address: '10.30.0.5', prefix: 24 });
    await bind(`${name}-eth1-0`, { address: '10.30.0.5', prefix: 24 });
    await bind(`${name}-eth1-1`, { address: '10.30.1.7', prefix: 24, gateway: 'fd00::1' });

    const reported = await eventually('IPAddressInvalid', async () => {
      const simMachine = await getSimMachine(ns.name, name);
      const condition = conditionOf(simMachine, 'IPAddressesReady');
      // The duplicate shows as soon as two claims are bound; wait until the third one is in too.
      return condition?.reason === 'IPAddressInvalid' && condition.message.includes(`${name}-eth1-1`)
        ? simMachine
        : undefined;
    });
    expect(conditionOf(reported, 'IPAddressesReady')?.message).toBe(
      [
        `IPAddressClaim ${name}-eth1-1 (device eth1): gateway fd00::1 is IPv6 but address 10.30.1.7 is IPv4`,
        `address 10.30.0.5 is handed out twice: IPAddressClaim ${name}-eth0-0 (device eth0) and IPAddressClaim ${name}-eth1-0 (device eth1)`,
      ].join('; '),
    );
    expect(conditionOf(reported, 'Ready')).toMatchObject({ status: 'False' });
    // Bad addresses are never used: no instance, no addresses reported to CAPI.
    expect(reported.spec.providerID).toBeUndefined();
    expect(reported.status?.addresses).toBeUndefined();
  });

  it('refuses to adopt a claim of its name that something else controls', async () => {
    const ns = await withTestNamespace(undefined, 'sim-conflict');
    const { client } = providers;
    const pool = await createPool(client, ns.name, 'pool', { addresses: ['10.22.0.0/28'], prefix: 28 });
    await createCluster(client, ns.name, 'c4', { infrastructureProvisioned: true });
    const name = unique('conflict');
    await client.create(CLAIM_RESOURCE, {
      apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
      kind: 'IPAddressClaim',
      metadata: { name: `${name}-0-0`, namespace: ns.name },
      spec: { clusterName: 'c4', poolRef: pool },
    });
    await createMachine(client, ns.name, { name, clusterName: 'c4', devices: [{ addressesFromPools: [pool] }] });
    const reported = await eventually('IPAddressClaimConflict', async () => {
      const simMachine = await getSimMachine(ns.name, name);
      return conditionOf(simMachine, 'IPAddressesReady')?.reason === 'IPAddressClaimConflict' ? simMachine : undefined;
    });
    expect(conditionOf(reported, 'IPAddressesReady')?.message).toBe(
      `IPAddressClaim ${name}-0-0 exists but is not controlled by this SimMachine (it has no controller); delete or rename it`,
    );
    const claim = await client.get(CLAIM_RESOURCE, { namespace: ns.name, name: `${name}-0-0` });
    expect(claim.metadata.ownerReferences).toBeUndefined();
  });

  it('on deletion deletes its claims, waits until they are gone, then lets go', async () => {
    const ns = await withTestNamespace(undefined, 'sim-delete');
    const { client } = providers;
    const pool = await createPool(client, ns.name, 'pool', { addresses: ['10.23.0.0/28'], prefix: 28 });
    await createCluster(client, ns.name, 'c5', { infrastructureProvisioned: true });
    await createBootstrapSecret(client, ns.name, 'bootstrap-data');
    const name = unique('doomed');
    await createMachine(client, ns.name, {
      name,
      clusterName: 'c5',
      dataSecretName: 'bootstrap-data',
      devices: [{ name: 'eth0', addressesFromPools: [pool, pool] }],
    });
    await readyMachine(ns.name, name);
    const claimNames = [`${name}-eth0-0`, `${name}-eth0-1`];
    // A finalizer only the test removes keeps one claim around, to see the SimMachine wait for it.
    await editClaimFinalizers(ns.name, claimNames[0] ?? '', (finalizers) => [...finalizers, 'test.sim/hold']);

    await client.delete(SIM_MACHINE_RESOURCE, { namespace: ns.name, name });

    const waiting = await eventually('SimMachine waiting for its held claim', async () => {
      const simMachine = await getSimMachine(ns.name, name);
      const ready = conditionOf(simMachine, 'Ready');
      return ready?.reason === 'Deleting' && ready.message.includes(claimNames[0] ?? '') ? simMachine : undefined;
    });
    expect(waiting.metadata.deletionTimestamp).toBeDefined();
    expect(waiting.metadata.finalizers).toContain(SIM_MACHINE_FINALIZER);
    const heldNow: StoredClaim = await client.get(CLAIM_RESOURCE, { namespace: ns.name, name: claimNames[0] ?? '' });
    expect(heldNow.metadata.deletionTimestamp).toBeDefined();

    await editClaimFinalizers(ns.name, heldNow.metadata.name, (finalizers) =>
      finalizers.filter((finalizer) => finalizer !== 'test.sim/hold'),
    );
    await eventually('SimMachine gone', async () => {
      try {
        await getSimMachine(ns.name, name);
        return undefined;
      } catch (error) {
        return isNotFound(error) ? true : undefined;
      }
    });
    for (const claimName of claimNames) {
      await expect(client.get(CLAIM_RESOURCE, { namespace: ns.name, name: claimName })).rejects.toSatisfy(isNotFound);
      await expect(client.get(ADDRESS_RESOURCE, { namespace: ns.name, name: claimName })).rejects.toSatisfy(isNotFound);
    }
    // The instance is gone, so is its Node.
    await expect(client.get(NODE_RESOURCE, { name })).rejects.toSatisfy(isNotFound);
  });

  it('pauses with its Cluster and resumes when the Cluster is unpaused', async () => {
    const ns = await withTestNamespace(undefined, 'sim-pause');
    const { client } = providers;
    const pool = await createPool(client, ns.name, 'pool', { addresses: ['10.24.0.0/28'], prefix: 28 });
    await createCluster(client, ns.name, 'c6', { infrastructureProvisioned: true, paused: true });
    await createBootstrapSecret(client, ns.name, 'bootstrap-data');
    const name = unique('paused');
    await createMachine(client, ns.name, {
      name,
      clusterName: 'c6',
      dataSecretName: 'bootstrap-data',
      devices: [{ addressesFromPools: [pool] }],
    });
    const paused = await eventually('Paused condition', async () => {
      const simMachine = await getSimMachine(ns.name, name);
      return conditionOf(simMachine, 'Paused')?.status === 'True' ? simMachine : undefined;
    });
    // The reconcile that wrote Paused stopped right there: no finalizer, no claim, no instance.
    expect(conditionOf(paused, 'Paused')).toMatchObject({ reason: 'Paused', message: 'Cluster spec.paused is set' });
    expect(paused.metadata.finalizers).toBeUndefined();
    expect(paused.spec.providerID).toBeUndefined();
    await expect(client.get(CLAIM_RESOURCE, { namespace: ns.name, name: `${name}-0-0` })).rejects.toSatisfy(isNotFound);

    await client.mergePatch(CLUSTER_RESOURCE, { namespace: ns.name, name: 'c6' }, { spec: { paused: false } });
    const resumed = await readyMachine(ns.name, name);
    expect(conditionOf(resumed, 'Paused')).toMatchObject({ status: 'False', reason: 'NotPaused' });
    expect(resumed.spec.providerID).toBe(`sim://${ns.name}/${name}`);
    await client.delete(NODE_RESOURCE, { name });
  });
});
