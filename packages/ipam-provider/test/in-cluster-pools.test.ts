import { parseIP } from '@tally-ipam/allocator';
import {
  CLUSTER_NAME_LABEL,
  GLOBAL_IN_CLUSTER_IP_POOL_KIND,
  IN_CLUSTER_IP_POOL_KIND,
  IN_CLUSTER_PROTECT_ADDRESS_FINALIZER,
  IN_CLUSTER_PROTECT_POOL_FINALIZER,
  IN_CLUSTER_RELEASE_ADDRESS_FINALIZER,
  IPAM_GROUP,
  TALLY_IP_POOL_KIND,
} from '@tally-ipam/api-types';
import { ownerReferenceTo } from '@tally-ipam/controller-kit';
import { addressEntryKey } from '@tally-ipam/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADDRESS_RESOURCE, CLAIM_RESOURCE, POOL_RESOURCES, type StoredAddress } from '../src/index.js';
import { filterValue, inClusterHelpers } from './in-cluster-support.js';
import {
  createCluster,
  createPool,
  getHolding,
  getOrUndefined,
  type RunningProvider,
  readyCondition,
  startProvider,
  useTestFile,
  waitFor,
  waitForAddress,
  waitForGone,
  waitForNoHolding,
  waitForReason,
} from './support.js';

const { client, namespace } = useTestFile();
const { createInClusterPool, claimFrom, poolNow, waitForCounts } = inClusterHelpers(client);

/** A provider of its own watch filter, started in `beforeAll` and stopped in `afterAll` of the calling describe. */
function useProvider(filter: string, inClusterIPAM: boolean): () => RunningProvider {
  let running: RunningProvider | undefined;
  beforeAll(async () => {
    running = await startProvider({ watchFilter: filter, inClusterIPAM }, `tally-in-cluster-${filter}`);
  });
  afterAll(async () => {
    await running?.stop();
  });
  return () => {
    if (!running) throw new Error('the provider has not started');
    return running;
  };
}

function addressesOf(addresses: readonly StoredAddress[]): string[] {
  return addresses.map((address) => address.spec.address);
}

