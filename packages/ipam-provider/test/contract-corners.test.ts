import { TALLY_GROUP } from '@tally-ipam/api-types';
import { isNotFound } from '@tally-ipam/controller-kit';
import { addressEntryKey } from '@tally-ipam/ledger';
import { describe, expect, it } from 'vitest';
import { notReady, writeClaimStatus } from '../src/claim/status.js';
import { MAX_CONDITION_MESSAGE_LENGTH } from '../src/constants.js';
import {
  ADDRESS_FINALIZER,
  ADDRESS_RESOURCE,
  CLAIM_ADDRESS_RESERVED_REASON,
  CLAIM_RESOURCE,
  POOL_RESOURCES,
  REQUESTED_ADDRESS_ANNOTATION,
} from '../src/index.js';
import { SKIP_VALIDATE_DELETE_ANNOTATION } from '../src/webhooks/pool-rules.js';
import {
  createClaim,
  createPool,
  findHolding,
  getHolding,
  readyCondition,
  useTestFile,
  waitFor,
  waitForAddress,
  waitForGone,
  waitForNoHolding,
  waitForReason,
} from './support.js';

/** The orphan safety age of this file's provider: the bound a holding outlives its claim and IPAddress by. */
const ORPHAN_AGE_MS = 1_000;

const { client, namespace } = useTestFile({ provider: { orphanEntrySafetyAgeMs: ORPHAN_AGE_MS } });

/** An IPAddress written by someone else before the claim: no finalizer, no owner references. */
async function createBareAddress(ns: string, name: string, pool: string, address: string, prefix: number) {
  return client.create(ADDRESS_RESOURCE, {
    apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
    kind: 'IPAddress',
    metadata: { name, namespace: ns },
    spec: {
      address,
      prefix,
      poolRef: { apiGroup: TALLY_GROUP, kind: 'TallyIPPool', name: pool },
      claimRef: { name },
    },
  });
}

