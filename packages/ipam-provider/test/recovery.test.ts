import { TALLY_GROUP } from '@tally-ipam/api-types';
import { EVENTS_RESOURCE } from '@tally-ipam/controller-kit';
import { addressEntryKey } from '@tally-ipam/ledger';
import { describe, expect, it } from 'vitest';
import { ADDRESS_FINALIZER, ADDRESS_RESOURCE, CLAIM_RESOURCE, type StoredClaim } from '../src/index.js';
import {
  createClaim,
  createPool,
  dropHolding,
  findHolding,
  getHolding,
  holdAsAnotherWriter,
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

/** An entry held for a claim as a crashed reconcile or another replica would have left it. */
async function createLock(address: string, ns: string, pool: string, claim: { name: string; uid: string }) {
  return holdAsAnotherWriter(
    client,
    addressEntryKey(address),
    { kind: 'TallyIPPool', name: pool, namespace: ns },
    { namespace: ns, name: claim.name, uid: claim.uid },
  );
}

describe('recovery', () => {
  it('resumes a crash between holding and IPAddress: the address of the claim’s holding is used', async () => {
    const ns = await namespace('rec-crash');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.60.0.1-10.60.0.9'], prefix: 24 });
    const claim = await createClaim(client, ns, 'a', { kind: 'TallyIPPool', name: 'pool' });
    // The holding a crashed reconcile had taken for this claim: not the lowest free address.
    await createLock('10.60.0.7', ns, 'pool', { name: 'a', uid: claim.metadata.uid ?? '' });
    const running = await startProvider();
    try {
      expect((await waitForAddress(client, ns, 'a')).spec.address).toBe('10.60.0.7');
    } finally {
      await running.stop();
    }
  });

  it('reports a duplicate instead of sharing an address whose holding another claim holds (e.g. after a move)', async () => {
    const ns = await namespace('rec-duplicate');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.61.0.1-10.61.0.9'], prefix: 24 });
    const claim = await createClaim(client, ns, 'moved', { kind: 'TallyIPPool', name: 'pool' });
    // The IPAddress as clusterctl move brings it: owned by the claim, no holding in this cluster. Created before the entry
    // of the other claim, which does not exist: the providers of the other test files, which run beside this one, keep
    // that entry only because an IPAddress carries its address (contract-corners' drops an orphan after 1 s).
    await client.create(ADDRESS_RESOURCE, {
      apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
      kind: 'IPAddress',
      metadata: {
        name: 'moved',
        namespace: ns,
        finalizers: [ADDRESS_FINALIZER],
        ownerReferences: [
          {
            apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
            kind: 'IPAddressClaim',
            name: 'moved',
            uid: claim.metadata.uid ?? '',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: {
        address: '10.61.0.1',
        prefix: 24,
        poolRef: { apiGroup: TALLY_GROUP, kind: 'TallyIPPool', name: 'pool' },
        claimRef: { name: 'moved' },
      },
    });
    await createLock('10.61.0.1', ns, 'pool', { name: 'other', uid: 'uid-of-other' });
    const running = await startProvider({ orphanEntrySafetyAgeMs: 3_600_000 });
    try {
      const failed = await waitForReason(client, ns, 'moved', 'AllocationFailed');
      expect(readyCondition(failed)?.message).toContain('duplicate address: 10.61.0.1');
      expect(readyCondition(failed)?.message).toContain(`${ns}/other`);
      const holding = await getHolding(client, addressEntryKey('10.61.0.1'));
      expect(holding.spec.claimRef.uid).toBe('uid-of-other');
    } finally {
      await running.stop();
      await dropHolding(client, addressEntryKey('10.61.0.1'));
    }
  });

  it('deletes orphaned holdings after the safety age, and keeps holdings whose claim lives', async () => {
    const ns = await namespace('rec-orphan');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.62.0.1-10.62.0.9'], prefix: 24 });
    await createLock('10.62.0.9', ns, 'pool', { name: 'vanished', uid: 'uid-of-vanished' });
    const running = await startProvider({ orphanEntrySafetyAgeMs: 1_000, namespace: ns });
    try {
      await createClaim(client, ns, 'live', { kind: 'TallyIPPool', name: 'pool' });
      const live = await waitForAddress(client, ns, 'live');
      await waitForNoHolding('orphaned holding', client, addressEntryKey('10.62.0.9'));
      const held = await getHolding(client, addressEntryKey(live.spec.address));
      expect(held.spec.claimRef.name).toBe('live');
    } finally {
      await running.stop();
    }
  });

  it('releases the ledger entry only after the IPAddress is really gone (another finalizer holding it)', async () => {
    const ns = await namespace('rec-finalizer');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.63.0.1-10.63.0.9'], prefix: 24 });
    const running = await startProvider();
    try {
      await createClaim(client, ns, 'a', { kind: 'TallyIPPool', name: 'pool' });
      const address = await waitForAddress(client, ns, 'a');
      await client.mergePatch(ADDRESS_RESOURCE, address.metadata, {
        metadata: {
          resourceVersion: address.metadata.resourceVersion,
          finalizers: [ADDRESS_FINALIZER, 'example.com/hold'],
        },
      });
      await client.delete(CLAIM_RESOURCE, { namespace: ns, name: 'a' });
      const held = await waitFor('IPAddress deleted, left with only the foreign finalizer', async () => {
        const current = await client.get(ADDRESS_RESOURCE, { namespace: ns, name: 'a' });
        const onlyForeign = current.metadata.finalizers?.join(',') === 'example.com/hold';
        return onlyForeign && current.metadata.deletionTimestamp !== undefined ? current : undefined;
      });
      // While the IPAddress exists, its address stays held and the claim stays.
      expect((await getHolding(client, addressEntryKey('10.63.0.1'))).spec.claimRef.name).toBe('a');
      expect((await client.get(CLAIM_RESOURCE, { namespace: ns, name: 'a' })).metadata.deletionTimestamp).toBeDefined();

      await client.mergePatch(ADDRESS_RESOURCE, held.metadata, {
        metadata: { resourceVersion: held.metadata.resourceVersion, finalizers: null },
      });
      await waitForGone('claim a', () => client.get(CLAIM_RESOURCE, { namespace: ns, name: 'a' }));
      await waitForNoHolding('the entry of 10.63.0.1 released', client, addressEntryKey('10.63.0.1'));
    } finally {
      await running.stop();
    }
  });

  it('removes its finalizer from the IPAddress of a claim that was force-deleted', async () => {
    const ns = await namespace('rec-force');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.65.0.1-10.65.0.9'], prefix: 24 });
    const running = await startProvider();
    try {
      await createClaim(client, ns, 'a', { kind: 'TallyIPPool', name: 'pool' });
      await waitForAddress(client, ns, 'a');
      // Paused, so that no provider releases it; then its finalizer is stripped by hand.
      await client.mergePatch(
        CLAIM_RESOURCE,
        { namespace: ns, name: 'a' },
        {
          metadata: { annotations: { 'cluster.x-k8s.io/paused': '' } },
        },
      );
      await client.delete(CLAIM_RESOURCE, { namespace: ns, name: 'a' });
      const deleting = await client.get(CLAIM_RESOURCE, { namespace: ns, name: 'a' });
      await client.mergePatch(CLAIM_RESOURCE, deleting.metadata, {
        metadata: { resourceVersion: deleting.metadata.resourceVersion, finalizers: null },
      });
      await waitForGone('the IPAddress of the force-deleted claim', () =>
        client.get(ADDRESS_RESOURCE, { namespace: ns, name: 'a' }),
      );
    } finally {
      await running.stop();
    }
  });

  it('serves only claims with the watch-filter label when a filter is set, and records Events', async () => {
    const ns = await namespace('rec-filter');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.64.0.1-10.64.0.9'], prefix: 24 });
    const running = await startProvider({ watchFilter: 'mine', namespace: ns }, 'filtered-provider');
    try {
      await createClaim(client, ns, 'unlabelled', { kind: 'TallyIPPool', name: 'pool' });
      await createClaim(
        client,
        ns,
        'labelled',
        { kind: 'TallyIPPool', name: 'pool' },
        {
          labels: { 'cluster.x-k8s.io/watch-filter': 'mine' },
        },
      );
      await waitForAddress(client, ns, 'labelled');
      const events = await waitFor('AddressAllocated event', async () => {
        const list = await client.list(EVENTS_RESOURCE, { namespace: ns });
        const items = list.items as unknown as { reason?: string; note?: string; regarding?: { name?: string } }[];
        const found = items.filter((event) => event.reason === 'AddressAllocated');
        return found.length > 0 ? found : undefined;
      });
      expect(events[0]?.regarding?.name).toBe('labelled');
      expect(events[0]?.note).toBe(`allocated 10.64.0.1 from TallyIPPool ${ns}/pool`);
      // Providers of other test files (no filter) may serve the unlabelled claim too; this provider's writes are
      // told apart by its field manager in managedFields.
      const writers = (claim: StoredClaim): string[] =>
        ((claim.metadata.managedFields ?? []) as { manager?: string }[]).map((entry) => entry.manager ?? '');
      const labelled = await client.get(CLAIM_RESOURCE, { namespace: ns, name: 'labelled' });
      expect(writers(labelled)).toContain('filtered-provider');
      const unlabelled = await client.get(CLAIM_RESOURCE, { namespace: ns, name: 'unlabelled' });
      expect(writers(unlabelled)).not.toContain('filtered-provider');
    } finally {
      await running.stop();
    }
  });

  it('writes at a graceful stop the releases still waiting in the coalescing window', async () => {
    const ns = await namespace('rec-stop-flush');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.66.0.1-10.66.0.9'], prefix: 24 });
    // A window of an hour: a release queued in it is still waiting when the process stops, unless the stop writes it.
    const running = await startProvider({ releaseCoalesceMs: 3_600_000 });
    let stopped = false;
    try {
      const claim = await createClaim(client, ns, 'a', { kind: 'TallyIPPool', name: 'pool' });
      const address = (await waitForAddress(client, ns, 'a')).spec.address;
      const unit = { address, prefix: 24, isPrefix: false, entryKey: addressEntryKey(address) };
      await client.delete(CLAIM_RESOURCE, { namespace: ns, name: 'a' });
      await waitForGone('claim a', () => client.get(CLAIM_RESOURCE, { namespace: ns, name: 'a' }));
      // The claim is gone (its finalizer came off with the release queued) and the release waits in the window.
      expect(running.provider.ledgers.isReleasing(unit, claim.metadata.uid ?? '')).toBe(true);
      const writes = running.provider.ledgers.writes;
      await running.stop();
      stopped = true;
      // Answered by the stop's write (or found already gone: the providers of other files drop orphaned entries).
      expect(running.provider.ledgers.isReleasing(unit, claim.metadata.uid ?? '')).toBe(false);
      expect(running.provider.ledgers.writes - writes).toBeLessThanOrEqual(1);
      expect(await findHolding(client, addressEntryKey(address))).toBeUndefined();
    } finally {
      if (!stopped) await running.stop();
    }
  });
});
