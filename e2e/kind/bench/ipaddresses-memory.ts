/**
 * Memory of the IPAM controller's Pod with many IPAddresses cached (a benchmark, not a test): the lane's cluster with
 * one IPAM replica, IPAddresses of one TallyIPPool created directly (as Tally would have written them for bound
 * claims) up to each size, then the container's memory cgroup read — current usage, peak since the start, RSS.
 *
 *   pnpm --filter @tally-ipam/e2e bench:kind-memory [sizes…]      (default 5000 10000 20000 50000)
 *
 * Needs a Docker engine (`.ci/docker-engine.sh start`). Prints one line per size and a Markdown table at the end.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { startLane } from '../lane/lane.js';
import { managerContainers, mebibytes, memoryUsage } from '../lane/memory.js';
import { LANE_PROVIDERS } from '../lane/providers.js';

const NAMESPACE = 'tally-memory-bench';
const POOL = 'bench';
/** A progress line at least this often while objects are created. */
const PROGRESS_MS = 15_000;
/** After the last create, how long the controller gets to process the events before usage is read. */
const SETTLE_MS = 30_000;

const log = (line: string): void => {
  console.error(`[tally-memory-bench] ${line}`);
};

function addressOf(index: number): string {
  return `10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}`;
}

async function forEachLimited(count: number, from: number, limit: number, work: (index: number) => Promise<void>) {
  let next = from;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < count) {
        const index = next;
        next += 1;
        await work(index);
      }
    }),
  );
}

async function main(): Promise<void> {
  const sizes = (process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['5000', '10000', '20000', '50000'])
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0)
    .sort((a, b) => a - b);
  const lane = await startLane({ ipamReplicas: 1, log });
  const rows: string[] = [];
  try {
    const kc = lane.kubeConfig;
    const custom = kc.makeApiClient(CustomObjectsApi);
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NAMESPACE } } });
    await custom.createNamespacedCustomObject({
      group: 'ipam.cluster.x-k8s.io',
      version: 'v1alpha1',
      plural: 'tallyippools',
      namespace: NAMESPACE,
      body: {
        apiVersion: 'ipam.cluster.x-k8s.io/v1alpha1',
        kind: 'TallyIPPool',
        metadata: { name: POOL },
        spec: { addresses: ['10.0.0.0/8'], prefix: 8 },
      },
    });
    const [container] = await managerContainers(kc, LANE_PROVIDERS.ipam.namespace, LANE_PROVIDERS.ipam.podSelector);
    if (!container) throw new Error('no running IPAM controller container');
    const idle = await memoryUsage(container);
    log(`idle: usage ${mebibytes(idle.usage)}, rss ${mebibytes(idle.rss)}, limit ${mebibytes(idle.limit)}`);
    rows.push(`| 0 | ${mebibytes(idle.usage)} | ${mebibytes(idle.peak)} | ${mebibytes(idle.rss)} |`);
    let created = 0;
    for (const size of sizes) {
      const started = Date.now();
      let lastProgress = started;
      await forEachLimited(size, created, 32, async (index) => {
        await custom.createNamespacedCustomObject({
          group: 'ipam.cluster.x-k8s.io',
          version: 'v1beta2',
          plural: 'ipaddresses',
          namespace: NAMESPACE,
          body: {
            apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
            kind: 'IPAddress',
            metadata: { name: `address-${index}` },
            spec: {
              address: addressOf(index + 1),
              prefix: 8,
              claimRef: { name: `claim-${index}` },
              poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: POOL },
            },
          },
        });
        if (Date.now() - lastProgress > PROGRESS_MS) {
          lastProgress = Date.now();
          log(`${index + 1}/${size} IPAddresses created (${((Date.now() - started) / 1000).toFixed(0)} s)`);
        }
      });
      created = size;
      await delay(SETTLE_MS);
      const usage = await memoryUsage(container);
      const line = `${size} IPAddresses: usage ${mebibytes(usage.usage)}, peak ${mebibytes(usage.peak)}, rss ${mebibytes(usage.rss)} (created in ${((Date.now() - started - SETTLE_MS) / 1000).toFixed(0)} s)`;
      log(line);
      rows.push(`| ${size} | ${mebibytes(usage.usage)} | ${mebibytes(usage.peak)} | ${mebibytes(usage.rss)} |`);
    }
  } finally {
    await lane.stop();
  }
  process.stdout.write(
    `| IPAddresses cached | cgroup usage | cgroup peak | RSS |\n|---|---|---|---|\n${rows.join('\n')}\n`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
