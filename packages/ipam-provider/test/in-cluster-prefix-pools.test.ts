import { formatIP, parseIP } from '@tally-ipam/allocator';
import {
  CLUSTER_NAME_LABEL,
  GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND,
  IN_CLUSTER_PREFIX_POOL_KIND,
  IN_CLUSTER_PROTECT_ADDRESS_FINALIZER,
  IN_CLUSTER_PROTECT_POOL_FINALIZER,
  IN_CLUSTER_RELEASE_ADDRESS_FINALIZER,
  IPAM_GROUP,
  TALLY_IP_POOL_KIND,
  TALLY_PREFIX_POOL_KIND,
} from '@tally-ipam/api-types';
import { ownerReferenceTo } from '@tally-ipam/controller-kit';
import { prefixEntryKey } from '@tally-ipam/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADDRESS_RESOURCE, CLAIM_RESOURCE, POOL_RESOURCES } from '../src/index.js';
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
const { createInClusterPool: createPrefixPool, claimFrom, poolNow, waitForCounts } = inClusterHelpers(client);

/**
 * A namespace and a provider of its own watch filter scoped to it, started in `beforeAll` (after `before`, which may
 * create what the provider must find at its start) and stopped in `afterAll` of the calling describe.
 */
function useScopedProvider(
  label: string,
  inClusterIPAM: boolean,
  before: (ns: string, filter: string) => Promise<void> = async () => {},
): { filter: string; name: string; ns: () => string; running: () => RunningProvider } {
  const filter = filterValue(label);
  const name = `tally-prefix-${filter}`;
  let ns = '';
  let running: RunningProvider | undefined;
  beforeAll(async () => {
    ns = await namespace(label);
    await before(ns, filter);
    running = await startProvider({ watchFilter: filter, inClusterIPAM, namespace: ns }, name);
  });
  afterAll(async () => {
    await running?.stop();
  });
  return {
    filter,
    name,
    ns: () => ns,
    running: () => {
      if (!running) throw new Error('the provider has not started');
      return running;
    },
  };
}

function blockAt(base: string, length: number, index: number): string {
  return formatIP({ family: 6, value: parseIP(base).value + (BigInt(index) << BigInt(128 - length)) });
}

