import { Watch } from '@kubernetes/client-node';
import { TALLY_GROUP, WATCH_FILTER_LABEL } from '@tally-ipam/api-types';
import { ownerReferenceTo } from '@tally-ipam/controller-kit';
import { ADDRESS_BLOCK_BITS, addressEntryKey, LEDGER_RESOURCE, ledgerNameOf } from '@tally-ipam/ledger';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { describe, expect, it } from 'vitest';
import { CLAIM_FINALIZER } from '../src/constants.js';
import {
  ADDRESS_FINALIZER,
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  type StoredAddress,
  type StoredClaim,
  type StoredPool,
} from '../src/index.js';
import {
  createPool,
  dropHolding,
  FILE_WATCH_FILTER,
  forEachLimited,
  getHolding,
  holdAsAnotherWriter,
  holdingsOfNamespace,
  readyCondition,
  startProvider,
  useTestFile,
  waitFor,
  waitForAddress,
  waitForReason,
} from './support.js';

const { client, namespace } = useTestFile();

/** A bound claim as clusterctl move leaves it in the target cluster: Tally's finalizer on, no status. */
async function createBoundClaim(ns: string, name: string): Promise<StoredClaim> {
  return client.create(CLAIM_RESOURCE, {
    apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
    kind: 'IPAddressClaim',
    metadata: {
      name,
      namespace: ns,
      finalizers: [CLAIM_FINALIZER],
      labels: { [WATCH_FILTER_LABEL]: FILE_WATCH_FILTER },
    },
    spec: { poolRef: { apiGroup: TALLY_GROUP, kind: 'TallyIPPool', name: 'pool' } },
  });
}

/** The claim's IPAddress as Tally wrote it in the source cluster: finalizer, claim and pool as owners. */
async function createMovedAddress(
  pool: StoredPool,
  claim: StoredClaim,
  address: string,
  prefix: number,
): Promise<StoredAddress> {
  return client.create(ADDRESS_RESOURCE, {
    apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
    kind: 'IPAddress',
    metadata: {
      name: claim.metadata.name,
      namespace: claim.metadata.namespace,
      finalizers: [ADDRESS_FINALIZER],
      ownerReferences: [
        ownerReferenceTo(claim, { controller: true, blockOwnerDeletion: true }),
        ownerReferenceTo(pool, { controller: false, blockOwnerDeletion: true }),
      ],
    },
    spec: {
      address,
      prefix,
      poolRef: { apiGroup: TALLY_GROUP, kind: 'TallyIPPool', name: 'pool' },
      claimRef: { name: claim.metadata.name },
    },
  });
}

/**
 * Counts the API server's writes of some ledgers: a watch started from the version of a list, so every create,
 * update and delete after it is one event, none merged, none missed (`broken` says the watch ended early).
 */
async function countLedgerWrites(names: ReadonlySet<string>): Promise<{
  readonly writes: Map<string, number>;
  readonly broken: () => unknown;
  stop(): void;
}> {
  const listed = await client.list(LEDGER_RESOURCE, { limit: 1 });
  const writes = new Map<string, number>();
  let ended: unknown;
  let stopping = false;
  const watch = await new Watch(testEnv().kubeConfig).watch(
    `/apis/${LEDGER_RESOURCE.apiVersion}/${LEDGER_RESOURCE.plural}`,
    { resourceVersion: listed.resourceVersion, allowWatchBookmarks: false },
    (phase, object: { metadata?: { name?: string } }) => {
      const name = object.metadata?.name ?? '';
      if (names.has(name) && phase !== 'BOOKMARK') writes.set(name, (writes.get(name) ?? 0) + 1);
    },
    (error: unknown) => {
      if (!stopping) ended = error ?? new Error('the ledger watch ended before the test stopped it');
    },
  );
  return {
    writes,
    broken: () => ended,
    stop: () => {
      stopping = true;
      watch.abort();
    },
  };
}

