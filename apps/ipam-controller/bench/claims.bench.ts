/**
 * Burst benchmark: 2 000 IPAddressClaims created at once in one pool, against a local control plane.
 *
 * Two runs on the same API server, each in its own namespace:
 *   1. the ceiling — a raw client in this process that reacts to each claim with exactly the writes Tally makes per
 *      claim (finalizer patch, lock create, IPAddress create, status patch) and nothing else: no allocator, no cache
 *      reads, no conditions beyond Ready, no pool status;
 *   2. Tally — the built controller (`dist/main.js`) as a child process with its default concurrency.
 * Both see the same burst from the same creator, and claim → bound is measured the same way (create sent → watch
 * event showing `status.addressRef`). API requests come from the API server's own `apiserver_request_total`.
 *
 * Usage: pnpm --filter @tally-ipam/ipam-controller bench   (BENCH_CLAIMS, BENCH_CONCURRENCY to change the size)
 */

import { readFileSync } from 'node:fs';
import { type RequestOptions, request } from 'node:https';
import { setTimeout as delay } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { tallyCRDDirectory } from '@tally-ipam/api-types';
import { Cache, Client, type KubeObject, type ResourceKind } from '@tally-ipam/controller-kit';
import { ADDRESS_FINALIZER, addressLockName, CLAIM_FINALIZER } from '@tally-ipam/ipam-provider';
import { startControlPlane } from '@tally-ipam/testenv';
import { pino } from 'pino';
import { type ControllerProcess, servingPort, startController } from '../test/controller-process.js';
import { forEachLimited } from '../test/random.js';
import { ADDRESSES, CLAIMS, CLUSTERS, claim, cluster, field, ipPool, LOCKS, POOLS } from '../test/support.js';

const CLAIM_COUNT = Number(process.env.BENCH_CLAIMS ?? 2000);
/** Tally's default `--concurrency`; the ceiling gets the same number of workers. */
const WORKERS = Number(process.env.BENCH_CONCURRENCY ?? 10);
/** Creates in flight: "at once" within what one client connection pool sensibly sends. */
const CREATORS = 50;
const NAMESPACES: ResourceKind = { apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false };

interface RunFigures {
  readonly name: string;
  readonly seconds: number;
  readonly claimsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly requestsPerClaim: number;
  readonly requestsByVerb: Readonly<Record<string, number>>;
  /** `VERB resource[/subresource]` → requests, for finding where the requests go. */
  readonly requestsByTarget: Readonly<Record<string, number>>;
  readonly peakRssMiB?: number;
}

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}

interface RequestCounts {
  readonly byVerb: Map<string, number>;
  /** `VERB resource` or `VERB resource/subresource`, e.g. `PATCH ipaddressclaims/status`. */
  readonly byTarget: Map<string, number>;
}

function add(counts: Map<string, number>, key: string, value: number): void {
  counts.set(key, (counts.get(key) ?? 0) + value);
}

/**
 * `apiserver_request_total` summed by verb and by verb + resource, read from the API server's /metrics with the admin
 * credentials. Requests of the API server to itself and of kube-controller-manager are included: they are the same in
 * both runs (no other workload), and the garbage collector's reads are part of what a claim costs.
 */
async function apiRequests(kubeConfig: KubeConfig): Promise<RequestCounts> {
  const server = new URL(kubeConfig.getCurrentCluster()?.server ?? '');
  const options: RequestOptions = { host: server.hostname, port: server.port, path: '/metrics' };
  await kubeConfig.applyToHTTPSOptions(options);
  const body = await new Promise<string>((resolve, reject) => {
    request(options, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () => resolve(text)).on('error', reject);
    })
      .on('error', reject)
      .end();
  });
  const byVerb = new Map<string, number>();
  const byTarget = new Map<string, number>();
  for (const line of body.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const verb = /verb="([A-Z]+)"/.exec(line)?.[1] ?? '?';
    const resource = /[{,]resource="([^"]*)"/.exec(line)?.[1] || '-';
    const subresource = /subresource="([^"]*)"/.exec(line)?.[1];
    const code = /code="(\d+)"/.exec(line)?.[1] ?? '?';
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    add(byVerb, verb, value);
    const failed = code.startsWith('2') ? '' : ` ${code}`;
    add(byTarget, `${verb} ${resource}${subresource ? `/${subresource}` : ''}${failed}`, value);
  }
  return { byVerb, byTarget };
}

function difference(after: Map<string, number>, before: Map<string, number>): Record<string, number> {
  const result: Record<string, number> = {};
  for (const [verb, value] of after) {
    const delta = value - (before.get(verb) ?? 0);
    if (delta > 0) result[verb] = delta;
  }
  return result;
}

