import { addressEntryKey } from '@tally-ipam/ledger';
import { describe, expect, it } from 'vitest';
import {
  ADDRESS_FINALIZER,
  ADDRESS_RESOURCE,
  CLAIM_FINALIZER,
  CLAIM_RESOURCE,
  CLUSTER_RESOURCE,
  POOL_FINALIZER,
  POOL_RESOURCES,
} from '../src/index.js';
import {
  createClaim,
  createCluster,
  createPool,
  getHolding,
  getOrUndefined,
  readyCondition,
  useTestFile,
  waitFor,
  waitForAddress,
  waitForGone,
  waitForNoHolding,
  waitForReason,
} from './support.js';

const { client, namespace } = useTestFile({ provider: {} });

describe('a claim against a TallyIPPool', () => {
  it('gets the lowest free address: finalizers, owner references, labels, spec, status and a ledger entry', async () => {
    const ns = await namespace('claim-basic');
    const pool = await createPool(client, 'TallyIPPool', 'pool', ns, {
      addresses: ['10.10.0.0/24'],
      prefix: 24,
      gateway: '10.10.0.1',
    });
    await createCluster(client, ns, 'c1');
    const claim = await createClaim(
      client,
      ns,
      'machine-0',
      { kind: 'TallyIPPool', name: 'pool' },
      {
        clusterName: 'c1',
        labels: { 'cluster.x-k8s.io/cluster-name': 'c1' },
      },
    );

    const address = await waitForAddress(client, ns, 'machine-0');
    expect(address.metadata.name).toBe('machine-0');
    expect(address.spec).toEqual({
      address: '10.10.0.2',
      prefix: 24,
      gateway: '10.10.0.1',
      poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: 'pool' },
      claimRef: { name: 'machine-0' },
    });
    expect(address.metadata.finalizers).toEqual([ADDRESS_FINALIZER]);
    expect(address.metadata.labels?.['cluster.x-k8s.io/cluster-name']).toBe('c1');
    expect(address.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        kind: 'IPAddressClaim',
        uid: claim.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      }),
      expect.objectContaining({
        kind: 'TallyIPPool',
        uid: pool.metadata.uid,
        controller: false,
        blockOwnerDeletion: true,
      }),
    ]);

    const stored = await client.get(CLAIM_RESOURCE, { namespace: ns, name: 'machine-0' });
    expect(stored.metadata.finalizers).toContain(CLAIM_FINALIZER);
    expect(stored.status?.addressRef).toEqual({ name: 'machine-0' });
    expect(readyCondition(stored)).toMatchObject({
      status: 'True',
      reason: 'AddressAllocated',
      message: expect.stringContaining('10.10.0.2'),
      observedGeneration: stored.metadata.generation,
    });

    const holding = await getHolding(client, addressEntryKey('10.10.0.2'));
    expect(holding.spec).toMatchObject({
      address: '10.10.0.2',
      poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: 'pool', namespace: ns },
      claimRef: { namespace: ns, name: 'machine-0', uid: claim.metadata.uid },
    });

    const counted = await waitFor('pool status counts', async () => {
      const current = await client.get(POOL_RESOURCES.TallyIPPool, { namespace: ns, name: 'pool' });
      const status = current.status as { ipAddresses?: { used: number } } | undefined;
      return status?.ipAddresses?.used === 1 ? current : undefined;
    });
    expect(counted.metadata.finalizers).toContain(POOL_FINALIZER);
    expect(counted.status).toMatchObject({
      ipAddresses: { total: 253, used: 1, free: 252, outOfRange: 0 },
      observedGeneration: counted.metadata.generation,
      conditions: [expect.objectContaining({ type: 'Ready', status: 'True', reason: 'PoolReady' })],
    });
  });

  it('on deletion releases the address: IPAddress and ledger entry gone, claim finalizer removed, address reused', async () => {
    const ns = await namespace('claim-delete');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.11.0.10-10.11.0.20'], prefix: 24 });
    await createClaim(client, ns, 'a', { kind: 'TallyIPPool', name: 'pool' });
    const first = await waitForAddress(client, ns, 'a');
    expect(first.spec.address).toBe('10.11.0.10');

    await client.delete(CLAIM_RESOURCE, { namespace: ns, name: 'a' });
    await waitForGone('claim a', () => client.get(CLAIM_RESOURCE, { namespace: ns, name: 'a' }));
    expect(await getOrUndefined(() => client.get(ADDRESS_RESOURCE, { namespace: ns, name: 'a' }))).toBeUndefined();
    // The entry's release is written in the background, within a few seconds of the claim going (README, "Releases").
    await waitForNoHolding('the entry of 10.11.0.10 released', client, addressEntryKey('10.11.0.10'));

    await createClaim(client, ns, 'b', { kind: 'TallyIPPool', name: 'pool' });
    expect((await waitForAddress(client, ns, 'b')).spec.address).toBe('10.11.0.10');
  });

  it('releases the address when the Cluster no longer exists', async () => {
    const ns = await namespace('claim-nocluster');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.12.0.10-10.12.0.20'], prefix: 24 });
    await createCluster(client, ns, 'gone');
    await createClaim(client, ns, 'a', { kind: 'TallyIPPool', name: 'pool' }, { clusterName: 'gone' });
    await waitForAddress(client, ns, 'a');
    await client.delete(CLUSTER_RESOURCE, { namespace: ns, name: 'gone' });
    await waitForGone('cluster', () => client.get(CLUSTER_RESOURCE, { namespace: ns, name: 'gone' }));
    await client.delete(CLAIM_RESOURCE, { namespace: ns, name: 'a' });
    await waitForGone('claim a', () => client.get(CLAIM_RESOURCE, { namespace: ns, name: 'a' }));
    await waitForNoHolding('the entry of 10.12.0.10 released', client, addressEntryKey('10.12.0.10'));
  });

  it('re-creates a deleted IPAddress with the identical address while the claim lives', async () => {
    const ns = await namespace('claim-recreate');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.13.0.0/28'], prefix: 28 });
    await createClaim(client, ns, 'a', { kind: 'TallyIPPool', name: 'pool' });
    await createClaim(client, ns, 'b', { kind: 'TallyIPPool', name: 'pool' });
    const before = await waitForAddress(client, ns, 'b');
    await waitForAddress(client, ns, 'a');

    await client.delete(ADDRESS_RESOURCE, { namespace: ns, name: 'b' });
    const after = await waitFor('a new IPAddress b', async () => {
      const current = await getOrUndefined(() => client.get(ADDRESS_RESOURCE, { namespace: ns, name: 'b' }));
      return current && current.metadata.uid !== before.metadata.uid ? current : undefined;
    });
    expect(after.spec).toEqual(before.spec);
    const claim = await client.get(CLAIM_RESOURCE, { namespace: ns, name: 'b' });
    expect(readyCondition(claim)?.status).toBe('True');
  });

  it('waits on an exhausted pool with PoolExhausted and gets the address freed by a release', async () => {
    const ns = await namespace('claim-exhaust');
    await createPool(client, 'TallyIPPool', 'tiny', ns, { addresses: ['10.14.0.5-10.14.0.6'], prefix: 24 });
    await createClaim(client, ns, 'a', { kind: 'TallyIPPool', name: 'tiny' });
    await createClaim(client, ns, 'b', { kind: 'TallyIPPool', name: 'tiny' });
    const a = await waitForAddress(client, ns, 'a');
    const b = await waitForAddress(client, ns, 'b');
    expect(new Set([a.spec.address, b.spec.address])).toEqual(new Set(['10.14.0.5', '10.14.0.6']));

    await createClaim(client, ns, 'c', { kind: 'TallyIPPool', name: 'tiny' });
    const waiting = await waitForReason(client, ns, 'c', 'PoolExhausted');
    expect(readyCondition(waiting)).toMatchObject({ status: 'False', message: expect.stringContaining('exhausted') });
    const exhaustedPool = await waitFor('pool Ready=False PoolExhausted', async () => {
      const pool = await client.get(POOL_RESOURCES.TallyIPPool, { namespace: ns, name: 'tiny' });
      const status = pool.status as { conditions?: { type: string; reason: string }[] } | undefined;
      return status?.conditions?.find((c) => c.type === 'Ready')?.reason === 'PoolExhausted' ? pool : undefined;
    });
    expect(exhaustedPool.status).toMatchObject({ ipAddresses: { total: 2, used: 2, free: 0 } });

    await client.delete(CLAIM_RESOURCE, { namespace: ns, name: 'a' });
    const c = await waitForAddress(client, ns, 'c');
    expect(c.spec.address).toBe(a.spec.address);
  });

  it('reports PoolNotReady for a missing pool, and allocates once the pool is created', async () => {
    const ns = await namespace('claim-nopool');
    await createClaim(client, ns, 'a', { kind: 'TallyIPPool', name: 'later' });
    const waiting = await waitForReason(client, ns, 'a', 'PoolNotReady');
    expect(readyCondition(waiting)?.message).toContain(`TallyIPPool ${ns}/later does not exist`);
    await createPool(client, 'TallyIPPool', 'later', ns, { addresses: ['10.15.0.1'], prefix: 24 });
    expect((await waitForAddress(client, ns, 'a')).spec.address).toBe('10.15.0.1');
  });

  it('ignores claims of other providers and claims naming a Tally kind under another group', async () => {
    const ns = await namespace('claim-foreign');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.16.0.0/24'], prefix: 24 });
    await client.create(CLAIM_RESOURCE, {
      apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
      kind: 'IPAddressClaim',
      metadata: { name: 'other-group', namespace: ns },
      spec: { poolRef: { apiGroup: 'example.com', kind: 'TallyIPPool', name: 'pool' } },
    });
    await createClaim(client, ns, 'ours', { kind: 'TallyIPPool', name: 'pool' });
    await waitForAddress(client, ns, 'ours');
    const other = await client.get(CLAIM_RESOURCE, { namespace: ns, name: 'other-group' });
    expect(other.metadata.finalizers ?? []).toEqual([]);
    expect(other.status).toBeUndefined();
  });
});
