/**
 * The Metal3 controllers on the real API server: the proposal's examples, pre-allocations, reuse of an existing
 * IPAddress, errors naming field and value, pause through the Cluster, deletion. One process serves the file's
 * namespaces; each test uses a /24 of its own, so the ledgers of other files' tests never interfere.
 */
import { readFileSync } from 'node:fs';
import {
  CLUSTER_RESOURCE,
  METAL3_IP_ADDRESS_FINALIZER,
  METAL3_IP_CLAIM_FINALIZER,
  METAL3_IP_POOL_FINALIZER,
} from '@tally-ipam/api-types';
import type { Client } from '@tally-ipam/controller-kit/client';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { parse } from 'yaml';
import { METAL3_ADDRESS_RESOURCE, METAL3_CLAIM_RESOURCE, METAL3_POOL_RESOURCE } from '../src/index.js';
import {
  addressesOf,
  createClaim,
  createPool,
  ledgerEntries,
  type RunningMetal3,
  startMetal3,
  TestNamespaces,
  testClient,
  waitFor,
  waitForAddress,
  waitForError,
} from './support.js';

const namespaces = new TestNamespaces();
let client: Client;
let namespace: string;
let metal3: RunningMetal3;

beforeAll(async () => {
  client = testClient();
  namespace = await namespaces.create('metal3-claims');
  metal3 = await startMetal3({ namespace });
});

afterAll(async () => {
  await metal3?.stop();
  await namespaces.deleteAll();
  client?.close();
});

function proposalExample(kind: 'ippool' | 'ipclaim'): {
  metadata: Record<string, unknown>;
  spec: Record<string, unknown>;
} {
  return parse(readFileSync(new URL(`./fixtures/proposal-${kind}.yaml`, import.meta.url), 'utf8'));
}

async function createCluster(name: string, paused: boolean): Promise<void> {
  await client.create(CLUSTER_RESOURCE, {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Cluster',
    metadata: { name, namespace },
    spec: { paused },
  });
}

async function entryOf(
  address: string,
): Promise<{ claimRef: Record<string, unknown>; poolRef: Record<string, unknown> } | undefined> {
  return (await ledgerEntries(client)).find((entry) => entry.address === address);
}

