/**
 * Bytes of JS heap the provider's caches hold per bound claim (its claim, its IPAddress and its ledger entry), without a
 * control plane: wire-shaped lists (as kube-apiserver returns them, managedFields included, in 64 KiB chunks) go
 * through what the cache does to them — the list cut into items, JSON.parse, the resource's schema, the informer's
 * transform — into stores with the provider's indexes, and the ledger entries through the view the reconcilers read.
 * Also prints the decode time per object. FOOTPRINT_TRANSFORM=compact measures the copy the cache made before it
 * compacted in place, FOOTPRINT_TRANSFORM=drop-managed-fields the cache's transform before compaction;
 * FOOTPRINT_KEEP_MANAGED_FIELDS=1 parses the managedFields the list otherwise leaves out.
 * Run: `pnpm --filter @tally-ipam/ipam-provider exec node --expose-gc --import tsx bench/cache-footprint.ts [claims]`.
 * `BENCH_README=on` writes the result into this package's README (`bench:cache-footprint`, the row of this size and
 * decode).
 */
import { fileURLToPath } from 'node:url';
import { ADDRESS_RESOURCE, CLAIM_RESOURCE } from '@tally-ipam/api-types';
import {
  compactObject,
  decodeCompacted,
  dropManagedFields,
  indexByNamespace,
  indexByOwnerUID,
  type KubeObject,
  ListItemSplitter,
  NAMESPACE_INDEX,
  OWNER_UID_INDEX,
  type ResourceEventHandler,
  Store,
} from '@tally-ipam/controller-kit/cache';
import { compiledSchema } from '@tally-ipam/controller-kit/client';
import { LEDGER_RESOURCE, LedgerEntryView, type StoredLedger } from '@tally-ipam/ledger';
import { benchDate, describeMachine, writeBenchTable } from '@tally-ipam/testenv';
import type { z } from 'zod';
import { ADDRESS_INDEXERS, CLAIM_INDEXERS, HOLDING_INDEXERS } from '../src/indexes.js';

const CLAIMS = Number(process.argv[2] ?? 20_000);
const NAMESPACE = 'bench-memory-0a1b2c';
const POOL = 'big';
const POOL_UID = 'fda7e6a2-eef9-4527-8124-940b1b6413e1';
const GROUP = 'ipam.cluster.x-k8s.io';

function uid(index: number, salt: number): string {
  const hex = (index * 2654435761 + salt * 40503).toString(16).padStart(12, '0').slice(-12);
  return `${hex.slice(0, 8)}-${salt.toString(16).padStart(4, '0')}-4${hex.slice(0, 3)}-8${hex.slice(3, 6)}-${hex}`;
}

function time(index: number): string {
  return new Date(Date.UTC(2026, 10, 24, 23, 0, Math.floor(index / 50))).toISOString().replace(/\.\d+Z$/, 'Z');
}

function address(index: number): string {
  return `10.1.${Math.floor(index / 250) + 1}.${(index % 250) + 1}`;
}

function managedFields(manager: string, at: string, fields: unknown, subresource?: string): unknown[] {
  return [
    {
      manager,
      operation: 'Update',
      apiVersion: `${GROUP}/v1beta2`,
      time: at,
      fieldsType: 'FieldsV1',
      fieldsV1: fields,
      ...(subresource ? { subresource } : {}),
    },
  ];
}

function claimJSON(index: number): string {
  const name = `prefill-${index}`;
  const at = time(index);
  return JSON.stringify({
    apiVersion: `${GROUP}/v1beta2`,
    kind: 'IPAddressClaim',
    metadata: {
      name,
      namespace: NAMESPACE,
      uid: uid(index, 1),
      resourceVersion: String(100_000 + index * 7),
      generation: 1,
      creationTimestamp: at,
      finalizers: [`${GROUP}/tally-release-address`],
      managedFields: [
        ...managedFields('bench-prefill-tally', at, {
          'f:metadata': { 'f:finalizers': { '.': {}, [`v:"${GROUP}/tally-release-address"`]: {} } },
          'f:spec': {
            '.': {},
            'f:clusterName': {},
            'f:poolRef': { '.': {}, 'f:apiGroup': {}, 'f:kind': {}, 'f:name': {} },
          },
        }),
        ...managedFields(
          'bench-prefill-tally',
          at,
          { 'f:status': { '.': {}, 'f:addressRef': { '.': {}, 'f:name': {} }, 'f:conditions': {} } },
          'status',
        ),
      ],
    },
    spec: { clusterName: 'bench', poolRef: { apiGroup: GROUP, kind: 'TallyIPPool', name: POOL } },
    status: {
      addressRef: { name },
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'AddressAllocated',
          message: `${address(index)} allocated from TallyIPPool ${NAMESPACE}/${POOL} (IPAddress ${name})`,
          lastTransitionTime: at,
          observedGeneration: 1,
        },
      ],
    },
  });
}