describe('InClusterPrefixPool and GlobalInClusterPrefixPool, served', () => {
  const scope = useScopedProvider('in-cluster-prefix', true);

  it('hands out the lowest free sub-prefix, skips exclusions, writes the reference IPAddress shape, counts, releases and protects', async () => {
    const ns = scope.ns();
    const { filter } = scope;
    await createCluster(client, ns, 'workload');
    // Listed out of order (the reference sorts its aggregates); fd10:0:0:1::/64 is excluded by one address in it;
    // the gateway lies in fd10::/64 and blocks nothing. Candidates: fd10::, fd10:0:0:4::, :5::, :6::, :7:: (/64,
    // the CRD's default length).
    await createPrefixPool(IN_CLUSTER_PREFIX_POOL_KIND, 'nets', ns, {
      prefixes: ['fd10:0:0:4::/62', 'fd10::/63'],
      excludedPrefixes: ['fd10:0:0:1::5'],
      gateway: 'fd10::1',
    });
    const pool = { kind: IN_CLUSTER_PREFIX_POOL_KIND, name: 'nets' };
    const first = await claimFrom(ns, 'm-0', pool, filter, { clusterName: 'workload' });
    const a0 = await waitForAddress(client, ns, 'm-0');
    await claimFrom(ns, 'm-1', pool, filter, { clusterName: 'workload' });
    const a1 = await waitForAddress(client, ns, 'm-1');
    await claimFrom(ns, 'm-2', pool, filter, { clusterName: 'workload' });
    const a2 = await waitForAddress(client, ns, 'm-2');
    expect([a0.spec.address, a1.spec.address, a2.spec.address]).toEqual(['fd10::', 'fd10:0:0:4::', 'fd10:0:0:5::']);

    // The IPAddress as the reference writes it: the network address, the allocation length, the gateway as written,
    // the claim's name, the claim as controller, the pool with blockOwnerDeletion, the cluster-name label.
    const stored = await poolNow(IN_CLUSTER_PREFIX_POOL_KIND, 'nets', ns);
    expect(a0.metadata.name).toBe('m-0');
    expect(a0.metadata.labels).toEqual({ [CLUSTER_NAME_LABEL]: 'workload' });
    expect(a0.spec).toEqual({
      address: 'fd10::',
      prefix: 64,
      gateway: 'fd10::1',
      poolRef: { apiGroup: IPAM_GROUP, kind: IN_CLUSTER_PREFIX_POOL_KIND, name: 'nets' },
      claimRef: { name: 'm-0' },
    });
    expect(a0.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'IPAddressClaim', uid: first.metadata.uid, controller: true }),
      expect.objectContaining({
        kind: IN_CLUSTER_PREFIX_POOL_KIND,
        uid: stored.metadata.uid,
        blockOwnerDeletion: true,
      }),
    ]);
    expect(a0.metadata.finalizers).toEqual([IN_CLUSTER_PROTECT_ADDRESS_FINALIZER]);
    const claim = await client.get(CLAIM_RESOURCE, { namespace: ns, name: 'm-0' });
    expect(claim.metadata.finalizers).toEqual([IN_CLUSTER_RELEASE_ADDRESS_FINALIZER]);
    expect(claim.status?.addressRef?.name).toBe('m-0');
    // Held in the ledger as a prefix, for the claim whose IPAddress carries it.
    expect((await getHolding(client, prefixEntryKey('fd10:0:0:4::', 64))).spec.claimRef.name).toBe('m-1');

    const counted = await waitForCounts(IN_CLUSTER_PREFIX_POOL_KIND, 'nets', ns, {
      total: 5,
      used: 3,
      free: 2,
      outOfRange: 0,
    });
    expect(Object.keys((counted.status as Record<string, unknown>) ?? {})).toEqual(['ipAddresses']);
    expect(counted.metadata.finalizers).toEqual([IN_CLUSTER_PROTECT_POOL_FINALIZER]);

    // Excluding an allocated sub-prefix (no webhook here): it stays allocated and is counted out of range, and free
    // adds it back as the reference does: total 4, used 3, outOfRange 1, free 4 − 3 + 1.
    await client.mergePatch(POOL_RESOURCES[IN_CLUSTER_PREFIX_POOL_KIND], stored.metadata, {
      spec: { excludedPrefixes: ['fd10:0:0:1::5', 'fd10:0:0:5::/64'] },
    });
    await waitForCounts(IN_CLUSTER_PREFIX_POOL_KIND, 'nets', ns, { total: 4, used: 3, free: 2, outOfRange: 1 });

    // Release on claim delete: the IPAddress goes, then the ledger entry, and the sub-prefix is the lowest free again.
    await client.delete(CLAIM_RESOURCE, { namespace: ns, name: 'm-0' });
    await waitForGone('the claim m-0', () => client.get(CLAIM_RESOURCE, { namespace: ns, name: 'm-0' }));
    await waitForGone('the IPAddress m-0', () => client.get(ADDRESS_RESOURCE, { namespace: ns, name: 'm-0' }));
    await waitForCounts(IN_CLUSTER_PREFIX_POOL_KIND, 'nets', ns, { total: 4, used: 2, free: 3, outOfRange: 1 });
    await waitForNoHolding('the entry of fd10::/64 released', client, prefixEntryKey('fd10::', 64));
    await claimFrom(ns, 'm-3', pool, filter, { clusterName: 'workload' });
    expect((await waitForAddress(client, ns, 'm-3')).spec.address).toBe('fd10::');

    // The pool finalizer keeps a pool with IPAddresses until they are gone.
    await client.delete(POOL_RESOURCES[IN_CLUSTER_PREFIX_POOL_KIND], { namespace: ns, name: 'nets' });
    const deleting = await poolNow(IN_CLUSTER_PREFIX_POOL_KIND, 'nets', ns);
    expect(deleting.metadata.deletionTimestamp).toBeDefined();
    expect(deleting.metadata.finalizers).toEqual([IN_CLUSTER_PROTECT_POOL_FINALIZER]);
    for (const name of ['m-1', 'm-2', 'm-3']) await client.delete(CLAIM_RESOURCE, { namespace: ns, name });
    await waitForGone('the deleted InClusterPrefixPool', () => poolNow(IN_CLUSTER_PREFIX_POOL_KIND, 'nets', ns));
    expect((await client.listAll(ADDRESS_RESOURCE, { namespace: ns })).items).toEqual([]);
  });

  it('serves a GlobalInClusterPrefixPool of another allocation length until it is exhausted', async () => {
    const ns = scope.ns();
    const name = filterValue('shared');
    // /79 cut into /80s: two candidates.
    await createPrefixPool(GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND, name, undefined, {
      prefixes: ['fd11::/79'],
      allocationPrefixLength: 80,
    });
    const pool = { kind: GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND, name };
    await claimFrom(ns, 'g-0', pool, scope.filter);
    const first = await waitForAddress(client, ns, 'g-0');
    await claimFrom(ns, 'g-1', pool, scope.filter);
    const second = await waitForAddress(client, ns, 'g-1');
    expect([first.spec, second.spec].map((spec) => [spec.address, spec.prefix, spec.gateway])).toEqual([
      ['fd11::', 80, undefined],
      [blockAt('fd11::', 80, 1), 80, undefined],
    ]);
    await claimFrom(ns, 'g-2', pool, scope.filter);
    const waiting = await waitForReason(client, ns, 'g-2', 'PoolExhausted');
    expect(waiting.status?.addressRef?.name).toBeUndefined();
    await waitForCounts(GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND, name, undefined, {
      total: 2,
      used: 2,
      free: 0,
      outOfRange: 0,
    });
    for (const claim of ['g-0', 'g-1', 'g-2']) await client.delete(CLAIM_RESOURCE, { namespace: ns, name: claim });
    await client.delete(POOL_RESOURCES[GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND], { name });
    await waitForGone(`GlobalInClusterPrefixPool ${name}`, () => poolNow(GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND, name));
  });

  it('never hands out a sub-prefix twice across an in-cluster prefix pool and an overlapping TallyPrefixPool', async () => {
    const ns = scope.ns();
    const filter = scope.filter;
    // The same /62 in both, /64 each: four sub-prefixes between the two pools.
    await createPrefixPool(IN_CLUSTER_PREFIX_POOL_KIND, 'reference', ns, { prefixes: ['fd12::/62'] });
    await createPool(client, TALLY_PREFIX_POOL_KIND, 'tally', ns, {
      prefixes: ['fd12::/62'],
      allocationPrefixLength: 64,
    });
    const names: string[] = [];
    for (let index = 0; index < 2; index += 1) {
      for (const pool of [
        { kind: IN_CLUSTER_PREFIX_POOL_KIND, name: 'reference' },
        { kind: TALLY_PREFIX_POOL_KIND, name: 'tally' },
      ]) {
        const name = `${pool.name}-${index}`;
        names.push(name);
        await claimFrom(ns, name, pool, filter);
      }
    }
    const addresses = await Promise.all(names.map((name) => waitForAddress(client, ns, name)));
    const expected = [0, 1, 2, 3].map((index) => blockAt('fd12::', 64, index));
    expect(addresses.map((address) => address.spec.address).sort()).toEqual(expected.sort());
    for (const address of addresses) {
      const holding = await getHolding(client, prefixEntryKey(address.spec.address, 64));
      expect(holding.spec.claimRef.name).toBe(address.metadata.name);
    }
    // Both pools are full now: a fifth claim waits. The in-cluster pool counts only its own IPAddresses, as the
    // reference does (the two the Tally pool holds are neither used nor taken from free there).
    await claimFrom(ns, 'fifth', { kind: IN_CLUSTER_PREFIX_POOL_KIND, name: 'reference' }, filter);
    await waitForReason(client, ns, 'fifth', 'PoolExhausted');
    await waitForCounts(IN_CLUSTER_PREFIX_POOL_KIND, 'reference', ns, { total: 4, used: 2, free: 2, outOfRange: 0 });
  });
});