/** What clusterctl move does to the source objects: finalizers removed with a patch, then deleted. */
async function deleteAsClusterctlMove(
  resource: typeof CLAIM_RESOURCE | typeof ADDRESS_RESOURCE,
  ns: string,
  name: string,
) {
  // Like clusterctl, an object already gone counts as deleted: once its claim is gone, the garbage collector or Tally
  // may delete the IPAddress before this does (a fresh-clone run hit that race).
  try {
    await client.mergePatch(resource, { namespace: ns, name }, { metadata: { finalizers: null } });
    await client.delete(resource, { namespace: ns, name });
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

describe('adoption of a pre-existing IPAddress', () => {
  it('completes it with the finalizer and both owner references, its spec untouched', async () => {
    const ns = await namespace('adopt');
    const pool = await createPool(client, 'TallyIPPool', 'pool', ns, {
      addresses: ['10.70.0.10-10.70.0.20'],
      prefix: 24,
    });
    const bare = await createBareAddress(ns, 'node-0', 'pool', '10.70.0.15', 24);
    const claim = await createClaim(client, ns, 'node-0', { kind: 'TallyIPPool', name: 'pool' });

    const adopted = await waitForAddress(client, ns, 'node-0');
    const completed = await waitFor('the adopted IPAddress carries the finalizer', async () => {
      const address = await client.get(ADDRESS_RESOURCE, { namespace: ns, name: 'node-0' });
      return address.metadata.finalizers?.includes(ADDRESS_FINALIZER) ? address : undefined;
    });
    expect(adopted.metadata.uid).toBe(bare.metadata.uid);
    expect(completed.spec).toEqual(bare.spec);
    expect(completed.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
        kind: 'IPAddressClaim',
        name: 'node-0',
        uid: claim.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
      {
        apiVersion: 'ipam.cluster.x-k8s.io/v1alpha1',
        kind: 'TallyIPPool',
        name: 'pool',
        uid: pool.metadata.uid,
        controller: false,
        blockOwnerDeletion: true,
      },
    ]);
    const holding = await getHolding(client, addressEntryKey('10.70.0.15'));
    expect(holding.spec.claimRef.uid).toBe(claim.metadata.uid);
  });

  it('refuses one the pool could not have handed out, and leaves it untouched', async () => {
    const ns = await namespace('adopt-mismatch');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.71.0.10-10.71.0.20'], prefix: 24 });
    const outside = await createBareAddress(ns, 'outside', 'pool', '10.71.0.99', 24);
    const wrongPrefix = await createBareAddress(ns, 'wrong-prefix', 'pool', '10.71.0.11', 16);
    await createClaim(client, ns, 'outside', { kind: 'TallyIPPool', name: 'pool' });
    await createClaim(client, ns, 'wrong-prefix', { kind: 'TallyIPPool', name: 'pool' });

    const refusedOutside = readyCondition(await waitForReason(client, ns, 'outside', 'AllocationFailed'));
    expect(refusedOutside?.message).toContain(
      `IPAddress ${ns}/outside already exists but cannot be adopted: 10.71.0.99/24 is not an address the pool hands out`,
    );
    const refusedPrefix = readyCondition(await waitForReason(client, ns, 'wrong-prefix', 'AllocationFailed'));
    expect(refusedPrefix?.message).toContain("its spec.prefix 16 differs from the pool's 24");
    for (const before of [outside, wrongPrefix]) {
      const after = await client.get(ADDRESS_RESOURCE, { namespace: ns, name: before.metadata.name });
      expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    }
    expect(await findHolding(client, addressEntryKey('10.71.0.99'))).toBe(undefined);
  });
});

describe('claims are told what they cannot have', () => {
  it('a requested address reserved for another claim: AddressReserved, naming that claim', async () => {
    const ns = await namespace('reserved');
    await createPool(client, 'TallyIPPool', 'pool', ns, {
      addresses: ['10.72.0.10-10.72.0.20'],
      prefix: 24,
      reservations: [{ claimName: 'control-plane', address: '10.72.0.10' }],
    });
    await createClaim(
      client,
      ns,
      'intruder',
      { kind: 'TallyIPPool', name: 'pool' },
      { annotations: { [REQUESTED_ADDRESS_ANNOTATION]: '10.72.0.10' } },
    );
    const claim = await waitForReason(client, ns, 'intruder', CLAIM_ADDRESS_RESERVED_REASON);
    expect(readyCondition(claim)?.message).toBe(
      `requested address 10.72.0.10 (annotation ${REQUESTED_ADDRESS_ANNOTATION}) is reserved for claim control-plane ` +
        `in the spec.reservations of TallyIPPool ${ns}/pool; change or remove the annotation`,
    );
  });

  it('a 64 KiB requested-address annotation still gets a condition, the value cut with an ellipsis', async () => {
    const ns = await namespace('huge-annotation');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.73.0.10-10.73.0.20'], prefix: 24 });
    const huge = `10.73.0.${'1'.repeat(64 * 1024)}`;
    await createClaim(
      client,
      ns,
      'huge',
      { kind: 'TallyIPPool', name: 'pool' },
      { annotations: { [REQUESTED_ADDRESS_ANNOTATION]: huge } },
    );
    const claim = await waitForReason(client, ns, 'huge', 'AllocationFailed');
    const message = readyCondition(claim)?.message ?? '';
    expect(message.length).toBeLessThanOrEqual(MAX_CONDITION_MESSAGE_LENGTH);
    expect(message.length).toBeLessThan(4_000);
    expect(message).toContain('requested address 10.73.0.111');
    expect(message).toContain(`is ${huge.length} characters long`);
    expect(message).toContain('…');
  });

  it('a status write for a claim deleted meanwhile is no error', async () => {
    const ns = await namespace('vanished');
    const claim = await createClaim(
      client,
      ns,
      'gone',
      { kind: 'TallyIPPool', name: 'nowhere' },
      { labels: { 'cluster.x-k8s.io/watch-filter': 'nobody' } },
    );
    await client.delete(CLAIM_RESOURCE, { namespace: ns, name: 'gone' });
    await waitForGone('claim gone', () => client.get(CLAIM_RESOURCE, { namespace: ns, name: 'gone' }));
    const written = await writeClaimStatus(
      client,
      claim,
      notReady('PoolNotReady', 'the pool does not exist'),
      new Date(),
      // Never aborted: the one PATCH is bounded by the client's own request timeout, not by a deadline of the test's.
      new AbortController().signal,
    );
    expect(written).toBe(claim);
  });
});

describe(`no holding outlives both its claim and its pool by more than the orphan safety age`, () => {
  it('the source side of clusterctl move: claims and IPAddresses deleted without Tally, their holdings go', async () => {
    const ns = await namespace('move-source');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.74.0.10-10.74.0.20'], prefix: 24 });
    const names = ['m-0', 'm-1'];
    const addresses: string[] = [];
    for (const name of names) {
      await createClaim(client, ns, name, { kind: 'TallyIPPool', name: 'pool' });
      addresses.push((await waitForAddress(client, ns, name)).spec.address);
    }
    // clusterctl move, source side: pause, then delete every moved object with its finalizers removed.
    await client.mergePatch(
      POOL_RESOURCES.TallyIPPool,
      { namespace: ns, name: 'pool' },
      { metadata: { annotations: { [SKIP_VALIDATE_DELETE_ANNOTATION]: '' } } },
    );
    for (const name of names) {
      await deleteAsClusterctlMove(CLAIM_RESOURCE, ns, name);
      await deleteAsClusterctlMove(ADDRESS_RESOURCE, ns, name);
    }
    for (const address of addresses) {
      await waitForNoHolding(`holding of ${address}`, client, addressEntryKey(address));
    }
  });

  it('released holdings of a deleted LeastRecentlyReleased pool go with the pool', async () => {
    const ns = await namespace('lrr-deleted');
    await createPool(client, 'TallyIPPool', 'pool', ns, {
      addresses: ['10.75.0.10-10.75.0.20'],
      prefix: 24,
      allocationStrategy: 'LeastRecentlyReleased',
    });
    await createClaim(client, ns, 'c-0', { kind: 'TallyIPPool', name: 'pool' });
    const address = (await waitForAddress(client, ns, 'c-0')).spec.address;
    await client.delete(CLAIM_RESOURCE, { namespace: ns, name: 'c-0' });
    const entryKey = addressEntryKey(address);
    await waitFor('the holding is kept as released', async () => {
      const holding = await getHolding(client, entryKey);
      return holding.spec.releasedAt !== undefined;
    });
    await client.delete(POOL_RESOURCES.TallyIPPool, { namespace: ns, name: 'pool' });
    await waitForGone('the pool', () => client.get(POOL_RESOURCES.TallyIPPool, { namespace: ns, name: 'pool' }));
    await waitForNoHolding(`released holding ${entryKey}`, client, entryKey);
  });
});
