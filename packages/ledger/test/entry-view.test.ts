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
});
