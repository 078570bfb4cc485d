/**
 * The ledger CRD's atomic `spec.entries`, on an API server of this file's own (the shared one's CRD never changes, and
 * no other file's helpers, which list every ledger, meet the broken ledger written here):
 * - upgrading from Tally 0.1, whose CRD made it a list-map keyed by `key`: the ledgers 0.1 wrote stay readable and
 *   writable, no entry is lost, and the first write under the new CRD drops the per-entry managed fields;
 * - the atomic list lets a person write a key twice: every reader refuses that ledger, nothing is written over it;
 * - the API server checks only an entry's required fields: an entry malformed otherwise is refused the same way, and
 *   a claim whose address lies in such a ledger says so on its Ready condition.
 */
import {
  AddressLedgerEntry,
  tallyAddressLedgerCustomResourceDefinition,
  tallyCRDDirectory,
  toStructuralSchema,
} from '@tally-ipam/api-types';
import type { Client, ResourceKind } from '@tally-ipam/controller-kit';
import { type ControlPlane, startControlPlane } from '@tally-ipam/testenv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AddressLedgers,
  addressLockName,
  type HeldUnit,
  LEDGER_RESOURCE,
  ledgerNameOf,
  type PoolRef,
} from '../src/index.js';
import {
  createClaim,
  createPool,
  newNamespace,
  readyCondition,
  startProvider,
  testClient,
  waitFor,
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

const CRD_RESOURCE: ResourceKind = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  namespaced: false,
};

/** Read without the provider's schema: the managed fields are what this test looks at. */
const UNPARSED_LEDGERS: ResourceKind = {
  apiVersion: LEDGER_RESOURCE.apiVersion,
  kind: LEDGER_RESOURCE.kind,
  plural: LEDGER_RESOURCE.plural,
  namespaced: false,
};

const POOL: PoolRef = { kind: 'TallyIPPool', namespace: 'upgrade', name: 'pool' };

function unit(last: number): HeldUnit {
  const address = `10.77.0.${last}`;
  return { address, prefix: 24, isPrefix: false, lockName: addressLockName(address) };
}

/** The ledger CRD as this version ships it, or as Tally 0.1 shipped it (a list-map of entries checked field by field). */
async function setLedgerCRD(listMap: boolean): Promise<void> {
  const shipped = tallyAddressLedgerCustomResourceDefinition();
  const versions = structuredClone(shipped.spec.versions) as unknown as {
    schema: { openAPIV3Schema: { properties: { spec: { properties: { entries: Record<string, unknown> } } } } };
  }[];
  for (const version of versions) {
    const entries = version.schema.openAPIV3Schema.properties.spec.properties.entries;
    if (listMap) {
      // 0.1's CRD also had the API server check every field of an entry (a list-map's key must be a declared field).
      entries.items = toStructuralSchema(AddressLedgerEntry);
      entries['x-kubernetes-list-type'] = 'map';
      entries['x-kubernetes-list-map-keys'] = ['key'];
    }
  }
  await client.mergePatch(CRD_RESOURCE, { name: shipped.metadata.name }, { spec: { versions } });
  // In force once a dry-run update of a two-entry ledger with one key twice is refused (list-map) or not (atomic).
  await waitFor(listMap ? 'the list-map ledger CRD in force' : 'the atomic ledger CRD in force', async () => {
    const entry = {
      key: 'ip4-10.77.9.1',
      address: '10.77.9.1',
      poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: 'p' },
      claimRef: { namespace: 'n', name: 'c', uid: 'u' },
      heldSince: '2026-11-24T00:00:00Z',
    };
    try {
      await client.create(
        UNPARSED_LEDGERS,
        {
          apiVersion: LEDGER_RESOURCE.apiVersion,
          kind: LEDGER_RESOURCE.kind,
          metadata: { name: 'ip4-10.77.9.0.24' },
          spec: { entries: [entry, entry] },
        },
        { dryRun: 'All' },
      );
      return !listMap;
    } catch {
      return listMap;
    }
  });
}

function managedFieldsText(object: { metadata: { managedFields?: readonly unknown[] | undefined } }): string {
  return JSON.stringify(object.metadata.managedFields ?? []);
}