describe('InClusterIPPool and GlobalInClusterIPPool, served', () => {
  const filter = filterValue('in-cluster');
  useProvider(filter, true);

  it('hands out the lowest free address, writes the reference IPAddress shape, counts, releases and protects', async () => {
    const ns = await namespace('in-cluster-ip');
    await createCluster(client, ns, 'workload');
    // /29 with a gateway: .0 (network), .1 (gateway) and .7 (broadcast) are never handed out, .2–.6 are.
    await createInClusterPool(IN_CLUSTER_IP_POOL_KIND, 'nodes', ns, {
      addresses: ['10.130.0.0/29'],
      prefix: 29,
      gateway: '10.130.0.1',
    });
    const pool = { kind: IN_CLUSTER_IP_POOL_KIND, name: 'nodes' };
    const first = await claimFrom(ns, 'm-0', pool, filter, { clusterName: 'workload' });
    const a0 = await waitForAddress(client, ns, 'm-0');
    await claimFrom(ns, 'm-1', pool, filter, { clusterName: 'workload' });
    const a1 = await waitForAddress(client, ns, 'm-1');
    expect([a0.spec.address, a1.spec.address]).toEqual(['10.130.0.2', '10.130.0.3']);

    // Row 22: the claim's name, the claim as controller, the pool with blockOwnerDeletion, the cluster-name label.
    const stored = await poolNow(IN_CLUSTER_IP_POOL_KIND, 'nodes', ns);
    expect(a0.metadata.name).toBe('m-0');
    expect(a0.metadata.labels?.[CLUSTER_NAME_LABEL]).toBe('workload');
    expect(a0.spec).toMatchObject({
      prefix: 29,
      gateway: '10.130.0.1',
      poolRef: { apiGroup: IPAM_GROUP, kind: IN_CLUSTER_IP_POOL_KIND, name: 'nodes' },
      claimRef: { name: 'm-0' },
    });
    expect(a0.metadata.ownerReferences).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'IPAddressClaim', uid: first.metadata.uid, controller: true }),
        expect.objectContaining({
          kind: IN_CLUSTER_IP_POOL_KIND,
          uid: stored.metadata.uid,
          blockOwnerDeletion: true,
        }),
      ]),
    );
    // The reference's finalizer strings on all three objects, none of Tally's own.
    expect(a0.metadata.finalizers).toEqual([IN_CLUSTER_PROTECT_ADDRESS_FINALIZER]);
    const claim = await client.get(CLAIM_RESOURCE, { namespace: ns, name: 'm-0' });
    expect(claim.metadata.finalizers).toEqual([IN_CLUSTER_RELEASE_ADDRESS_FINALIZER]);
    expect(claim.status?.addressRef?.name).toBe('m-0');

    // Only status.ipAddresses: the reference's status has no conditions.
    const counted = await waitForCounts(IN_CLUSTER_IP_POOL_KIND, 'nodes', ns, {
      total: 5,
      used: 2,
      free: 3,
      outOfRange: 0,
    });
    expect(Object.keys((counted.status as Record<string, unknown>) ?? {})).toEqual(['ipAddresses']);
    expect(counted.metadata.finalizers).toEqual([IN_CLUSTER_PROTECT_POOL_FINALIZER]);

    // Release on claim delete: the IPAddress and the claim go, and the address is the lowest free again.
    await client.delete(CLAIM_RESOURCE, { namespace: ns, name: 'm-0' });
    await waitForGone('the claim m-0', () => client.get(CLAIM_RESOURCE, { namespace: ns, name: 'm-0' }));
    await waitForGone('the IPAddress m-0', () => client.get(ADDRESS_RESOURCE, { namespace: ns, name: 'm-0' }));
    await waitForCounts(IN_CLUSTER_IP_POOL_KIND, 'nodes', ns, { total: 5, used: 1, free: 4, outOfRange: 0 });
    // The counts follow the IPAddresses; the ledger entry's release is written in the background (coalesced, within
    // a few seconds), and until then the address is not free to Tally.
    await waitForNoHolding('the entry of 10.130.0.2 released', client, addressEntryKey(parseIP('10.130.0.2')));
    await claimFrom(ns, 'm-2', pool, filter, { clusterName: 'workload' });
    expect((await waitForAddress(client, ns, 'm-2')).spec.address).toBe('10.130.0.2');

    // The pool finalizer keeps a pool with IPAddresses until they are gone.
    await client.delete(POOL_RESOURCES[IN_CLUSTER_IP_POOL_KIND], { namespace: ns, name: 'nodes' });
    const deleting = await poolNow(IN_CLUSTER_IP_POOL_KIND, 'nodes', ns);
    expect(deleting.metadata.deletionTimestamp).toBeDefined();
    expect(deleting.metadata.finalizers).toEqual([IN_CLUSTER_PROTECT_POOL_FINALIZER]);
    for (const name of ['m-1', 'm-2']) await client.delete(CLAIM_RESOURCE, { namespace: ns, name });
    await waitForGone('the deleted InClusterIPPool', () => poolNow(IN_CLUSTER_IP_POOL_KIND, 'nodes', ns));
    expect((await client.listAll(ADDRESS_RESOURCE, { namespace: ns })).items).toEqual([]);
  });

  it('serves a GlobalInClusterIPPool to claims of any namespace, with the point-to-point rule and a zoned gateway', async () => {
    const one = await namespace('in-cluster-global-a');
    const two = await namespace('in-cluster-global-b');
    const name = filterValue('shared');
    await createInClusterPool(GLOBAL_IN_CLUSTER_IP_POOL_KIND, name, undefined, {
      addresses: ['10.131.0.8/29'],
      prefix: 29,
      gateway: '10.131.0.9',
    });
    const pool = { kind: GLOBAL_IN_CLUSTER_IP_POOL_KIND, name };
    await claimFrom(one, 'vip', pool, filter);
    const first = await waitForAddress(client, one, 'vip');
    await claimFrom(two, 'vip', pool, filter);
    const second = await waitForAddress(client, two, 'vip');
    expect([first.spec.address, second.spec.address]).toEqual(['10.131.0.10', '10.131.0.11']);
    await waitForCounts(GLOBAL_IN_CLUSTER_IP_POOL_KIND, name, undefined, {
      total: 5,
      used: 2,
      free: 3,
      outOfRange: 0,
    });

    // Row 1, point-to-point: the reference removes an IPv6 /127's first address (one is left), and an IPv4 /32's
    // only one (the pool is empty); Tally's own pools reserve nothing there.
    const v6 = filterValue('v6');
    await createInClusterPool(GLOBAL_IN_CLUSTER_IP_POOL_KIND, v6, undefined, {
      addresses: ['fd00:131::10/127'],
      prefix: 127,
    });
    await claimFrom(one, 'v6', { kind: GLOBAL_IN_CLUSTER_IP_POOL_KIND, name: v6 }, filter);
    expect((await waitForAddress(client, one, 'v6')).spec.address).toBe('fd00:131::11');
    const single = filterValue('single');
    await createInClusterPool(GLOBAL_IN_CLUSTER_IP_POOL_KIND, single, undefined, {
      addresses: ['10.131.1.9'],
      prefix: 32,
    });
    await claimFrom(two, 'single', { kind: GLOBAL_IN_CLUSTER_IP_POOL_KIND, name: single }, filter);
    await waitForReason(client, two, 'single', 'PoolExhausted');
    await waitForCounts(GLOBAL_IN_CLUSTER_IP_POOL_KIND, single, undefined, {
      total: 0,
      used: 0,
      free: 0,
      outOfRange: 0,
    });

    // Row 3: a zoned gateway is written to IPAddresses as the spec writes it; the allocator sees it without the zone.
    const zoned = filterValue('zoned');
    await createInClusterPool(GLOBAL_IN_CLUSTER_IP_POOL_KIND, zoned, undefined, {
      addresses: ['fe80::10-fe80::12'],
      prefix: 64,
      gateway: 'fe80::1%eth0',
    });
    await claimFrom(two, 'zoned', { kind: GLOBAL_IN_CLUSTER_IP_POOL_KIND, name: zoned }, filter);
    expect((await waitForAddress(client, two, 'zoned')).spec).toMatchObject({
      address: 'fe80::10',
      prefix: 64,
      gateway: 'fe80::1%eth0',
    });

    await client.delete(CLAIM_RESOURCE, { namespace: two, name: 'single' });
    await client.delete(CLAIM_RESOURCE, { namespace: two, name: 'zoned' });
    for (const ns of [one, two]) await client.delete(CLAIM_RESOURCE, { namespace: ns, name: 'vip' });
    await client.delete(CLAIM_RESOURCE, { namespace: one, name: 'v6' });
    for (const pool of [name, v6, single, zoned]) {
      await client.delete(POOL_RESOURCES[GLOBAL_IN_CLUSTER_IP_POOL_KIND], { name: pool });
      await waitForGone(`GlobalInClusterIPPool ${pool}`, () => poolNow(GLOBAL_IN_CLUSTER_IP_POOL_KIND, pool));
    }
  });

  it('never hands out an address twice across an in-cluster pool and an overlapping TallyIPPool', async () => {
    const ns = await namespace('in-cluster-overlap');
    // The same /29 in both: .1–.6 allocatable in each (no gateway), six addresses between the two pools.
    await createInClusterPool(IN_CLUSTER_IP_POOL_KIND, 'reference', ns, { addresses: ['10.132.0.0/29'], prefix: 29 });
    await createPool(client, TALLY_IP_POOL_KIND, 'tally', ns, { addresses: ['10.132.0.0/29'], prefix: 29 });
    const names: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      for (const pool of [
        { kind: IN_CLUSTER_IP_POOL_KIND, name: 'reference' },
        { kind: TALLY_IP_POOL_KIND, name: 'tally' },
      ]) {
        const name = `${pool.name}-${index}`;
        names.push(name);
        await claimFrom(ns, name, pool, filter);
      }
    }
    const addresses = await Promise.all(names.map((name) => waitForAddress(client, ns, name)));
    const texts = addressesOf(addresses);
    expect(new Set(texts).size).toBe(6);
    expect([...texts].sort()).toEqual([
      '10.132.0.1',
      '10.132.0.2',
      '10.132.0.3',
      '10.132.0.4',
      '10.132.0.5',
      '10.132.0.6',
    ]);
    // Each address is held in the ledger for exactly the claim whose IPAddress carries it.
    for (const address of addresses) {
      const holding = await getHolding(client, addressEntryKey(parseIP(address.spec.address)));
      expect(holding.spec.claimRef.name).toBe(address.metadata.name);
    }
    // Both pools are full now: a seventh claim, of either pool, waits.
    await claimFrom(ns, 'seventh', { kind: IN_CLUSTER_IP_POOL_KIND, name: 'reference' }, filter);
    const waiting = await waitForReason(client, ns, 'seventh', 'PoolExhausted');
    expect(waiting.status?.addressRef?.name).toBeUndefined();
    await waitForCounts(IN_CLUSTER_IP_POOL_KIND, 'reference', ns, { total: 6, used: 3, free: 3, outOfRange: 0 });
  });
  it('holds a deleted claim and its IPAddress for the grace period, and lets them go when the pool is deleted', async () => {
    const ns = await namespace('in-cluster-grace');
    // An hour: longer than any test; the pool's deletion is what ends it (the reference skips the period then).
    await createInClusterPool(IN_CLUSTER_IP_POOL_KIND, 'slow', ns, {
      addresses: ['10.135.0.0/29'],
      prefix: 29,
      addressReuseGracePeriodSeconds: 3600,
    });
    const pool = { kind: IN_CLUSTER_IP_POOL_KIND, name: 'slow' };
    await claimFrom(ns, 'gone', pool, filter);
    expect((await waitForAddress(client, ns, 'gone')).spec.address).toBe('10.135.0.1');
    await client.delete(CLAIM_RESOURCE, { namespace: ns, name: 'gone' });
    // A claim created after the deletion, served: the deleted claim's reconcile has run by then, and the address it
    // still holds is not handed out.
    await claimFrom(ns, 'next', pool, filter);
    expect((await waitForAddress(client, ns, 'next')).spec.address).toBe('10.135.0.2');
    const held = await client.get(CLAIM_RESOURCE, { namespace: ns, name: 'gone' });
    expect(held.metadata.deletionTimestamp).toBeDefined();
    expect(held.metadata.finalizers).toEqual([IN_CLUSTER_RELEASE_ADDRESS_FINALIZER]);
    expect((await client.get(ADDRESS_RESOURCE, { namespace: ns, name: 'gone' })).spec.address).toBe('10.135.0.1');

    await client.delete(POOL_RESOURCES[IN_CLUSTER_IP_POOL_KIND], { namespace: ns, name: 'slow' });
    await waitForGone('the held claim, its pool being deleted', () =>
      client.get(CLAIM_RESOURCE, { namespace: ns, name: 'gone' }),
    );
    await waitForGone('its IPAddress', () => client.get(ADDRESS_RESOURCE, { namespace: ns, name: 'gone' }));
    await client.delete(CLAIM_RESOURCE, { namespace: ns, name: 'next' });
    await waitForGone('the deleted pool', () => poolNow(IN_CLUSTER_IP_POOL_KIND, 'slow', ns));
  });
});