describe('the proposal examples', () => {
  // Adapted only as any API server demands: lower-case object names, no owner references without uid (the
  // Metal3Cluster and Data owners are not served here), a test namespace instead of `default`. The IPPool spec is
  // applied unchanged; its pre-allocations have upper-case keys, so no IPClaim can ever be named after them.
  it('serve RenderedData-1 from pool-1 as the proposal describes, with Metal3 names, owners, finalizers and status', async () => {
    await createCluster('cluster-1', false);
    const poolExample = proposalExample('ippool');
    await createPool(client, namespace, 'pool-1', poolExample.spec);
    const claimExample = proposalExample('ipclaim');
    const claim = await createClaim(
      client,
      namespace,
      'rendereddata-1',
      (claimExample.spec.pool as { name: string }).name,
    );

    const address = await waitForAddress(client, namespace, 'rendereddata-1');
    const pool = await client.get(METAL3_POOL_RESOURCE, { namespace, name: 'pool-1' });
    // The first free address of the first range (.10–.15), named `<namePrefix>-<address>`.
    expect(address.metadata.name).toBe('provisioning-192-168-0-10');
    expect(address.spec).toEqual({
      address: '192.168.0.10',
      pool: { name: 'pool-1', namespace },
      claim: { name: 'rendereddata-1', namespace },
      prefix: 24,
      gateway: '192.168.0.1',
    });
    expect(address.metadata.finalizers).toEqual([METAL3_IP_ADDRESS_FINALIZER]);
    expect(address.metadata.ownerReferences).toEqual([
      { apiVersion: 'ipam.metal3.io/v1alpha1', kind: 'IPPool', name: 'pool-1', uid: pool.metadata.uid },
      { apiVersion: 'ipam.metal3.io/v1alpha1', kind: 'IPClaim', name: 'rendereddata-1', uid: claim.metadata.uid },
    ]);
    const served = await client.get(METAL3_CLAIM_RESOURCE, { namespace, name: 'rendereddata-1' });
    expect(served.metadata.finalizers).toEqual([METAL3_IP_CLAIM_FINALIZER]);
    expect(served.status).toEqual({ address: { name: 'provisioning-192-168-0-10', namespace } });

    // The pool: Metal3's finalizer, the Cluster's label and a non-controller owner reference to it, and the
    // allocations (wire name `indexes`) rebuilt from the IPAddresses.
    const settled = await waitFor('pool status with the allocation', async () => {
      const current = await client.get(METAL3_POOL_RESOURCE, { namespace, name: 'pool-1' });
      const status = current.status as { indexes?: Record<string, string>; lastUpdated?: string } | undefined;
      return status?.indexes?.['rendereddata-1'] ? current : undefined;
    });
    const cluster = await client.get(CLUSTER_RESOURCE, { namespace, name: 'cluster-1' });
    expect(settled.metadata.finalizers).toEqual([METAL3_IP_POOL_FINALIZER]);
    expect(settled.metadata.labels).toMatchObject({ 'cluster.x-k8s.io/cluster-name': 'cluster-1' });
    expect(settled.metadata.ownerReferences).toEqual([
      { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', name: 'cluster-1', uid: cluster.metadata.uid },
    ]);
    expect(settled.status).toMatchObject({ indexes: { 'rendereddata-1': '192.168.0.10' } });
    expect(Date.parse((settled.status as { lastUpdated: string }).lastUpdated)).not.toBeNaN();
    expect(settled.spec).toEqual(poolExample.spec);

    // The allocation is an entry of Tally's ledger, naming the Metal3 claim and pool.
    expect(await entryOf('192.168.0.10')).toMatchObject({
      claimRef: {
        apiGroup: 'ipam.metal3.io',
        kind: 'IPClaim',
        namespace,
        name: 'rendereddata-1',
        uid: claim.metadata.uid,
      },
      poolRef: { apiGroup: 'ipam.metal3.io', kind: 'IPPool', name: 'pool-1', namespace },
    });
  });
});

describe('allocation', () => {
  it('honours preAllocations, moves on to the next range, and names a pre-allocation it cannot honour', async () => {
    await createPool(client, namespace, 'pre', {
      namePrefix: 'pre',
      pools: [
        { start: '10.61.0.10', end: '10.61.0.11', prefix: 24, gateway: '10.61.0.1' },
        { start: '10.61.0.20', end: '10.61.0.29', prefix: 24, gateway: '10.61.0.1' },
      ],
      preAllocations: { 'claim-b': '10.61.0.25', 'claim-far': '10.61.1.1' },
    });
    for (const name of ['claim-a', 'claim-b', 'claim-c', 'claim-d']) await createClaim(client, namespace, name, 'pre');
    const got = new Map<string, string>();
    for (const name of ['claim-a', 'claim-b', 'claim-c', 'claim-d']) {
      got.set(name, (await waitForAddress(client, namespace, name)).spec.address ?? '');
    }
    expect(got.get('claim-b')).toBe('10.61.0.25');
    expect(new Set(got.values()).size).toBe(4);
    expect([...got.values()].filter((address) => address !== '10.61.0.25').sort()).toEqual([
      '10.61.0.10',
      '10.61.0.11',
      '10.61.0.20',
    ]);

    await createClaim(client, namespace, 'claim-far', 'pre');
    const message = await waitForError(client, namespace, 'claim-far', 'spec.preAllocations[claim-far]');
    expect(message).toContain('10.61.1.1');
  });

  it('reuses the IPAddress of a claim whose status was dropped, and one that existed before the claim (clusterctl move)', async () => {
    await createPool(client, namespace, 'reuse', {
      namePrefix: 'reuse',
      pools: [{ start: '10.62.0.10', end: '10.62.0.20' }],
      prefix: 24,
    });
    await createClaim(client, namespace, 'dropped', 'reuse');
    const first = await waitForAddress(client, namespace, 'dropped');
    await client.mergePatch(
      METAL3_CLAIM_RESOURCE,
      { namespace, name: 'dropped' },
      { status: { address: null } },
      { subresource: 'status' },
    );
    const again = await waitForAddress(client, namespace, 'dropped');
    expect(again.metadata.name).toBe(first.metadata.name);
    expect(again.metadata.uid).toBe(first.metadata.uid);

    // An IPAddress moved here without its claim (status discarded, ledgers not moved): the claim adopts it.
    const pool = await client.get(METAL3_POOL_RESOURCE, { namespace, name: 'reuse' });
    await client.create(METAL3_ADDRESS_RESOURCE, {
      apiVersion: 'ipam.metal3.io/v1alpha1',
      kind: 'IPAddress',
      metadata: {
        name: 'reuse-10-62-0-17',
        namespace,
        finalizers: [METAL3_IP_ADDRESS_FINALIZER],
        ownerReferences: [
          { apiVersion: 'ipam.metal3.io/v1alpha1', kind: 'IPPool', name: 'reuse', uid: pool.metadata.uid ?? '' },
        ],
      },
      spec: {
        address: '10.62.0.17',
        prefix: 24,
        pool: { name: 'reuse', namespace },
        claim: { name: 'moved', namespace },
      },
    });
    const moved = await createClaim(client, namespace, 'moved', 'reuse');
    const adopted = await waitForAddress(client, namespace, 'moved');
    expect(adopted.spec.address).toBe('10.62.0.17');
    await waitFor('the ledger entry of the moved address held for the claim', async () => {
      const entry = await entryOf('10.62.0.17');
      return entry?.claimRef.uid === moved.metadata.uid;
    });
    expect(
      (await addressesOf(client, namespace)).filter((address) => address.spec.claim?.name === 'moved'),
    ).toHaveLength(1);
  });

  it('writes errors to status.errorMessage naming the field and the value', async () => {
    await createClaim(client, namespace, 'no-pool', 'missing');
    expect(await waitForError(client, namespace, 'no-pool', 'spec.pool.name')).toBe(
      `spec.pool.name: IPPool ${namespace}/missing not found`,
    );

    // Admitted by the CRD, refused by the translation: the range crosses the network of its /24.
    await createPool(client, namespace, 'crossing', {
      namePrefix: 'crossing',
      pools: [{ start: '10.63.0.250', end: '10.63.1.5', prefix: 24 }],
    });
    await createClaim(client, namespace, 'on-crossing', 'crossing');
    const invalid = await waitForError(client, namespace, 'on-crossing', 'spec.pools[0]');
    expect(invalid).toContain(`IPPool ${namespace}/crossing cannot be served`);
    expect(invalid).toContain('10.63.0.250');

    await createPool(client, namespace, 'single', {
      namePrefix: 'single',
      pools: [{ start: '10.63.2.5', end: '10.63.2.5' }],
    });
    await createClaim(client, namespace, 'first', 'single');
    await waitForAddress(client, namespace, 'first');
    await createClaim(client, namespace, 'second', 'single');
    expect(await waitForError(client, namespace, 'second', 'no free address')).toContain(
      'no free address for claim second in the 1 range(s) of spec.pools',
    );
    // Freed, the address goes to the waiting claim, and its error is cleared.
    await client.delete(METAL3_CLAIM_RESOURCE, { namespace, name: 'first' });
    const handedOver = await waitForAddress(client, namespace, 'second');
    expect(handedOver.spec.address).toBe('10.63.2.5');
    const second = await client.get(METAL3_CLAIM_RESOURCE, { namespace, name: 'second' });
    expect(second.status?.errorMessage).toBeUndefined();
  });
});

describe('pause and deletion', () => {
  it('waits while the Cluster of the pool is paused or the claim is annotated, and serves once unpaused', async () => {
    await createCluster('paused-cluster', true);
    await createPool(client, namespace, 'paused-pool', {
      clusterName: 'paused-cluster',
      namePrefix: 'paused',
      pools: [{ start: '10.64.0.10', end: '10.64.0.20' }],
    });
    await createClaim(client, namespace, 'waits', 'paused-pool');
    await createClaim(client, namespace, 'annotated', 'witness', {
      annotations: { 'cluster.x-k8s.io/paused': '' },
    });
    // A claim that is served meanwhile proves the controller ran past both.
    await createPool(client, namespace, 'witness', {
      namePrefix: 'witness',
      pools: [{ start: '10.64.1.10', end: '10.64.1.20' }],
    });
    await createClaim(client, namespace, 'witness', 'witness');
    await waitForAddress(client, namespace, 'witness');
    const waiting = await client.get(METAL3_CLAIM_RESOURCE, { namespace, name: 'waits' });
    expect(waiting.metadata.finalizers).toBeUndefined();
    expect(waiting.status).toBeUndefined();
    const annotated = await client.get(METAL3_CLAIM_RESOURCE, { namespace, name: 'annotated' });
    expect(annotated.status).toBeUndefined();

    await client.mergePatch(CLUSTER_RESOURCE, { namespace, name: 'paused-cluster' }, { spec: { paused: false } });
    expect((await waitForAddress(client, namespace, 'waits')).spec.address).toBe('10.64.0.10');
  });

  it('deletes the IPAddress and releases the entry only once no other finalizer holds the claim', async () => {
    await createPool(client, namespace, 'gone', {
      namePrefix: 'gone',
      pools: [{ start: '10.65.0.10', end: '10.65.0.20' }],
    });
    await createClaim(client, namespace, 'held', 'gone', { finalizers: ['example.com/in-use'] });
    const address = await waitForAddress(client, namespace, 'held');
    await client.delete(METAL3_CLAIM_RESOURCE, { namespace, name: 'held' });
    // A pool with an IPAddress naming it keeps its finalizer when deleted.
    await client.delete(METAL3_POOL_RESOURCE, { namespace, name: 'gone' });
    await createClaim(client, namespace, 'witness-2', 'witness');
    await waitForAddress(client, namespace, 'witness-2');
    const kept = await client.get(METAL3_ADDRESS_RESOURCE, { namespace, name: address.metadata.name });
    expect(kept.metadata.deletionTimestamp).toBeUndefined();
    expect((await client.get(METAL3_POOL_RESOURCE, { namespace, name: 'gone' })).metadata.finalizers).toEqual([
      METAL3_IP_POOL_FINALIZER,
    ]);

    const claim = await client.get(METAL3_CLAIM_RESOURCE, { namespace, name: 'held' });
    await client.mergePatch(
      METAL3_CLAIM_RESOURCE,
      { namespace, name: 'held' },
      { metadata: { resourceVersion: claim.metadata.resourceVersion, finalizers: [METAL3_IP_CLAIM_FINALIZER] } },
    );
    await waitFor('claim, IPAddress, ledger entry and pool gone', async () => {
      const remaining = await addressesOf(client, namespace);
      const entry = await entryOf('10.65.0.10');
      const pools = (await client.list(METAL3_POOL_RESOURCE, { namespace })).items;
      return (
        !remaining.some((item) => item.metadata.name === address.metadata.name) &&
        entry === undefined &&
        !pools.some((pool) => pool.metadata.name === 'gone')
      );
    });
  });
});

describe('ledgersComplete', () => {
  // A gate of the embedding process: no IPClaim gets a new address before the ledgers hold everything.
  it('holds back every new allocation until it resolves, while the claim is already finalized', async () => {
    const gated = await namespaces.create('metal3-gate');
    let open: (value: unknown) => void = () => undefined;
    const gate = new Promise((resolve) => {
      open = resolve;
    });
    const process = await startMetal3({ namespace: gated, ledgersComplete: () => gate });
    onTestFinished(async () => {
      open(undefined); // A worker waiting at the gate would hold the manager's shutdown.
      await process.stop();
    });
    await createPool(client, gated, 'pool', {
      namePrefix: 'pool',
      pools: [{ start: '10.67.0.10', end: '10.67.0.20' }],
    });
    await createClaim(client, gated, 'waits', 'pool');
    await waitFor('the claim finalized', async () => {
      const claim = await client.get(METAL3_CLAIM_RESOURCE, { namespace: gated, name: 'waits' });
      return claim.metadata.finalizers?.includes(METAL3_IP_CLAIM_FINALIZER);
    });
    expect(await addressesOf(client, gated)).toHaveLength(0);
    expect((await client.get(METAL3_CLAIM_RESOURCE, { namespace: gated, name: 'waits' })).status).toBeUndefined();

    open(undefined);
    expect((await waitForAddress(client, gated, 'waits')).spec.address).toBe('10.67.0.10');
  });
});