describe('start-up adoption in bulk', () => {
  it('600 moved IPAddresses over many blocks (most of them full) are entered in at most 2 writes per ledger, none moves', async () => {
    const ns = await namespace('bulk');
    const pool = await createPool(client, 'TallyIPPool', 'pool', ns, {
      addresses: ['10.215.0.1-10.215.3.254'],
      prefix: 22,
    });
    // 10.215.0.1 to 10.215.2.88, one after another: every block but the first and the last fills its ledger.
    const addresses = Array.from({ length: 600 }, (_, index) => `10.215.${(index + 1) >> 8}.${(index + 1) & 255}`);
    const ledgerNames = new Set(addresses.map((address) => ledgerNameOf({ address, prefix: 0, isPrefix: false })));
    expect(ledgerNames.size).toBe(Math.ceil(601 / 2 ** ADDRESS_BLOCK_BITS));
    const before = new Map<string, StoredAddress>();
    await forEachLimited(
      addresses.map((address, index) => ({ address, name: `node-${index}` })),
      25,
      async ({ address, name }) => {
        const claim = await createBoundClaim(ns, name);
        before.set(name, await createMovedAddress(pool, claim, address, 22));
      },
    );

    const counter = await countLedgerWrites(ledgerNames);
    // Its namespace only: the claims of this file's other tests are not its to adopt.
    const running = await startProvider({ namespace: ns });
    try {
      await waitFor(
        'every moved claim Ready',
        async () => {
          const claims = (await client.listAll(CLAIM_RESOURCE, { namespace: ns })).items;
          return (
            claims.length === addresses.length && claims.every((claim) => readyCondition(claim)?.status === 'True')
          );
        },
        { timeoutMs: 150_000 },
      );
      const result = await running.provider.addressesAdopted();
      expect(result).toMatchObject({ adopted: 600, ledgers: ledgerNames.size, alreadyHeld: 0, leftToClaims: 0 });

      // Every write was the API server's, counted by the watch; the generation of each ledger (1 at its create, +1 for
      // every update of its entries) says the same, and is read once the watch has caught up with it.
      const ledgers = (await client.listAll(LEDGER_RESOURCE)).items.filter((ledger) =>
        ledgerNames.has(ledger.metadata.name),
      );
      expect(ledgers).toHaveLength(ledgerNames.size);
      for (const ledger of ledgers) {
        await waitFor(`the watch to show generation ${ledger.metadata.generation} of ${ledger.metadata.name}`, () => {
          return (counter.writes.get(ledger.metadata.name) ?? 0) >= (ledger.metadata.generation ?? 0);
        });
      }
      expect(counter.broken()).toBeUndefined();
      for (const ledger of ledgers) {
        const writes = counter.writes.get(ledger.metadata.name) ?? 0;
        expect(writes, `writes of ${ledger.metadata.name}`).toBe(ledger.metadata.generation);
        expect(writes, `writes of ${ledger.metadata.name}`).toBeLessThanOrEqual(2);
      }
      const total = [...counter.writes.values()].reduce((sum, writes) => sum + writes, 0);
      expect(total).toBeLessThanOrEqual(ledgerNames.size * 2);

      const claims = new Map(
        (await client.listAll(CLAIM_RESOURCE, { namespace: ns })).items.map((claim) => [claim.metadata.name, claim]),
      );
      const holdings = await holdingsOfNamespace(client, ns);
      const after = (await client.listAll(ADDRESS_RESOURCE, { namespace: ns })).items;
      expect(after).toHaveLength(addresses.length);
      for (const address of after) {
        const name = address.metadata.name;
        const claim = claims.get(name);
        const entries = holdings.filter((holding) => holding.spec.address === address.spec.address);
        expect(
          entries.map((entry) => entry.spec.claimRef.uid),
          `entries of ${address.spec.address}`,
        ).toEqual([claim?.metadata.uid]);
        expect([address.metadata.uid, address.spec.address]).toEqual([
          before.get(name)?.metadata.uid,
          before.get(name)?.spec.address,
        ]);
        expect(claim?.status?.addressRef?.name).toBe(name);
      }
      expect(holdings).toHaveLength(addresses.length);
    } finally {
      counter.stop();
      await running.stop();
      // The ledgers are cluster-scoped: they would outlive the namespace.
      for (const name of ledgerNames) {
        await client.delete(LEDGER_RESOURCE, { name }).catch(() => undefined);
      }
    }
  });

  it('an upgrade over ledgers of another block size (0.1.0): every address entered anew, the old ledger deleted once redundant', async () => {
    const ns = await namespace('bulk-retired');
    const pool = await createPool(client, 'TallyIPPool', 'pool', ns, {
      addresses: ['10.217.0.1-10.217.0.60'],
      prefix: 24,
    });
    // Two claims bound as 0.1.0 left them: IPAddresses, and their entries in the 256-address ledger of 10.217.0.0/24.
    const claims = [await createBoundClaim(ns, 'first'), await createBoundClaim(ns, 'second')];
    const moved = [
      await createMovedAddress(pool, claims[0] as StoredClaim, '10.217.0.5', 24),
      await createMovedAddress(pool, claims[1] as StoredClaim, '10.217.0.40', 24),
    ];
    const entryOf = (claim: StoredClaim, address: string) => ({
      key: addressEntryKey(address),
      address,
      poolRef: { apiGroup: TALLY_GROUP, kind: 'TallyIPPool', namespace: ns, name: 'pool' },
      claimRef: { namespace: ns, name: claim.metadata.name, uid: claim.metadata.uid ?? '' },
      heldSince: '2026-11-20T00:00:00Z',
    });
    const oldLedger = 'ip4-10.217.0.0.24';
    await client.create(LEDGER_RESOURCE, {
      apiVersion: LEDGER_RESOURCE.apiVersion,
      kind: LEDGER_RESOURCE.kind,
      metadata: { name: oldLedger },
      spec: {
        entries: [entryOf(claims[0] as StoredClaim, '10.217.0.5'), entryOf(claims[1] as StoredClaim, '10.217.0.40')],
      },
    });
    // An old ledger with an entry no front end will enter again (its claim is not served here): it must stay.
    const keptLedger = 'ip4-10.217.1.0.24';
    const stranger = {
      ...(claims[0] as StoredClaim),
      metadata: { ...(claims[0] as StoredClaim).metadata, name: 'gone', uid: 'uid-of-no-claim' },
    };
    await client.create(LEDGER_RESOURCE, {
      apiVersion: LEDGER_RESOURCE.apiVersion,
      kind: LEDGER_RESOURCE.kind,
      metadata: { name: keptLedger },
      spec: { entries: [entryOf(stranger, '10.217.1.7')] },
    });
    const running = await startProvider({ namespace: ns });
    try {
      await waitFor('both claims Ready', async () => {
        const current = (await client.listAll(CLAIM_RESOURCE, { namespace: ns })).items;
        return current.length === 2 && current.every((claim) => readyCondition(claim)?.status === 'True');
      });
      await waitFor('the redundant old ledger deleted', async () => {
        try {
          await client.get(LEDGER_RESOURCE, { name: oldLedger });
          return undefined;
        } catch (error) {
          return (error as { statusCode?: number }).statusCode === 404 ? true : undefined;
        }
      });
      // Each address is held again, for its claim, in the ledger of the current layout; no IPAddress moved.
      for (const [index, address] of ['10.217.0.5', '10.217.0.40'].entries()) {
        const unit = { address, prefix: 24, isPrefix: false };
        expect(ledgerNameOf(unit)).not.toBe(oldLedger);
        const ledger = await client.get(LEDGER_RESOURCE, { name: ledgerNameOf(unit) });
        const entry = ledger.spec.entries?.find((candidate) => candidate.key === addressEntryKey(address));
        expect(entry?.claimRef.uid).toBe(claims[index]?.metadata.uid);
        const now = await client.get(ADDRESS_RESOURCE, { namespace: ns, name: claims[index]?.metadata.name ?? '' });
        expect([now.metadata.uid, now.spec.address]).toEqual([moved[index]?.metadata.uid, address]);
      }
      // The ledger whose entry nobody holds again is still there, untouched.
      const kept = await client.get(LEDGER_RESOURCE, { name: keptLedger });
      expect(kept.spec.entries?.map((entry) => entry.claimRef.uid)).toEqual(['uid-of-no-claim']);
    } finally {
      await running.stop();
      for (const name of [
        oldLedger,
        keptLedger,
        ...['10.217.0.5', '10.217.0.40'].map((address) => ledgerNameOf({ address, prefix: 24, isPrefix: false })),
      ]) {
        await client.delete(LEDGER_RESOURCE, { name }).catch(() => undefined);
      }
    }
  });

  it('an address another live claim holds is not taken: that claim keeps it, the moved one reports the duplicate', async () => {
    const ns = await namespace('bulk-conflict');
    const pool = await createPool(client, 'TallyIPPool', 'pool', ns, {
      addresses: ['10.216.0.1-10.216.0.20'],
      prefix: 24,
    });
    const owner = await createBoundClaim(ns, 'owner');
    const ownerAddress = await createMovedAddress(pool, owner, '10.216.0.5', 24);
    await holdAsAnotherWriter(
      client,
      addressEntryKey('10.216.0.5'),
      { kind: 'TallyIPPool', name: 'pool', namespace: ns },
      { namespace: ns, name: 'owner', uid: owner.metadata.uid ?? '' },
    );
    const moved = await createBoundClaim(ns, 'moved');
    await createMovedAddress(pool, moved, '10.216.0.5', 24);
    const free = await createBoundClaim(ns, 'free');
    await createMovedAddress(pool, free, '10.216.0.6', 24);

    // Its namespace only: the claims of this file's other tests are not its to adopt.
    const running = await startProvider({ namespace: ns });
    try {
      const result = await running.provider.addressesAdopted();
      // `free` adopted; `owner` held already; `moved` left to its claim, whose reconcile reports it.
      expect(result).toMatchObject({ adopted: 1, ledgers: 1, alreadyHeld: 1, leftToClaims: 1 });
      const failed = await waitForReason(client, ns, 'moved', 'AllocationFailed');
      expect(readyCondition(failed)?.status).toBe('False');
      expect(readyCondition(failed)?.message).toContain(
        `duplicate address: 10.216.0.5 of IPAddress ${ns}/moved is also held by IPAddressClaim ${ns}/owner`,
      );
      const kept = await waitForAddress(client, ns, 'owner');
      expect([kept.metadata.uid, kept.spec.address]).toEqual([ownerAddress.metadata.uid, '10.216.0.5']);
      expect((await getHolding(client, addressEntryKey('10.216.0.5'))).spec.claimRef.uid).toBe(owner.metadata.uid);
      expect((await waitForAddress(client, ns, 'free')).spec.address).toBe('10.216.0.6');
      expect((await getHolding(client, addressEntryKey('10.216.0.6'))).spec.claimRef.uid).toBe(free.metadata.uid);
    } finally {
      await running.stop();
      await dropHolding(client, addressEntryKey('10.216.0.5'));
      await dropHolding(client, addressEntryKey('10.216.0.6'));
    }
  });
});