describe('the start-up adoption of the reference provider IPAddresses', () => {
  const filter = filterValue('in-cluster-adopt');
  let ns = '';
  const existing: Record<string, { uid: string; address: string }> = {};

  beforeAll(async () => {
    ns = await namespace('in-cluster-adopt');
    const pool = await createInClusterPool(IN_CLUSTER_IP_POOL_KIND, 'nodes', ns, {
      addresses: ['10.133.0.0/28'],
      prefix: 28,
      gateway: '10.133.0.1',
    });
    // What the reference leaves behind: claims with its finalizer, IPAddresses with its finalizer and owners, not
    // in allocation order (the lowest free address, .2, is the one nobody has).
    for (const [name, address] of [
      ['kept-a', '10.133.0.5'],
      ['kept-b', '10.133.0.3'],
    ] as const) {
      const claim = await claimFrom(ns, name, { kind: IN_CLUSTER_IP_POOL_KIND, name: 'nodes' }, filter, {
        finalizers: [IN_CLUSTER_RELEASE_ADDRESS_FINALIZER],
      });
      const created = await client.create(ADDRESS_RESOURCE, {
        apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
        kind: 'IPAddress',
        metadata: {
          name,
          namespace: ns,
          finalizers: [IN_CLUSTER_PROTECT_ADDRESS_FINALIZER],
          ownerReferences: [
            ownerReferenceTo(claim, { controller: true, blockOwnerDeletion: true }),
            ownerReferenceTo(pool, { controller: false, blockOwnerDeletion: true }),
          ],
        },
        spec: {
          address,
          prefix: 28,
          gateway: '10.133.0.1',
          poolRef: { apiGroup: IPAM_GROUP, kind: IN_CLUSTER_IP_POOL_KIND, name: 'nodes' },
          claimRef: { name },
        },
      });
      existing[name] = { uid: created.metadata.uid ?? '', address };
    }
    await claimFrom(ns, 'new', { kind: IN_CLUSTER_IP_POOL_KIND, name: 'nodes' }, filter);
  });
  const running = useProvider(filter, true);

  it('enters every IPAddress into the ledgers before a claim is given an address, and rewrites none', async () => {
    const adopted = await running().provider.addressesAdopted();
    expect(adopted.adopted).toBe(2);
    for (const [name, { uid, address }] of Object.entries(existing)) {
      const holding = await getHolding(client, addressEntryKey(parseIP(address)));
      expect(holding.spec.claimRef.name).toBe(name);
      const ready = await waitForAddress(client, ns, name);
      expect(ready.metadata.uid).toBe(uid);
      expect(ready.spec.address).toBe(address);
    }
    expect((await waitForAddress(client, ns, 'new')).spec.address).toBe('10.133.0.2');
    await waitForCounts(IN_CLUSTER_IP_POOL_KIND, 'nodes', ns, { total: 13, used: 3, free: 10, outOfRange: 0 });
  });

  afterAll(async () => {
    for (const name of ['kept-a', 'kept-b', 'new']) await client.delete(CLAIM_RESOURCE, { namespace: ns, name });
    await waitFor('the adoption test claims to be released', async () => {
      const left = await client.listAll(CLAIM_RESOURCE, { namespace: ns });
      return left.items.length === 0;
    });
  });
});

