/**
 * What one informer's initial read costs each process, by the way the reflector reads: a watch-list, one consistent
 * LIST answered in a single response and read item by item (the default), the same with each item's managedFields
 * parsed and then dropped (as a cache with its own transform does), and a LIST in pages of 500. One control plane holds
 * BENCH_OBJECTS Parts written by server-side apply, padded to BENCH_OBJECT_BYTES on the wire (default ~1,300, an
 * IPAddressClaim's size with its managedFields); then a fresh cache reads them BENCH_ROUNDS times per way, the ways
 * taking turns in a rotating order so none always runs first. Prints, per read, the CPU seconds of kube-apiserver,
 * etcd and this process (its GC threads included), the wall time, and how far this process's heap grew (sampled every
 * 20 ms: a LIST in one response holds its whole body and every raw object at once); then medians, with ratios to the
 * watch-list. Asserts nothing.
 * Run: `pnpm --filter @tally-ipam/controller-kit exec node --import tsx bench/initial-read-cost.ts`.
 */
import { loadavg } from 'node:os';
import { type ControlPlane, processCpuSeconds, startControlPlane } from '@tally-ipam/testenv';
import { pino } from 'pino';
import { Cache } from '../src/cache/cache.js';
import { compactObject } from '../src/cache/compact.js';
import type { ReflectorOptions } from '../src/cache/reflector.js';
import { KubeTransport } from '../src/client/transport.js';
import { PARTS } from '../test/fixtures/core-resources.js';
import { applyAll, prepareBenchPlane } from './fill.js';