describe('the start-up adoption of the reference provider prefix IPAddresses', () => {
  const existing: Record<string, { uid: string; address: string }> = {};
  const scope = useScopedProvider('in-cluster-prefix-adopt', true, async (ns, filter) => {
    const pool = await createPrefixPool(IN_CLUSTER_PREFIX_POOL_KIND, 'nets', ns, {
      prefixes: ['fd13::/62'],
      gateway: 'fd13::1',
    });
    // What the reference leaves behind, not in allocation order: the lowest free, fd13:0:0:1::/64, is nobody's.
    for (const [name, address] of [
      ['kept-a', 'fd13:0:0:2::'],
      ['kept-b', 'fd13::'],
    ] as const) {
      const claim = await claimFrom(ns, name, { kind: IN_CLUSTER_PREFIX_POOL_KIND, name: 'nets' }, filter, {
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
          prefix: 64,
          gateway: 'fd13::1',
          poolRef: { apiGroup: IPAM_GROUP, kind: IN_CLUSTER_PREFIX_POOL_KIND, name: 'nets' },
          claimRef: { name },
        },
      });
      existing[name] = { uid: created.metadata.uid ?? '', address };
    }
    await claimFrom(ns, 'new', { kind: IN_CLUSTER_PREFIX_POOL_KIND, name: 'nets' }, filter);
  });

  it('enters every IPAddress into the ledgers before a claim is given a sub-prefix, and rewrites none', async () => {
    const ns = scope.ns();
    const adopted = await scope.running().provider.addressesAdopted();
    expect(adopted.adopted).toBe(2);
    for (const [name, { uid, address }] of Object.entries(existing)) {
      const holding = await getHolding(client, prefixEntryKey(address, 64));
      expect(holding.spec.claimRef.name).toBe(name);
      const ready = await waitForAddress(client, ns, name);
      expect(ready.metadata.uid).toBe(uid);
      expect(ready.spec.address).toBe(address);
    }
    expect((await waitForAddress(client, ns, 'new')).spec.address).toBe('fd13:0:0:1::');
    await waitForCounts(IN_CLUSTER_PREFIX_POOL_KIND, 'nets', ns, { total: 4, used: 3, free: 1, outOfRange: 0 });
  });

  afterAll(async () => {
    const ns = scope.ns();
    for (const name of ['kept-a', 'kept-b', 'new']) await client.delete(CLAIM_RESOURCE, { namespace: ns, name });
    await waitFor('the adoption test claims to be released', async () => {
      const left = await client.listAll(CLAIM_RESOURCE, { namespace: ns });
      return left.items.length === 0;
    });
  });
});

