import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTallyAddressLedger, tallyAddressLedgerCustomResourceDefinition } from '../src/index.js';

const entry = (key: string, uid: string) => ({
  key,
  address: '10.0.0.1',
  poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', namespace: 'n', name: 'p' },
  claimRef: { namespace: 'n', name: `c-${uid}`, uid },
  heldSince: '2026-11-24T00:00:00Z',
});

const ledger = (entries: unknown[]) => ({
  apiVersion: 'ipam.cluster.x-k8s.io/v1alpha1',
  kind: 'TallyAddressLedger',
  metadata: { name: 'ip4-10.0.0.0.27' },
  spec: { entries },
});

const keys = fc
  .uniqueArray(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 64 })
  .map((lasts) => lasts.map((last) => `ip4-10.0.0.${last}`));

describe('TallyAddressLedger: one entry per key, checked by every reader', () => {
  it('parses any ledger whose keys are distinct', () => {
    fc.assert(
      fc.property(keys, (distinct) => {
        expect(parseTallyAddressLedger(ledger(distinct.map((key, i) => entry(key, `u${i}`)))).success).toBe(true);
      }),
    );
  });

  it('refuses a ledger with a key twice, naming the later entry, the key and the earlier index', () => {
    fc.assert(
      fc.property(keys, fc.nat(), fc.nat(), (distinct, from, at) => {
        const entries = distinct.map((key, i) => entry(key, `u${i}`));
        const source = from % entries.length;
        const position = at % (entries.length + 1);
        const repeated = distinct[source] as string;
        entries.splice(position, 0, entry(repeated, 'intruder'));
        const result = parseTallyAddressLedger(ledger(entries));
        expect(result.success).toBe(false);
        if (result.success) return;
        const first = entries.findIndex((candidate) => candidate.key === repeated);
        const second = entries.findIndex((candidate, i) => i > first && candidate.key === repeated);
        expect(result.error.issues.map((issue) => issue.path)).toEqual([`spec.entries[${second}].key`]);
        expect(result.error.message).toContain(`"${repeated}" is already the key of entries[${first}]`);
      }),
    );
  });

  it.each([
    ['an address that is not text', { address: 10 }, 'spec.entries[1].address'],
    ['a heldSince that is not a time', { heldSince: 'yesterday' }, 'spec.entries[1].heldSince'],
    [
      'a claim name that is not a Kubernetes name',
      { claimRef: { namespace: 'n', name: 'Not_A_Name', uid: 'u' } },
      'spec.entries[1].claimRef.name',
    ],
    ['a key longer than 63 characters', { key: `ip4-${'1'.repeat(60)}` }, 'spec.entries[1].key'],
  ])(
    'refuses a ledger with %s in an entry, naming the field (the API server no longer checks entry fields)',
    (_, change, path) => {
      const result = parseTallyAddressLedger(
        ledger([entry('ip4-10.0.0.1', 'a'), { ...entry('ip4-10.0.0.2', 'b'), ...change }]),
      );
      expect(result.success).toBe(false);
      if (result.success) return;
      expect(result.error.issues.map((issue) => issue.path)).toEqual([path]);
    },
  );

  it('ships each entry unchecked by the API server but for its required fields, so a full ledger is half as costly to write', () => {
    const crd = tallyAddressLedgerCustomResourceDefinition();
    const items = crd.spec.versions[0]?.schema?.openAPIV3Schema.properties?.spec?.properties?.entries?.items;
    expect(items).toMatchObject({
      type: 'object',
      required: ['key', 'address', 'poolRef', 'claimRef', 'heldSince'],
      'x-kubernetes-preserve-unknown-fields': true,
    });
    expect(items?.properties).toBeUndefined();
  });

  it('ships spec.entries as an atomic list: the API server keeps managed fields of one line, not one per entry', () => {
    const crd = tallyAddressLedgerCustomResourceDefinition();
    const entries = crd.spec.versions[0]?.schema?.openAPIV3Schema.properties?.spec?.properties?.entries;
    expect(entries?.['x-kubernetes-list-type']).toBe('atomic');
    expect(entries?.['x-kubernetes-list-map-keys']).toBeUndefined();
  });
});