function addressJSON(index: number): string {
  const name = `prefill-${index}`;
  const at = time(index);
  return JSON.stringify({
    apiVersion: `${GROUP}/v1beta2`,
    kind: 'IPAddress',
    metadata: {
      name,
      namespace: NAMESPACE,
      uid: uid(index, 2),
      resourceVersion: String(100_001 + index * 7),
      generation: 1,
      creationTimestamp: at,
      finalizers: [`${GROUP}/tally-protect-address`],
      ownerReferences: [
        {
          apiVersion: `${GROUP}/v1beta2`,
          kind: 'IPAddressClaim',
          name,
          uid: uid(index, 1),
          controller: true,
          blockOwnerDeletion: true,
        },
        {
          apiVersion: `${GROUP}/v1alpha1`,
          kind: 'TallyIPPool',
          name: POOL,
          uid: POOL_UID,
          controller: false,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: managedFields('bench-prefill-tally', at, {
        'f:metadata': { 'f:finalizers': {}, 'f:ownerReferences': {} },
        'f:spec': { '.': {}, 'f:address': {}, 'f:claimRef': {}, 'f:poolRef': {}, 'f:prefix': {} },
      }),
    },
    spec: {
      address: address(index),
      prefix: 16,
      poolRef: { apiGroup: GROUP, kind: 'TallyIPPool', name: POOL },
      claimRef: { name },
    },
  });
}

function ledgerJSON(block: number, indexes: readonly number[]): string {
  return JSON.stringify({
    apiVersion: `${GROUP}/v1alpha1`,
    kind: 'TallyAddressLedger',
    metadata: {
      name: `ip4-10.1.${block}.0-24`,
      uid: uid(block, 3),
      resourceVersion: String(900_000 + block),
      generation: 3,
      creationTimestamp: time(0),
      managedFields: managedFields('tally', time(0), { 'f:spec': { 'f:entries': {} } }),
    },
    spec: {
      entries: indexes.map((index) => ({
        key: `ip4-${address(index)}`,
        address: address(index),
        poolRef: { apiGroup: GROUP, kind: 'TallyIPPool', namespace: NAMESPACE, name: POOL },
        claimRef: { namespace: NAMESPACE, name: `prefill-${index}`, uid: uid(index, 1) },
        heldSince: time(index),
      })),
    },
  });
}

function heapUsed(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const CHUNK_BYTES = 64 * 1024;

/** A list response's body as kube-apiserver writes it. */
function listBody(kind: string, items: readonly string[]): Buffer {
  return Buffer.from(
    `{"kind":"${kind}List","apiVersion":"${GROUP}/v1beta2","metadata":{"resourceVersion":"1"},"items":[${items.join(',')}]}`,
  );
}

/** What the reflector and informer do to a list from the wire, object by object, in the chunks a socket delivers. */
function decodeList<T extends KubeObject>(
  resource: { schema: z.ZodType<T> },
  body: Buffer,
  onObject: (object: T) => void,
): void {
  const splitter = new ListItemSplitter({ omitManagedFields: process.env.FOOTPRINT_KEEP_MANAGED_FIELDS !== '1' });
  // FOOTPRINT_INTERPRETED_SCHEMA=1: zod's interpreter, as before the cache compiled its schemas.
  const schema = process.env.FOOTPRINT_INTERPRETED_SCHEMA === '1' ? resource.schema : compiledSchema(resource.schema);
  // The cache's own decode, unless a transform is named: FOOTPRINT_TRANSFORM=compact parses, then compacts a copy (the
  // cache before it compacted in place); =drop-managed-fields parses, then only drops managedFields.
  const transform = {
    compact: compactObject<T>,
    'drop-managed-fields': dropManagedFields<T>,
  }[process.env.FOOTPRINT_TRANSFORM ?? ''];
  const decode = transform
    ? (raw: unknown) => transform(schema.parse(raw))
    : (raw: unknown) => decodeCompacted(schema, raw);
  for (let at = 0; at < body.length; at += CHUNK_BYTES) {
    for (const item of splitter.push(body.subarray(at, at + CHUNK_BYTES))) onObject(decode(JSON.parse(item)));
  }
  splitter.end();
}

const claimList = listBody(
  'IPAddressClaim',
  Array.from({ length: CLAIMS }, (_, index) => claimJSON(index)),
);
const addressList = listBody(
  'IPAddress',
  Array.from({ length: CLAIMS }, (_, index) => addressJSON(index)),
);
const ledgerJSONs: string[] = [];
for (let first = 0; first < CLAIMS; first += 250) {
  const indexes = Array.from({ length: Math.min(250, CLAIMS - first) }, (_, offset) => first + offset);
  ledgerJSONs.push(ledgerJSON(first / 250 + 1, indexes));
}
const ledgerList = listBody('TallyAddressLedger', ledgerJSONs);

// Every informer's store carries the namespace and owner-uid indexes; the provider adds its own (see setup.ts).
const informerIndexers = { [NAMESPACE_INDEX]: indexByNamespace, [OWNER_UID_INDEX]: indexByOwnerUID };
const claims = new Store({ ...informerIndexers, ...CLAIM_INDEXERS });
const addresses = new Store({ ...informerIndexers, ...ADDRESS_INDEXERS });
const ledgers = new Store<StoredLedger>(informerIndexers);
const ledgerHandlers: ResourceEventHandler<StoredLedger>[] = [];
const view = new LedgerEntryView(
  {
    addEventHandler: (handler) => {
      ledgerHandlers.push(handler);
      return { remove: () => {} };
    },
  },
  HOLDING_INDEXERS,
);

const before = heapUsed();
const started = performance.now();
decodeList(CLAIM_RESOURCE, claimList, (claim) => claims.upsert(claim));
decodeList(ADDRESS_RESOURCE, addressList, (address) => addresses.upsert(address));
decodeList(LEDGER_RESOURCE, ledgerList, (ledger) => {
  ledgers.upsert(ledger);
  for (const handler of ledgerHandlers) handler.onAdd?.(ledger, true);
});
const decodeMs = performance.now() - started;
const after = heapUsed();
const perClaim = (after - before) / CLAIMS;
console.log(
  `${CLAIMS} bound claims (claim + IPAddress + ledger entry): ${(perClaim / 1024).toFixed(2)} KiB of heap per claim, ` +
    `${((after - before) / 1048576).toFixed(1)} MiB in all; decode ${((decodeMs * 1000) / (CLAIMS * 2)).toFixed(1)} µs per object ` +
    `(${(decodeMs / 1000).toFixed(2)} s in all); process RSS ${(process.memoryUsage().rss / 1048576).toFixed(0)} MiB`,
);
// Keep the stores alive until after the measurement.
// The texts too: optimized code treats a variable it no longer reads as garbage, and the baseline holds them.
if (claims.size + addresses.size + ledgers.size + view.store.size < 0) console.log('unreachable');
if (claimList.length + addressList.length + ledgerList.length < 0) console.log('unreachable');
if (process.env.BENCH_README === 'on') {
  const decode = [
    process.env.FOOTPRINT_TRANSFORM ?? "the cache's",
    process.env.FOOTPRINT_KEEP_MANAGED_FIELDS ? 'managedFields parsed' : '',
  ];
  writeBenchTable(fileURLToPath(new URL('../README.md', import.meta.url)), {
    name: 'cache-footprint',
    caption:
      "Heap the provider's caches hold per bound claim (its claim, IPAddress and ledger entry), decoded as the cache " +
      'decodes a list, without a control plane (`BENCH_README=on pnpm --filter @tally-ipam/ipam-provider exec node ' +
      "--expose-gc --import tsx bench/cache-footprint.ts [claims]`). Target: at most half the reference provider's " +
      'memory at 50,000 claims (the claims benchmark measures the whole process).',
    header: ['bound claims, decode', 'KiB of heap per claim', 'MiB in all', 'decode, µs per object', 'measured'],
    rows: [
      [
        `${CLAIMS}, ${decode.filter(Boolean).join(', ')}`,
        (perClaim / 1024).toFixed(2),
        ((after - before) / 1048576).toFixed(1),
        ((decodeMs * 1000) / (CLAIMS * 2)).toFixed(1),
        `${benchDate()}; ${describeMachine()}`,
      ],
    ],
  });
}
if (process.env.FOOTPRINT_SNAPSHOT) (await import('node:v8')).writeHeapSnapshot(process.env.FOOTPRINT_SNAPSHOT);
