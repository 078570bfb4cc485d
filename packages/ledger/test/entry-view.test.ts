/**
 * The ledger entries seen as holdings, fed by a real ledger informer: what the pool states, claim steps and garbage
 * collectors of both IPAM front ends read. On a control plane of the file's own (see usePrivateControlPlane): the
 * entries name claims that do not exist, and a garbage collector running beside them would collect them (a released
 * entry at once), which would change the events seen here.
 */
import { randomInt } from 'node:crypto';
import { type LedgerPoolReference, TALLY_GROUP, TALLY_IP_POOL_KIND } from '@tally-ipam/api-types';
import { Cache } from '@tally-ipam/controller-kit';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  AddressLedgers,
  addressEntryKey,
  type HeldUnit,
  type Holding,
  LEDGER_RESOURCE,
  LedgerEntryView,
  ledgerNameOfEntryKey,
} from '../src/index.js';
import { testClient, usePrivateControlPlane, waitFor } from './support.js';

const kubeConfig = usePrivateControlPlane();

const BY_CLAIM_UID = 'claimUID';
const POOL: LedgerPoolReference = {
  apiGroup: TALLY_GROUP,
  kind: TALLY_IP_POOL_KIND,
  namespace: 'view-test',
  name: 'pool',
};

describe('ledger entries as a holding store', () => {
  it('announces each entry held, released, taken over and dropped as one holding add, update or delete', async () => {
    // A /24 of 10.222.0.0/16, a range no other file uses (release-coalescing holds /24s of 10.221.0.0/16).
    const block = randomInt(0, 250);
    const unit = (last: number): HeldUnit => {
      const address = `10.222.${block}.${last}`;
      return { address, prefix: 24, isPrefix: false, entryKey: addressEntryKey(address) };
    };
    const stop = new AbortController();
    const client = testClient(kubeConfig());
    const cache = new Cache({ kubeConfig: kubeConfig(), logger: pino({ level: 'silent' }) });
    const view = new LedgerEntryView(cache.informerFor(LEDGER_RESOURCE), {
      [BY_CLAIM_UID]: (holding: Holding) => [holding.spec.claimRef.uid],
    });
    const events: string[] = [];
    view.addEventHandler({
      onAdd: (holding) => {
        if (holding.spec.address.startsWith(`10.222.${block}.`))
          events.push(`add ${holding.spec.address} ${holding.spec.claimRef.name}`);
      },
      onUpdate: (_old, holding) => {
        if (holding.spec.address.startsWith(`10.222.${block}.`)) {
          events.push(
            `update ${holding.spec.address} ${holding.spec.claimRef.name}${holding.spec.releasedAt ? ' released' : ''}`,
          );
        }
      },
      onDelete: (holding) => {
        if (holding.spec.address.startsWith(`10.222.${block}.`)) events.push(`delete ${holding.spec.address}`);
      },
    });
    const running = cache.start(stop.signal);
    try {
      const ledgers = new AddressLedgers({ client, now: Date.now });
      const a = { namespace: 'view-test', name: 'a', uid: `uid-a-${block}` };
      const b = { namespace: 'view-test', name: 'b', uid: `uid-b-${block}` };
      await Promise.all([ledgers.hold(unit(1), POOL, a, 0), ledgers.hold(unit(2), POOL, b, 0)]);
      await waitFor('both entries in the view', () => view.store.byIndex(BY_CLAIM_UID, b.uid).length === 1);
      const holding = view.store.get(unit(1).entryKey);
      expect(holding?.spec).toMatchObject({ address: unit(1).address, claimRef: a, poolRef: { kind: 'TallyIPPool' } });
      expect(holding?.metadata.creationTimestamp).toBeDefined();

      await ledgers.release(unit(1), a.uid, new Date());
      await waitFor('the release seen', () => view.store.get(unit(1).entryKey)?.spec.releasedAt !== undefined);
      // Taken over by b once released (grace 0): an update to another claim.
      expect((await ledgers.hold(unit(1), POOL, b, 0)).ok).toBe(true);
      await waitFor('the takeover seen', () => view.store.byIndex(BY_CLAIM_UID, b.uid).length === 2);
      await ledgers.release(unit(1), b.uid);
      await ledgers.release(unit(2), b.uid);
      await waitFor('the ledger gone', () => view.store.byIndex(BY_CLAIM_UID, b.uid).length === 0);
      // The ledger write order is fixed by the API server; the two first holds went in one write (one order only).
      expect(events.slice(2)).toEqual([
        `update ${unit(1).address} a released`,
        `update ${unit(1).address} b`,
        `delete ${unit(1).address}`,
        `delete ${unit(2).address}`,
      ]);
      expect(events.slice(0, 2).sort()).toEqual([`add ${unit(1).address} a`, `add ${unit(2).address} b`]);
    } finally {
      stop.abort();
      await running;
      client.close();
    }
  });

  it('shows no entry of a ledger of another block size (as an unreleased 0.1.0 wrote them): they count for nothing', async () => {
    const block = randomInt(0, 250);
    const address = `10.223.${block}.3`;
    const key = addressEntryKey(address);
    const stop = new AbortController();
    const client = testClient(kubeConfig());
    const cache = new Cache({ kubeConfig: kubeConfig(), logger: pino({ level: 'silent' }) });
    const ledgers = cache.informerFor(LEDGER_RESOURCE);
    const view = new LedgerEntryView(ledgers);
    const running = cache.start(stop.signal);
    try {
      const entry = {
        key,
        address,
        poolRef: POOL,
        claimRef: { namespace: 'view-test', name: 'old', uid: `uid-old-${block}` },
        heldSince: new Date().toISOString(),
      };
      // The 256-address block of 0.1.0's layout: a name the current layout never gives this entry.
      const foreign = `ip4-10.223.${block}.0.24`;
      expect(ledgerNameOfEntryKey(key)).not.toBe(foreign);
      await client.create(LEDGER_RESOURCE, {
        apiVersion: LEDGER_RESOURCE.apiVersion,
        kind: LEDGER_RESOURCE.kind,
        metadata: { name: foreign },
        spec: { entries: [entry] },
      });
      // A later write: the informer delivers in order, so once the view shows its entry it has seen the foreign one.
      const markerAddress = `10.223.${block}.200`;
      const markerKey = addressEntryKey(markerAddress);
      const marker = ledgerNameOfEntryKey(markerKey) ?? '';
      await client.create(LEDGER_RESOURCE, {
        apiVersion: LEDGER_RESOURCE.apiVersion,
        kind: LEDGER_RESOURCE.kind,
        metadata: { name: marker },
        spec: { entries: [{ ...entry, key: markerKey, address: markerAddress }] },
      });
      await waitFor('the later ledger in the view', () => view.store.get(markerKey));
      expect(ledgers.store.get(foreign)).toBeDefined();
      expect(view.store.get(key)).toBeUndefined();
      // The same entry in the ledger the layout names for it is a holding.
      const current = ledgerNameOfEntryKey(key) ?? '';
      await client.create(LEDGER_RESOURCE, {
        apiVersion: LEDGER_RESOURCE.apiVersion,
        kind: LEDGER_RESOURCE.kind,
        metadata: { name: current },
        spec: { entries: [{ ...entry, claimRef: { ...entry.claimRef, name: 'new', uid: `uid-new-${block}` } }] },
      });
      await waitFor('the entry of the current ledger in the view', () => view.store.get(key));
      expect(view.store.get(key)?.spec.claimRef.name).toBe('new');
      // Its deletion leaves nothing: the foreign ledger's entry never stood behind it.
      await client.delete(LEDGER_RESOURCE, { name: current });
      await waitFor('the entry gone with its ledger', () => (view.store.get(key) ? undefined : true));
      expect(view.store.list().filter((holding) => holding.spec.address === address)).toEqual([]);
      await client.delete(LEDGER_RESOURCE, { name: foreign });
      await client.delete(LEDGER_RESOURCE, { name: marker });
    } finally {
      stop.abort();
      await running;
      client.close();
    }
  });
});
