/**
 * CPU and memory of the cache's default transform (`compactObject`) per cached IPAddressClaim-shaped object, printed
 * beside the `JSON.parse` of the same object (the decode every cached object costs anyway) as a ratio, and of its
 * in-place form (`compactDecoded`, what the cache does to objects fresh from the wire) as a ratio to the copy.
 * Run: `pnpm --filter @tally-ipam/controller-kit exec node --expose-gc --import tsx bench/compact-bench.ts`.
 * Asserts nothing.
 */
import { compactDecoded, compactObject } from '../src/cache/compact.js';
import type { KubeObject } from '../src/cache/object.js';

const OBJECTS = 50_000;
const ROUNDS = 6;

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

function claimText(index: number): string {
  const time = '2026-11-25T05:00:00Z';
  return JSON.stringify({
    apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
    kind: 'IPAddressClaim',
    metadata: {
      name: `claim-${index}`,
      namespace: 'bench',
      uid: `6f1c2a4e-${String(index).padStart(4, '0')}-4b7e-9a1d-3c5e7f9b1d2f`,
      resourceVersion: String(100_000 + index),
      generation: 1,
      creationTimestamp: time,
      labels: { 'cluster.x-k8s.io/cluster-name': 'bench' },
      finalizers: ['ipam.cluster.x-k8s.io/ReleaseAddress'],
      managedFields: [
        { manager: 'bench', operation: 'Update', time, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } },
      ],
    },
    spec: { clusterName: 'bench', poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: 'big' } },
    status: {
      addressRef: { name: `claim-${index}` },
      conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', lastTransitionTime: time, observedGeneration: 1 }],
    },
  });
}

function settledHeap(): number {
  for (let i = 0; i < 4; i += 1) gc?.();
  return process.memoryUsage().heapUsed;
}

const texts = Array.from({ length: OBJECTS }, (_, index) => claimText(index));
let kept: KubeObject[] = [];
for (let round = 1; round <= ROUNDS; round += 1) {
  const parseStart = performance.now();
  const parsed = texts.map((text) => JSON.parse(text) as KubeObject);
  const parseMs = performance.now() - parseStart;
  const compactStart = performance.now();
  kept = parsed.map((object) => compactObject(object));
  const compactMs = performance.now() - compactStart;
  // In place, on objects of their own (the copy above left `parsed` as it was).
  const reparsed = texts.map((text) => JSON.parse(text) as KubeObject);
  const inPlaceStart = performance.now();
  kept = reparsed.map((object) => compactDecoded(object));
  const inPlaceMs = performance.now() - inPlaceStart;
  const perObject = (ms: number): string => `${((ms * 1000) / OBJECTS).toFixed(2)} µs`;
  console.log(
    `round ${round}: JSON.parse ${perObject(parseMs)}, compactObject ${perObject(compactMs)} per object ` +
      `(${(compactMs / parseMs).toFixed(2)}× the parse), compactDecoded ${perObject(inPlaceMs)} ` +
      `(${(inPlaceMs / compactMs).toFixed(2)}× compactObject)${round === 1 ? ' — warm-up' : ''}`,
  );
}
for (const [name, compact] of [
  ['compactObject', compactObject],
  ['compactDecoded', compactDecoded],
] as const) {
  kept = [];
  const without = settledHeap();
  kept = texts.map((text) => compact(JSON.parse(text) as KubeObject));
  const withObjects = settledHeap();
  console.log(`retained per object by ${name}: ${((withObjects - without) / kept.length).toFixed(0)} bytes`);
}