const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 20_000);
const OBJECT_BYTES = Number(process.env.BENCH_OBJECT_BYTES ?? 1_300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const NAMESPACE = 'bench-read';
const quiet = pino({ level: 'silent' });

/**
 * The ways an informer can learn the full state, as reflector options. `parseManagedFields` gives the informer the
 * default transform as its own, so the list cannot leave managedFields out before parsing.
 */
interface Way {
  readonly name: string;
  readonly options: ReflectorOptions;
  readonly parseManagedFields?: boolean;
}
const WAYS: readonly Way[] = [
  { name: 'watch-list', options: { watchList: true } },
  { name: 'LIST, one response', options: { watchList: false, pageSize: 0 } },
  { name: 'LIST, managedFields parsed', options: { watchList: false, pageSize: 0 }, parseManagedFields: true },
  { name: 'LIST, pages of 500', options: { watchList: false, pageSize: 500 } },
];

interface ReadCost {
  readonly apiServerCpu: number;
  readonly etcdCpu: number;
  readonly ownCpu: number;
  readonly wallSeconds: number;
  readonly peakHeapGrowthMiB: number;
  readonly objects: number;
}

function cpuOf(pids: Record<string, number>, name: string): number {
  const pid = pids[name];
  if (pid === undefined) throw new Error(`the control plane runs no ${name} (it runs ${Object.keys(pids).join(', ')})`);
  return processCpuSeconds(pid);
}

function ownCpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

/** One fresh cache reading every Part until it has synced, with what that cost each process. */
async function readOnce(plane: ControlPlane, way: Way): Promise<ReadCost> {
  const pids = plane.processIds();
  const cache = new Cache({ kubeConfig: plane.kubeConfig(), logger: quiet, reflector: way.options });
  const informer = cache.informerFor(PARTS, {
    namespace: NAMESPACE,
    ...(way.parseManagedFields ? { transform: compactObject } : {}),
  });
  const stop = new AbortController();
  const apiServerBefore = cpuOf(pids, 'kube-apiserver');
  const etcdBefore = cpuOf(pids, 'etcd');
  const ownBefore = ownCpuSeconds();
  const heapBefore = process.memoryUsage().heapUsed;
  let heapPeak = heapBefore;
  const sampler = setInterval(() => {
    heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
  }, 20);
  const startedAt = performance.now();
  const done = cache.start(stop.signal);
  try {
    await cache.waitForCacheSync(AbortSignal.timeout(600_000));
  } finally {
    clearInterval(sampler);
  }
  const cost: ReadCost = {
    wallSeconds: (performance.now() - startedAt) / 1000,
    apiServerCpu: cpuOf(pids, 'kube-apiserver') - apiServerBefore,
    etcdCpu: cpuOf(pids, 'etcd') - etcdBefore,
    ownCpu: ownCpuSeconds() - ownBefore,
    peakHeapGrowthMiB: (Math.max(heapPeak, process.memoryUsage().heapUsed) - heapBefore) / 1048576,
    objects: informer.store.size,
  };
  stop.abort();
  await done;
  return cost;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

function describe(cost: ReadCost): string {
  return (
    `kube-apiserver ${cost.apiServerCpu.toFixed(2)} CPU s, etcd ${cost.etcdCpu.toFixed(2)}, ` +
    `this process ${cost.ownCpu.toFixed(2)}; wall ${cost.wallSeconds.toFixed(2)} s; heap +${cost.peakHeapGrowthMiB.toFixed(0)} MiB at most`
  );
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${OBJECTS} Parts of ~${OBJECT_BYTES} bytes, ${ROUNDS} rounds per way`);
  const plane = await startControlPlane({ ignoreTestKubeconfig: true });
  try {
    const kc = plane.kubeConfig();
    await prepareBenchPlane(kc, NAMESPACE);
    const transport = new KubeTransport(kc);
    const filling = setInterval(() => console.log('  filling…'), 15_000);
    const fillStart = performance.now();
    try {
      // The envelope, metadata and managedFields of a Part take ~600 bytes; the payload pads it to the size asked.
      await applyAll(transport, NAMESPACE, 'parts', OBJECTS, 16, Math.max(0, OBJECT_BYTES - 600));
    } finally {
      clearInterval(filling);
      transport.close();
    }
    console.log(`applied ${OBJECTS} Parts in ${((performance.now() - fillStart) / 1000).toFixed(1)} s`);

    // One read that is not counted: no way should pay for this process's JIT warming up.
    await readOnce(plane, WAYS[0] as Way);
    const costs = new Map<string, ReadCost[]>(WAYS.map((way) => [way.name, []]));
    for (let round = 0; round < ROUNDS; round += 1) {
      for (let turn = 0; turn < WAYS.length; turn += 1) {
        const way = WAYS[(round + turn) % WAYS.length] as Way;
        const cost = await readOnce(plane, way);
        if (cost.objects !== OBJECTS) throw new Error(`${way.name} read ${cost.objects} Parts, not ${OBJECTS}`);
        costs.get(way.name)?.push(cost);
        console.log(`round ${round + 1}, ${way.name.padEnd(26)}: ${describe(cost)} (load ${loadAverage()})`);
      }
    }

    const baseline = costs.get(WAYS[0]?.name ?? '') ?? [];
    const baselineApiServer = median(baseline.map((cost) => cost.apiServerCpu));
    const baselineOwn = median(baseline.map((cost) => cost.ownCpu));
    console.log(`medians over ${ROUNDS} rounds (ratios to the watch-list):`);
    for (const [name, list] of costs) {
      const apiServer = median(list.map((cost) => cost.apiServerCpu));
      const own = median(list.map((cost) => cost.ownCpu));
      console.log(
        `  ${name.padEnd(26)}: kube-apiserver ${apiServer.toFixed(2)} CPU s (${(apiServer / baselineApiServer).toFixed(2)}×), ` +
          `this process ${own.toFixed(2)} (${(own / baselineOwn).toFixed(2)}×), ` +
          `etcd ${median(list.map((cost) => cost.etcdCpu)).toFixed(2)}, wall ${median(list.map((cost) => cost.wallSeconds)).toFixed(2)} s, ` +
          `heap +${median(list.map((cost) => cost.peakHeapGrowthMiB)).toFixed(0)} MiB`,
      );
    }
  } finally {
    await plane.stop();
  }
}

function loadAverage(): string {
  return loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');
}

await main();