describe('with inClusterIPAM off', () => {
  const scope = useScopedProvider('in-cluster-prefix-off', false);

  it('serves nothing of the prefix kinds: no finalizer, no status, no IPAddress, no pool in its cache', async () => {
    const ns = scope.ns();
    await createPrefixPool(IN_CLUSTER_PREFIX_POOL_KIND, 'reference', ns, { prefixes: ['fd14::/62'] });
    await claimFrom(ns, 'theirs', { kind: IN_CLUSTER_PREFIX_POOL_KIND, name: 'reference' }, scope.filter);
    // A Tally claim created after it, served: the provider has been through the events of both by then.
    await createPool(client, TALLY_IP_POOL_KIND, 'tally', ns, { addresses: ['10.136.1.0/29'], prefix: 29 });
    await claimFrom(ns, 'ours', { kind: TALLY_IP_POOL_KIND, name: 'tally' }, scope.filter);
    await waitForAddress(client, ns, 'ours');

    const theirs = await client.get(CLAIM_RESOURCE, { namespace: ns, name: 'theirs' });
    expect(theirs.metadata.finalizers ?? []).toEqual([]);
    expect(readyCondition(theirs)).toBeUndefined();
    expect(theirs.status?.addressRef).toBeUndefined();
    expect(await getOrUndefined(() => client.get(ADDRESS_RESOURCE, { namespace: ns, name: 'theirs' }))).toBeUndefined();
    // This provider wrote nothing to the pool (another test file's provider, serving the kinds, may add its own
    // finalizer and counts: pools are not filtered by the watch filter).
    const pool = await poolNow(IN_CLUSTER_PREFIX_POOL_KIND, 'reference', ns);
    const managers = ((pool.metadata as { managedFields?: { manager?: string }[] }).managedFields ?? []).map(
      (entry) => entry.manager,
    );
    expect(managers).not.toContain(scope.name);
    const kinds = scope
      .running()
      .provider.pools()
      .map((view) => view.ref.kind);
    expect(kinds).toContain(TALLY_IP_POOL_KIND);
    expect(kinds).not.toContain(IN_CLUSTER_PREFIX_POOL_KIND);
  });
});
