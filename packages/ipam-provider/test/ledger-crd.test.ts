/**
 * The ledger CRD's atomic `spec.entries`, on an API server of this file's own (the shared one's CRD never changes, and
 * no other file's helpers, which list every ledger, meet the broken ledger written here):
 * - the atomic list lets a person write a key twice: every reader refuses that ledger, nothing is written over it;
 * - the API server checks only an entry's required fields: an entry malformed otherwise is refused the same way, and
 *   a claim whose address lies in such a ledger says so on its Ready condition.
 */

import { type LedgerPoolReference, TALLY_GROUP, TALLY_IP_POOL_KIND, tallyCRDDirectory } from '@tally-ipam/api-types';
import type { Client, ResourceKind } from '@tally-ipam/controller-kit';
import { AddressLedgers, addressEntryKey, type HeldUnit, LEDGER_RESOURCE, ledgerNameOf } from '@tally-ipam/ledger';
import { type ControlPlane, startControlPlane } from '@tally-ipam/testenv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createClaim,
  createPool,
  newNamespace,
  readyCondition,
  startProvider,
  testClient,
  waitForReason,
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

/** Read without the provider's schema: the broken ledgers written here would not parse. */
const UNPARSED_LEDGERS: ResourceKind = {
  apiVersion: LEDGER_RESOURCE.apiVersion,
  kind: LEDGER_RESOURCE.kind,
  plural: LEDGER_RESOURCE.plural,
  namespaced: false,
};

const POOL: LedgerPoolReference = {
  apiGroup: TALLY_GROUP,
  kind: TALLY_IP_POOL_KIND,
  namespace: 'upgrade',
  name: 'pool',
};

function unit(last: number): HeldUnit {
  const address = `10.77.0.${last}`;
  return { address, prefix: 24, isPrefix: false, entryKey: addressEntryKey(address) };
}

describe("the ledger CRD's atomic spec.entries", () => {
  it('a ledger with a key twice is never written over: holds in its block fail naming the key, nothing changes', async () => {
    const duplicated = { ...unit(1), address: '10.77.5.1', entryKey: addressEntryKey('10.77.5.1') };
    const name = ledgerNameOf(duplicated);
    const entry = (uid: string) => ({
      key: duplicated.entryKey,
      address: duplicated.address,
      poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', namespace: 'upgrade', name: 'pool' },
      claimRef: { namespace: 'upgrade', name: `dup-${uid}`, uid },
      heldSince: '2026-11-24T00:00:00Z',
    });
    // Only a person (or a bug) writes this: the CRD's atomic list lets it through, every reader refuses it.
    await client.create(UNPARSED_LEDGERS, {
      apiVersion: LEDGER_RESOURCE.apiVersion,
      kind: LEDGER_RESOURCE.kind,
      metadata: { name },
      spec: { entries: [entry('uid-one'), entry('uid-two')] },
    });
    const before = await client.get(UNPARSED_LEDGERS, { name });
    const ledgers = new AddressLedgers({ client, now: Date.now });
    const next = { ...duplicated, address: '10.77.5.2', entryKey: addressEntryKey('10.77.5.2') };
    await expect(
      ledgers.hold(next, POOL, { namespace: 'upgrade', name: 'after-dup', uid: 'uid-after' }, 0),
    ).rejects.toThrow(/"ip4-10\.77\.5\.1" is already the key of entries\[0\][\s\S]*spec\.entries\[1\]\.key/);
    const after = await client.get(UNPARSED_LEDGERS, { name });
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  it('a ledger with a malformed entry is stored by the API server, but never written over: holds fail naming the field', async () => {
    const malformed = { ...unit(1), address: '10.77.6.1', entryKey: addressEntryKey('10.77.6.1') };
    const name = ledgerNameOf(malformed);
    const entry = {
      key: malformed.entryKey,
      address: malformed.address,
      poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', namespace: 'upgrade', name: 'pool' },
      claimRef: { namespace: 'upgrade', name: 'held', uid: 'uid-held' },
      heldSince: 'yesterday',
    };
    // The CRD leaves entry fields to the readers (a full ledger's write costs half): the create goes through.
    await client.create(UNPARSED_LEDGERS, {
      apiVersion: LEDGER_RESOURCE.apiVersion,
      kind: LEDGER_RESOURCE.kind,
      metadata: { name },
      spec: { entries: [entry] },
    });
    const before = await client.get(UNPARSED_LEDGERS, { name });
    const ledgers = new AddressLedgers({ client, now: Date.now });
    const next = { ...malformed, address: '10.77.6.2', entryKey: addressEntryKey('10.77.6.2') };
    await expect(
      ledgers.hold(next, POOL, { namespace: 'upgrade', name: 'after-malformed', uid: 'uid-after-malformed' }, 0),
    ).rejects.toThrow(/spec\.entries\[0\]\.heldSince/);
    const after = await client.get(UNPARSED_LEDGERS, { name });
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  it('a claim whose address lies in a malformed ledger says so on its Ready condition; the ledger is not written over', async () => {
    const first = { ...unit(1), address: '10.77.8.1', entryKey: addressEntryKey('10.77.8.1') };
    const name = ledgerNameOf(first);
    await client.create(UNPARSED_LEDGERS, {
      apiVersion: LEDGER_RESOURCE.apiVersion,
      kind: LEDGER_RESOURCE.kind,
      metadata: { name },
      spec: {
        entries: [
          {
            key: addressEntryKey('10.77.8.200'),
            address: '10.77.8.200',
            poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', namespace: 'elsewhere', name: 'p' },
            claimRef: { namespace: 'elsewhere', name: 'held', uid: 'uid-held-200' },
            heldSince: 'yesterday',
          },
        ],
      },
    });
    const before = await client.get(UNPARSED_LEDGERS, { name });
    const kubeConfig = plane?.kubeConfig();
    if (!kubeConfig) throw new Error('the control plane has not started');
    const namespace = (await newNamespace('unreadable', kubeConfig)).name;
    const provider = await startProvider({}, 'tally-ipam-unreadable-ledger', kubeConfig);
    try {
      await createPool(client, 'TallyIPPool', 'pool', namespace, { addresses: ['10.77.8.1-10.77.8.9'], prefix: 24 });
      await createClaim(client, namespace, 'machine-0', { kind: 'TallyIPPool', name: 'pool' });
      const claim = await waitForReason(client, namespace, 'machine-0', 'AllocationFailed');
      const condition = readyCondition(claim);
      expect(condition?.status).toBe('False');
      expect(condition?.message).toMatch(
        new RegExp(`^TallyAddressLedger ${name.replaceAll('.', '\\.')} cannot be read, so nothing is allocated`),
      );
      expect(condition?.message).toContain('spec.entries[0].heldSince');
      expect(claim.status?.addressRef?.name).toBeUndefined();
      const after = await client.get(UNPARSED_LEDGERS, { name });
      expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    } finally {
      await provider.stop();
    }
  });

  it('the API server still refuses an entry without a required field, naming it', async () => {
    const error = await client
      .create(
        UNPARSED_LEDGERS,
        {
          apiVersion: LEDGER_RESOURCE.apiVersion,
          kind: LEDGER_RESOURCE.kind,
          metadata: { name: 'ip4-10.77.7.0.27' },
          spec: { entries: [{ key: 'ip4-10.77.7.1', address: '10.77.7.1', poolRef: {}, claimRef: {} }] },
        },
        { dryRun: 'All' },
      )
      .then(
        () => undefined,
        (failure: unknown) => failure,
      );
    expect(String(error)).toMatch(/spec\.entries\[0\]\.heldSince: Required value/);
  });
});