describe('with inClusterIPAM off', () => {
  const filter = filterValue('in-cluster-off');
  const running = useProvider(filter, false);

  it('serves nothing of the in-cluster kinds: no finalizer, no status, no IPAddress, no pool in its cache', async () => {
    const ns = await namespace('in-cluster-off');
    await createInClusterPool(IN_CLUSTER_IP_POOL_KIND, 'reference', ns, { addresses: ['10.134.0.0/29'], prefix: 29 });
    await claimFrom(ns, 'theirs', { kind: IN_CLUSTER_IP_POOL_KIND, name: 'reference' }, filter);
    // A Tally claim created after it, served: the provider has been through the events of both by then.
    await createPool(client, TALLY_IP_POOL_KIND, 'tally', ns, { addresses: ['10.134.1.0/29'], prefix: 29 });
    await claimFrom(ns, 'ours', { kind: TALLY_IP_POOL_KIND, name: 'tally' }, filter);
    await waitForAddress(client, ns, 'ours');

    const theirs = await client.get(CLAIM_RESOURCE, { namespace: ns, name: 'theirs' });
    expect(theirs.metadata.finalizers ?? []).toEqual([]);
    expect(readyCondition(theirs)).toBeUndefined();
    expect(theirs.status?.addressRef).toBeUndefined();
    expect(await getOrUndefined(() => client.get(ADDRESS_RESOURCE, { namespace: ns, name: 'theirs' }))).toBeUndefined();
    const pool = await poolNow(IN_CLUSTER_IP_POOL_KIND, 'reference', ns);
    expect(pool.metadata.finalizers ?? []).toEqual([]);
    expect(pool.status).toBeUndefined();
    const kinds = running()
      .provider.pools()
      .map((view) => view.ref.kind);
    expect(kinds).toContain(TALLY_IP_POOL_KIND);
    expect(kinds).not.toContain(IN_CLUSTER_IP_POOL_KIND);
  });
});
