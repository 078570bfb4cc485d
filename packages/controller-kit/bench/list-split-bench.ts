/**
 * CPU per byte of cutting a list response into its items (`ListItemSplitter`), printed as a ratio to a bare byte loop
 * over the same chunks in the same process (the floor any scanner written in JavaScript meets). The body is a list of
 * bound IPAddressClaims as kube-apiserver writes them (compact JSON, two managedFields entries), read in 64 KiB chunks
 * as the HTTP client hands them over. JSON.parse of the same items is printed for scale.
 * Run: `pnpm --filter @tally-ipam/controller-kit exec node --import tsx bench/list-split-bench.ts`. Asserts nothing
 * but that every way found every item.
 *
 *   SPLIT_OBJECTS  claims in the body (default 50000)
 *   SPLIT_ROUNDS   rounds per way, ways in rotating order (default 7)
 */
import { ListItemSplitter } from '../src/cache/list-items.js';

const OBJECTS = Number(process.env.SPLIT_OBJECTS ?? 50_000);
const ROUNDS = Number(process.env.SPLIT_ROUNDS ?? 7);
const CHUNK_BYTES = 64 * 1024;

function claim(index: number): unknown {
  const time = '2026-11-25T05:00:00Z';
  const name = `claim-${index}`;
  return {
    apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
    kind: 'IPAddressClaim',
    metadata: {
      creationTimestamp: time,
      finalizers: ['ipam.cluster.x-k8s.io/ReleaseAddress'],
      generation: 1,
      labels: { 'cluster.x-k8s.io/cluster-name': 'bench' },
      managedFields: [
        {
          apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:labels': { '.': {}, 'f:cluster.x-k8s.io/cluster-name': {} } },
            'f:spec': {
              '.': {},
              'f:clusterName': {},
              'f:poolRef': { '.': {}, 'f:apiGroup': {}, 'f:kind': {}, 'f:name': {} },
            },
          },
          manager: 'bench',
          operation: 'Update',
          time,
        },
        {
          apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:finalizers': { '.': {}, 'v:"ipam.cluster.x-k8s.io/ReleaseAddress"': {} } },
            'f:status': { '.': {}, 'f:addressRef': { '.': {}, 'f:name': {} }, 'f:conditions': {} },
          },
          manager: 'tally-ipam',
          operation: 'Update',
          subresource: 'status',
          time,
        },
      ],
      name,
      namespace: 'bench',
      resourceVersion: String(100_000 + index),
      uid: `6f1c2a4e-${String(index).padStart(4, '0')}-4b7e-9a1d-3c5e7f9b1d2f`,
    },
    spec: { clusterName: 'bench', poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: 'big' } },
    status: {
      addressRef: { name },
      conditions: [
        {
          lastTransitionTime: time,
          message: '',
          observedGeneration: 1,
          reason: 'Ready',
          status: 'True',
          type: 'Ready',
        },
      ],
    },
  };
}

function listBody(): Buffer {
  const items = Array.from({ length: OBJECTS }, (_, index) => claim(index));
  return Buffer.from(
    JSON.stringify({
      apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
      items,
      kind: 'IPAddressClaimList',
      metadata: { resourceVersion: '200000' },
    }),
  );
}

function chunks(body: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  for (let at = 0; at < body.length; at += CHUNK_BYTES) parts.push(body.subarray(at, at + CHUNK_BYTES));
  return parts;
}

interface Way {
  readonly name: string;
  /** Returns how many items (or, for the floor, quotes) it found, so no way can be optimized away. */
  readonly run: (parts: readonly Buffer[]) => number;
}

const WAYS: readonly Way[] = [
  {
    name: 'bare byte loop (floor)',
    run: (parts) => {
      let quotes = 0;
      for (const part of parts) {
        for (let index = 0; index < part.length; index += 1) if (part[index] === 0x22) quotes += 1;
      }
      return quotes;
    },
  },
  {
    name: 'splitter',
    run: (parts) => {
      const splitter = new ListItemSplitter();
      let items = 0;
      for (const part of parts) items += splitter.push(part).length;
      splitter.end();
      return items;
    },
  },
  {
    name: 'splitter, managedFields left out',
    run: (parts) => {
      const splitter = new ListItemSplitter({ omitManagedFields: true });
      let items = 0;
      for (const part of parts) items += splitter.push(part).length;
      splitter.end();
      return items;
    },
  },
  {
    name: 'JSON.parse of every item (for scale)',
    run: () => {
      let items = 0;
      for (const text of itemTexts) if (JSON.parse(text) !== null) items += 1;
      return items;
    },
  },
];

const textSplitter = new ListItemSplitter();

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

const body = listBody();
const parts = chunks(body);
const itemTexts = parts.flatMap((part) => textSplitter.push(part));
console.log(
  `node ${process.version}: ${OBJECTS} claims, ${(body.length / 1024 / 1024).toFixed(1)} MiB in ${parts.length} chunks`,
);
const nsPerByte = new Map<string, number[]>(WAYS.map((way) => [way.name, []]));
for (let round = 0; round < ROUNDS; round += 1) {
  for (let turn = 0; turn < WAYS.length; turn += 1) {
    const way = WAYS[(round + turn) % WAYS.length] as Way;
    const start = process.cpuUsage();
    const found = way.run(parts);
    const used = process.cpuUsage(start);
    if (way.name !== 'bare byte loop (floor)' && found !== OBJECTS) {
      throw new Error(`${way.name} found ${found} items, not ${OBJECTS}`);
    }
    nsPerByte.get(way.name)?.push(((used.user + used.system) * 1000) / body.length);
  }
}
const floor = median(nsPerByte.get(WAYS[0]?.name ?? '') ?? []);
console.log(`medians over ${ROUNDS} rounds (the first round warms the JIT and counts too):`);
for (const [name, values] of nsPerByte) {
  const value = median(values);
  console.log(`  ${name.padEnd(38)} ${value.toFixed(2)} ns/byte (${(value / floor).toFixed(2)}× the floor)`);
}