/** Records when each claim of `namespace` is first seen bound, from a watch. */
function watchBinds(kubeConfig: KubeConfig, namespace: string, signal: AbortSignal): Map<string, number> {
  const bound = new Map<string, number>();
  const cache = new Cache({ kubeConfig, logger: pino({ level: 'silent' }) });
  const note = (object: KubeObject): void => {
    if (!bound.has(object.metadata.name) && field(object, 'status', 'addressRef', 'name')) {
      bound.set(object.metadata.name, performance.now());
    }
  };
  cache.addEventHandler(CLAIMS, { onAdd: note, onUpdate: (_old, object) => note(object) }, { namespace });
  void cache.start(signal);
  return bound;
}

async function waitForCount(what: string, count: () => number, target: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (count() < target) {
    if (Date.now() > deadline) throw new Error(`${what}: ${count()} of ${target} after ${timeoutMs / 1000} s`);
    await delay(50);
  }
}

/** The ceiling: the four writes Tally makes per claim, by `WORKERS` workers, with no controller logic. */
function startRawWorkers(
  kubeConfig: KubeConfig,
  namespace: string,
  pool: string,
  secondOctet: number,
  signal: AbortSignal,
): void {
  const client = new Client(kubeConfig, { fieldManager: 'bench-ceiling' });
  const queue: KubeObject[] = [];
  const cache = new Cache({ kubeConfig, logger: pino({ level: 'silent' }) });
  cache.addEventHandler(CLAIMS, { onAdd: (object) => queue.push(object) }, { namespace });
  void cache.start(signal);
  let next = 0;
  const work = async (claimObject: KubeObject): Promise<void> => {
    const index = next;
    next += 1;
    const address = `10.${secondOctet}.${Math.floor(index / 250)}.${(index % 250) + 1}`;
    const { name } = claimObject.metadata;
    const patched = await client.mergePatch(
      CLAIMS,
      { namespace, name },
      { metadata: { finalizers: [CLAIM_FINALIZER], resourceVersion: claimObject.metadata.resourceVersion } },
    );
    await client.create(LOCKS, {
      apiVersion: LOCKS.apiVersion,
      kind: LOCKS.kind,
      metadata: { name: addressLockName(address) },
      spec: {
        address,
        poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: pool, namespace },
        claimRef: { namespace, name, uid: claimObject.metadata.uid ?? '' },
      },
    });
    await client.create(ADDRESSES, {
      apiVersion: ADDRESSES.apiVersion,
      kind: ADDRESSES.kind,
      metadata: { name, namespace, finalizers: [ADDRESS_FINALIZER] },
      spec: {
        address,
        prefix: 16,
        poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: pool },
        claimRef: { name },
      },
    });
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await client.patchStatus(CLAIMS, patched, {
      addressRef: { name },
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'AddressAllocated',
          message: '',
          lastTransitionTime: now,
          observedGeneration: 1,
        },
      ],
    });
  };
  for (let worker = 0; worker < WORKERS; worker += 1) {
    void (async () => {
      while (!signal.aborted) {
        const item = queue.shift();
        if (item) await work(item);
        else await delay(2);
      }
    })();
  }
}

async function burst(
  name: string,
  kubeConfig: KubeConfig,
  namespace: string,
  pool: string,
  poolAddresses: string,
  reactor: (signal: AbortSignal) => Promise<ControllerProcess | undefined>,
): Promise<RunFigures> {
  const client = new Client(kubeConfig, { fieldManager: 'bench' });
  await client.create(NAMESPACES, { metadata: { name: namespace } });
  await client.create(CLUSTERS, cluster(namespace, 'bench'));
  await client.create(POOLS, ipPool(namespace, pool, { addresses: [poolAddresses], prefix: 16 }));
  const stop = new AbortController();
  const bound = watchBinds(kubeConfig, namespace, stop.signal);
  const controller = await reactor(stop.signal);
  const before = await apiRequests(kubeConfig);
  const sent = new Map<string, number>();
  const names = Array.from({ length: CLAIM_COUNT }, (_, index) => `claim-${index}`);
  const started = performance.now();
  await forEachLimited(names, CREATORS, async (claimName) => {
    sent.set(claimName, performance.now());
    await client.create(CLAIMS, claim(namespace, claimName, { kind: 'TallyIPPool', name: pool }, 'bench'));
  });
  await waitForCount(`${name}: claims bound`, () => bound.size, CLAIM_COUNT, 600_000);
  const finished = Math.max(...bound.values());
  const after = await apiRequests(kubeConfig);
  const peakRssMiB = controller ? peakRss(controller.pid) : undefined;
  stop.abort();
  await controller?.stop('SIGTERM');
  const latencies = names
    .map((claimName) => (bound.get(claimName) ?? Number.NaN) - (sent.get(claimName) ?? 0))
    .sort((a, b) => a - b);
  const requestsByVerb = difference(after.byVerb, before.byVerb);
  const total = Object.values(requestsByVerb).reduce((sum, value) => sum + value, 0);
  const seconds = (finished - started) / 1000;
  return {
    name,
    seconds,
    claimsPerSecond: CLAIM_COUNT / seconds,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    requestsPerClaim: total / CLAIM_COUNT,
    requestsByVerb,
    requestsByTarget: difference(after.byTarget, before.byTarget),
    ...(peakRssMiB !== undefined ? { peakRssMiB } : {}),
  };
}

