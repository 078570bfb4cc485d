/**
 * An upgrade from Tally 0.1 (one TallyAddressLock per address) to the ledgers, on an API server of its own (its lock
 * CRD is opened as an older version shipped it, then fenced as this version ships it): a provider in the retired lock
 * mode binds claims and keeps running through the upgrade; the fence is applied; a provider of this version starts,
 * imports the locks and deletes them. At every snapshot taken meanwhile, no address is held by two claims (locks and
 * entries together) and no address is carried by two IPAddresses; in the end every claim is served once, from the
 * ledgers, and no lock is left.
 */
import { tallyCRDDirectory } from '@tally-ipam/api-types';
import type { Client } from '@tally-ipam/controller-kit';
import { type ControlPlane, startControlPlane } from '@tally-ipam/testenv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADDRESS_RESOURCE, CLAIM_RESOURCE, LEDGER_RESOURCE, LOCK_RESOURCE } from '../src/index.js';
import {
  createClaim,
  createPool,
  newNamespace,
  setLockCRD,
  startProvider,
  testClient,
  waitFor,
  waitForAddress,
} from './support.js';

let plane: ControlPlane | undefined;
let client: Client;

beforeAll(async () => {
  plane = await startControlPlane({
    ignoreTestKubeconfig: true,
    crds: [tallyCRDDirectory()],
    capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'],
  });
  client = testClient(plane.kubeConfig());
}, 180_000);

afterAll(async () => {
  client?.close();
  await plane?.stop();
});

interface Snapshot {
  readonly locks: number;
  readonly entries: number;
}

/**
 * One look at who holds what: locks listed first, then ledgers, then IPAddresses. The migration imports a lock before
 * it deletes it, so a key that moves between the two lists is seen in the ledger. Throws on an address held by two
 * claims or carried by two IPAddresses.
 */
async function snapshot(namespace: string): Promise<Snapshot> {
  const holders = new Map<string, string>();
  const locks = (await client.listAll(LOCK_RESOURCE)).items;
  for (const lock of locks) holders.set(lock.metadata.name, lock.spec.claimRef.uid);
  let entries = 0;
  for (const ledger of (await client.listAll(LEDGER_RESOURCE)).items) {
    for (const entry of ledger.spec.entries ?? []) {
      entries += 1;
      const lockHolder = holders.get(entry.key);
      if (lockHolder !== undefined && lockHolder !== entry.claimRef.uid) {
        throw new Error(`${entry.key} held twice: lock for ${lockHolder}, entry for ${entry.claimRef.uid}`);
      }
    }
  }
  const carriedBy = new Map<string, string>();
  for (const address of (await client.listAll(ADDRESS_RESOURCE, { namespace })).items) {
    const other = carriedBy.get(address.spec.address);
    if (other !== undefined)
      throw new Error(`${address.spec.address} carried by ${other} and ${address.metadata.name}`);
    carriedBy.set(address.spec.address, address.metadata.name);
  }
  return { locks: locks.length, entries };
}

describe('upgrade from per-address locks to ledgers with the old provider still running', () => {
  it('never lets two claims hold one address, and ends with every claim served from the ledgers', async () => {
    const kubeConfig = (plane as ControlPlane).kubeConfig();
    await setLockCRD(client, false);
    const { name: ns } = await newNamespace('upgrade', kubeConfig);
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.61.0.1-10.61.1.254'], prefix: 16 });
    const old = await startProvider({ namespace: ns, retiredAddressLocks: true }, 'tally-0-1', kubeConfig);
    let current: Awaited<ReturnType<typeof startProvider>> | undefined;
    const stopWatching = new AbortController();
    const snapshots: Snapshot[] = [];
    let watching: Promise<void> | undefined;
    try {
      const before = Array.from({ length: 40 }, (_, index) => `before-${index}`);
      await Promise.all(before.map((name) => createClaim(client, ns, name, { kind: 'TallyIPPool', name: 'pool' })));
      await Promise.all(before.map((name) => waitForAddress(client, ns, name)));
      expect((await snapshot(ns)).locks).toBe(40);

      // From here on, every snapshot must hold: the watcher throws (and the test fails) on the first double holding.
      watching = (async () => {
        while (!stopWatching.signal.aborted) snapshots.push(await snapshot(ns));
      })();
      // The upgrade: the CRDs of this version first (the fence), while the old provider keeps running and claims keep
      // coming; then the new provider.
      await setLockCRD(client, true);
      const during = Array.from({ length: 20 }, (_, index) => `during-${index}`);
      await Promise.all(during.map((name) => createClaim(client, ns, name, { kind: 'TallyIPPool', name: 'pool' })));
      current = await startProvider({ namespace: ns, orphanLockSafetyAgeMs: 2_000 }, 'tally-ledgers', kubeConfig);
      const after = Array.from({ length: 20 }, (_, index) => `after-${index}`);
      await Promise.all(after.map((name) => createClaim(client, ns, name, { kind: 'TallyIPPool', name: 'pool' })));
      // Deletions while both run: either may release; an entry the old one leaves behind is an orphan, collected.
      for (const name of before.slice(0, 10)) await client.delete(CLAIM_RESOURCE, { namespace: ns, name });

      const live = [...before.slice(10), ...during, ...after];
      const addresses = await Promise.all(live.map((name) => waitForAddress(client, ns, name)));
      await waitFor('no lock left, one entry per live claim', async () => {
        const seen = await snapshot(ns);
        return seen.locks === 0 && seen.entries === live.length ? seen : undefined;
      });
      stopWatching.abort();
      await watching;

      expect(new Set(addresses.map((address) => address.spec.address)).size).toBe(live.length);
      const claims = await client.listAll(CLAIM_RESOURCE, { namespace: ns });
      const uidOf = new Map(claims.items.map((claim) => [claim.metadata.name, claim.metadata.uid]));
      const entries = (await client.listAll(LEDGER_RESOURCE)).items.flatMap((ledger) => ledger.spec.entries ?? []);
      for (const address of addresses) {
        const entry = entries.find((candidate) => candidate.address === address.spec.address);
        expect(entry?.claimRef.uid, address.metadata.name).toBe(uidOf.get(address.metadata.name));
      }
      // The watcher looked while locks and entries coexisted, not only before or after.
      expect(snapshots.some((seen) => seen.locks > 0)).toBe(true);
      expect(snapshots.some((seen) => seen.locks === 0 && seen.entries > 0)).toBe(true);
      console.info(`[upgrade] ${snapshots.length} snapshots, none with an address held twice`);
    } finally {
      stopWatching.abort();
      await watching?.catch(() => undefined);
      await Promise.all([old.stop(), current?.stop()]);
    }
  });
});
