/**
 * Cache memory and event-to-reconcile latency of the controller kit, against a real control plane of its own.
 * Run: `pnpm --filter @tally-ipam/controller-kit bench` (node --expose-gc). Prints figures; asserts nothing.
 *
 *   BENCH_OBJECTS    objects in the memory run (default 50000)
 *   BENCH_EVENTS     updates in the latency run (default 2000), BENCH_RATE writes per second (default 100)
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { startControlPlane } from '@tally-ipam/testenv';
import { pino } from 'pino';
import { Cache } from '../src/cache/cache.js';
import { dropManagedFields, keepObject } from '../src/cache/transform.js';
import { KubeTransport } from '../src/client/transport.js';
import { Controller } from '../src/controller/controller.js';
import { GADGETS, GROUP, PARTS, VERSION } from '../test/fixtures/core-resources.js';
import { apply, applyAll, prepareBenchPlane } from './fill.js';

const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 50_000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 2_000);
const RATE = Number(process.env.BENCH_RATE ?? 100);
const NAMESPACE = 'bench';
const quiet = pino({ level: 'silent' });

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

function settledHeap(): number {
  for (let i = 0; i < 4; i += 1) gc?.();
  return process.memoryUsage().heapUsed;
}

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function measureCacheMemory(kc: KubeConfig, transform: 'dropManagedFields' | 'keep'): Promise<number> {
  const before = settledHeap();
  const cache = new Cache({ kubeConfig: kc, logger: quiet });
  const stop = new AbortController();
  const done = cache.start(stop.signal);
  const informer = cache.informerFor(PARTS, {
    namespace: NAMESPACE,
    transform: transform === 'keep' ? keepObject : dropManagedFields,
  });
  const startedAt = performance.now();
  await cache.waitForCacheSync(AbortSignal.timeout(600_000));
  const syncMs = performance.now() - startedAt;
  const after = settledHeap();
  const count = informer.store.size;
  console.log(
    `cache of ${count} Parts (${transform}): heap +${mb(after - before)}, ${Math.round((after - before) / count)} B/object, initial sync ${(syncMs / 1000).toFixed(1)} s`,
  );
  stop.abort();
  await done;
  return after - before;
}

async function measureLatency(kc: KubeConfig): Promise<void> {
  const gadgets = 20;
  const transport = new KubeTransport(kc);
  await applyAll(transport, NAMESPACE, 'gadgets', gadgets, 4);
  const cache = new Cache({ kubeConfig: kc, logger: quiet });
  const sentAt = new Map<number, number>();
  const latencies: number[] = [];
  const informer = cache.informerFor(GADGETS, { namespace: NAMESPACE });
  const store = informer.store;
  // When the watch event reached the cache: the kit's own share of the latency starts here.
  const arrivedAt = new Map<number, number>();
  const kitLatencies: number[] = [];
  informer.addEventHandler({
    onUpdate: (_old, gadget) => arrivedAt.set(Number(gadget.spec?.size ?? -1), performance.now()),
  });
  const controller = new Controller({
    name: 'bench',
    for: GADGETS,
    forOptions: { namespace: NAMESPACE },
    cache,
    logger: quiet,
    maxConcurrentReconciles: 4,
    reconciler: {
      reconcile: async (request) => {
        const seq = Number(store.get(`${request.namespace}/${request.name}`)?.spec?.size ?? -1);
        const now = performance.now();
        const sent = sentAt.get(seq);
        if (sent !== undefined) {
          latencies.push(now - sent);
          sentAt.delete(seq);
        }
        const arrived = arrivedAt.get(seq);
        if (arrived !== undefined) {
          kitLatencies.push(now - arrived);
          arrivedAt.delete(seq);
        }
        return {};
      },
    },
  });
  const stop = new AbortController();
  const done = Promise.all([cache.start(stop.signal), controller.start(stop.signal)]);
  await cache.waitForCacheSync(AbortSignal.timeout(60_000));

  const writeTimes: number[] = [];
  const interval = 1000 / RATE;
  const start = performance.now();
  const writes: Promise<unknown>[] = [];
  for (let seq = 1; seq <= EVENTS; seq += 1) {
    const due = start + seq * interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const name = `gadget-${seq % gadgets}`;
    const body = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'Gadget',
      metadata: { name, namespace: NAMESPACE },
      spec: { size: seq },
    };
    // Latency counts from the moment the write is sent: the watch event can reach the cache before the write's own
    // response reaches the writer, so the write round trip is reported separately.
    const sent = performance.now();
    sentAt.set(seq, sent);
    writes.push(apply(transport, NAMESPACE, 'gadgets', body).then(() => writeTimes.push(performance.now() - sent)));
  }
  await Promise.all(writes);
  // The last write to each object must be reconciled (earlier ones may have been coalesced into later reconciles).
  const finalWrites = (): number[] => [...sentAt.keys()].filter((seq) => seq > EVENTS - gadgets);
  const deadline = Date.now() + 30_000;
  while (finalWrites().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  stop.abort();
  await done;
  transport.close();
  const sorted = [...latencies].sort((a, b) => a - b);
  const kitSorted = [...kitLatencies].sort((a, b) => a - b);
  const writesSorted = [...writeTimes].sort((a, b) => a - b);
  const stats = (values: readonly number[]): string =>
    `p50 ${percentile(values, 50).toFixed(1)} ms, p90 ${percentile(values, 90).toFixed(1)} ms, ` +
    `p99 ${percentile(values, 99).toFixed(1)} ms, max ${(values.at(-1) ?? Number.NaN).toFixed(1)} ms`;
  console.log(`steady stream: ${EVENTS} updates at ${RATE}/s over ${gadgets} objects, 4 workers`);
  console.log(`  watch event in cache -> reconcile start (${kitSorted.length} samples): ${stats(kitSorted)}`);
  console.log(`  write sent -> reconcile start (${sorted.length} samples): ${stats(sorted)}`);
  console.log(`  write round trip alone (${writesSorted.length} samples): ${stats(writesSorted)}`);
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${OBJECTS} objects, ${EVENTS} events at ${RATE}/s`);
  const plane = await startControlPlane({ ignoreTestKubeconfig: true });
  try {
    const kc = plane.kubeConfig();
    await prepareBenchPlane(kc, NAMESPACE);

    const createStart = performance.now();
    const transport = new KubeTransport(kc);
    await applyAll(transport, NAMESPACE, 'parts', OBJECTS, 16);
    transport.close();
    console.log(
      `created ${OBJECTS} Parts with server-side apply in ${((performance.now() - createStart) / 1000).toFixed(1)} s`,
    );

    const stripped = await measureCacheMemory(kc, 'dropManagedFields');
    const kept = await measureCacheMemory(kc, 'keep');
    console.log(
      `managedFields share of cache memory: ${((1 - stripped / kept) * 100).toFixed(0)}% (kept/stripped ${(kept / stripped).toFixed(2)}×)`,
    );

    await measureLatency(kc);
  } finally {
    await plane.stop();
  }
}

await main();