/** VmHWM: the process's peak resident set size, from the kernel. */
function peakRss(pid: number): number | undefined {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : undefined;
}

function describe(run: RunFigures): string {
  const verbs = Object.entries(run.requestsByVerb)
    .map(([verb, count]) => `${verb} ${(count / CLAIM_COUNT).toFixed(2)}`)
    .join(', ');
  const targets = Object.entries(run.requestsByTarget)
    .filter(([, count]) => count / CLAIM_COUNT >= 0.005)
    .sort(([, a], [, b]) => b - a)
    .map(([key, count]) => `${key} ${(count / CLAIM_COUNT).toFixed(2)}`)
    .join(', ');
  return [
    `${run.name}:`,
    `  all ${CLAIM_COUNT} bound after ${run.seconds.toFixed(1)} s → ${run.claimsPerSecond.toFixed(1)} claims/s`,
    `  claim → bound latency p50 ${run.p50Ms.toFixed(0)} ms, p99 ${run.p99Ms.toFixed(0)} ms`,
    `  API requests per claim ${run.requestsPerClaim.toFixed(2)} (${verbs}; the claim's own create included)`,
    `    by target (≥ 0.005 per claim; failures with their code): ${targets}`,
    ...(run.peakRssMiB !== undefined ? [`  controller peak RSS ${run.peakRssMiB.toFixed(1)} MiB`] : []),
  ].join('\n');
}

async function main(): Promise<void> {
  console.log(`starting a local control plane (claims: ${CLAIM_COUNT}, workers: ${WORKERS}, creators: ${CREATORS})`);
  const plane = await startControlPlane({
    ignoreTestKubeconfig: true,
    crds: [tallyCRDDirectory()],
    capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'],
    onProgress: (message) => console.log(`  ${message}`),
  });
  try {
    const kubeConfig = plane.kubeConfig();
    // The ceiling runs before and after Tally: the machine is shared, and two runs show how much of a difference
    // is noise. Tally is compared with the faster of the two (the conservative ratio).
    const ceilingRun = (round: number): Promise<RunFigures> =>
      burst(
        `ceiling #${round} (raw client, same writes)`,
        kubeConfig,
        `bench-ceiling-${round}`,
        'ceiling',
        `10.${20 + round}.0.0/20`,
        async (signal) => {
          startRawWorkers(kubeConfig, `bench-ceiling-${round}`, 'ceiling', 20 + round, signal);
          return undefined;
        },
      );
    const before = await ceilingRun(1);
    console.log(describe(before));
    const tally = await burst('Tally (dist/main.js)', kubeConfig, 'bench-tally', 'tally', '10.30.0.0/20', async () => {
      const controller = startController([
        '--kubeconfig',
        plane.kubeconfigPath,
        '--namespace',
        'bench-tally',
        `--concurrency=${WORKERS}`,
        '--metrics-bind-address=127.0.0.1:0',
        '--health-probe-bind-address=0',
        '--webhook-port=0',
      ]);
      await servingPort(controller, 'metrics');
      // Ready once the pool reconciler has written the pool's status: caches synced, controllers running.
      const client = new Client(kubeConfig, { fieldManager: 'bench' });
      for (;;) {
        const pool = await client.get(POOLS, { namespace: 'bench-tally', name: 'tally' });
        if (field(pool, 'status', 'ipAddresses', 'total')) break;
        await delay(100);
      }
      return controller;
    });
    console.log(describe(tally));
    const after = await ceilingRun(2);
    console.log(describe(after));
    const ceiling = before.claimsPerSecond >= after.claimsPerSecond ? before : after;
    const ratio = tally.claimsPerSecond / ceiling.claimsPerSecond;
    console.log(
      `\nTally / faster ceiling (${ceiling.name}): throughput ${(ratio * 100).toFixed(0)} % (target ≥ 70 %), ` +
        `p50 ×${(tally.p50Ms / ceiling.p50Ms).toFixed(2)}, p99 ×${(tally.p99Ms / ceiling.p99Ms).toFixed(2)}, ` +
        `requests per claim ×${(tally.requestsPerClaim / ceiling.requestsPerClaim).toFixed(2)}`,
    );
  } finally {
    await plane.stop();
  }
}

await main();