describe("the ledger CRD's atomic spec.entries", () => {
  it('keeps every entry of a ledger written under 0.1, and the next write drops the per-entry managed fields', async () => {
    await setLedgerCRD(true);
    const before = new AddressLedgers({ client, now: Date.now });
    const holders = Array.from({ length: 40 }, (_, index) => ({
      namespace: 'upgrade',
      name: `c${index}`,
      uid: `uid-${index}`,
    }));
    await Promise.all(holders.slice(0, 20).map((holder, index) => before.hold(unit(index + 1), POOL, holder, 0)));
    await Promise.all(holders.slice(20, 30).map((holder, index) => before.hold(unit(index + 21), POOL, holder, 0)));
    const name = ledgerNameOf(unit(1));
    const old = await client.get(UNPARSED_LEDGERS, { name });
    // The list-map's managed fields name every entry by its key.
    expect(managedFieldsText(old)).toContain('k:{\\"key\\":\\"ip4-10.77.0.30\\"}');

    await setLedgerCRD(false);
    // A writer of the new version, without memory: it reads the 0.1 ledger and writes on top of it.
    const after = new AddressLedgers({ client, now: Date.now });
    const results = await Promise.all(
      holders.slice(30).map((holder, index) => after.hold(unit(index + 31), POOL, holder, 0)),
    );
    expect(results.every((result) => result.ok)).toBe(true);
    // An address 0.1 handed out is still refused to anyone else.
    expect((await after.hold(unit(5), POOL, { namespace: 'upgrade', name: 'late', uid: 'uid-late' }, 0)).ok).toBe(
      false,
    );

    const live = await client.get(LEDGER_RESOURCE, { name });
    expect(new Map((live.spec.entries ?? []).map((entry) => [entry.key, entry.claimRef.uid]))).toEqual(
      new Map(holders.map((holder, index) => [unit(index + 1).lockName, holder.uid])),
    );
    const upgraded = await client.get(UNPARSED_LEDGERS, { name });
    expect(managedFieldsText(upgraded)).not.toContain('k:{');
    expect(managedFieldsText(upgraded).length).toBeLessThan(managedFieldsText(old).length / 10);
  });

  it('a ledger with a key twice is never written over: holds in its block fail naming the key, nothing changes', async () => {
    await setLedgerCRD(false);
    const duplicated = { ...unit(1), address: '10.77.5.1', lockName: addressLockName('10.77.5.1') };
    const name = ledgerNameOf(duplicated);
    const entry = (uid: string) => ({
      key: duplicated.lockName,
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
    const next = { ...duplicated, address: '10.77.5.2', lockName: addressLockName('10.77.5.2') };
    await expect(
      ledgers.hold(next, POOL, { namespace: 'upgrade', name: 'after-dup', uid: 'uid-after' }, 0),
    ).rejects.toThrow(/"ip4-10\.77\.5\.1" is already the key of entries\[0\][\s\S]*spec\.entries\[1\]\.key/);
    const after = await client.get(UNPARSED_LEDGERS, { name });
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  it('a ledger with a malformed entry is stored by the API server, but never written over: holds fail naming the field', async () => {
    await setLedgerCRD(false);
    const malformed = { ...unit(1), address: '10.77.6.1', lockName: addressLockName('10.77.6.1') };
    const name = ledgerNameOf(malformed);
    const entry = {
      key: malformed.lockName,
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
    const next = { ...malformed, address: '10.77.6.2', lockName: addressLockName('10.77.6.2') };
    await expect(
      ledgers.hold(next, POOL, { namespace: 'upgrade', name: 'after-malformed', uid: 'uid-after-malformed' }, 0),
    ).rejects.toThrow(/spec\.entries\[0\]\.heldSince/);
    const after = await client.get(UNPARSED_LEDGERS, { name });
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  it('a claim whose address lies in a malformed ledger says so on its Ready condition; the ledger is not written over', async () => {
    await setLedgerCRD(false);
    const first = { ...unit(1), address: '10.77.8.1', lockName: addressLockName('10.77.8.1') };
    const name = ledgerNameOf(first);
    await client.create(UNPARSED_LEDGERS, {
      apiVersion: LEDGER_RESOURCE.apiVersion,
      kind: LEDGER_RESOURCE.kind,
      metadata: { name },
      spec: {
        entries: [
          {
            key: addressLockName('10.77.8.200'),
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
    await setLedgerCRD(false);
    const error = await client
      .create(
        UNPARSED_LEDGERS,
        {
          apiVersion: LEDGER_RESOURCE.apiVersion,
          kind: LEDGER_RESOURCE.kind,
          metadata: { name: 'ip4-10.77.7.0.24' },
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
