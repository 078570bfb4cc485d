/**
 * Memory of the IPAM controller's Pod with many IPAddresses cached (a benchmark, not a test): the lane's cluster with
 * one IPAM replica, IPAddresses of one TallyIPPool created directly (as Tally would have written them for bound
 * claims) up to each size, then the container's memory cgroup read — current usage, peak since the start, RSS.
 *
 *   pnpm --filter @tally-ipam/e2e bench:kind-memory [--process] [--claims] [sizes…]   (default 5000 10000 20000 50000)
 *
 * With `--claims` the IPAddresses come from IPAddressClaims Tally binds (claims, IPAddresses and ledgers
 * cached, the allocator's state: what a running installation holds), not created directly.
 *
 * Needs a Docker engine (`.ci/docker-engine.sh start`). With `--process` the same objects go to testenv's control
 * plane and the built app runs as a local process (no Docker): usage and peak are then the process's RSS and its
 * high-water mark (`VmRSS`, `VmHWM`), which the cgroup figures exceed by the page cache the container touched.
 * Prints one line per size and a Markdown table at the end.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { tallyCRDDirectory } from '@tally-ipam/api-types';
import { forEachLimited, startControlPlane, waitFor } from '@tally-ipam/testenv';
import { z } from 'zod';
import { startApp } from '../../test/apps.js';
import { mebibytes } from '../lane/mebibytes.js';
import { LANE_PROVIDERS } from '../lane/providers.js';

const NAMESPACE = 'tally-memory-bench';
const CLUSTER = 'bench';
const AddressList = z.looseObject({ metadata: z.looseObject({ remainingItemCount: z.number().optional() }) });
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

interface MemoryTarget {
  readonly kubeConfig: KubeConfig;
  /** Current usage, peak and RSS in bytes. */
  read(): Promise<{ usage: number; peak: number; rss: number }>;
  stop(): Promise<void>;
}

/** The IPAM controller as a Pod of the lane (one replica), measured through its container's memory cgroup. */
async function podTarget(): Promise<MemoryTarget> {
  // Loaded only here: `--process` runs without Docker and without @tally-ipam/kind.
  const { startLane } = await import('../lane/lane.js');
  const { managerContainers, memoryUsage } = await import('../lane/memory.js');
  const lane = await startLane({ ipamReplicas: 1, log });
  try {
    const [container] = await managerContainers(
      lane.kubeConfig,
      LANE_PROVIDERS.ipam.namespace,
      LANE_PROVIDERS.ipam.podSelector,
    );
    if (!container) throw new Error('no running IPAM controller container');
    log(`limit of ${container.pod}: ${mebibytes((await memoryUsage(container)).limit)}`);
    return { kubeConfig: lane.kubeConfig, read: () => memoryUsage(container), stop: () => lane.stop() };
  } catch (error) {
    await lane.stop();
    throw error;
  }
}

function statusKiB(pid: number, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match?.[1]) throw new Error(`/proc/${pid}/status has no ${field}`);
  return Number(match[1]) * 1024;
}

/** The built app as a local process on testenv's control plane, measured through /proc (RSS, high-water mark). */
async function processTarget(): Promise<MemoryTarget> {
  const plane = await startControlPlane({
    crds: [tallyCRDDirectory()],
    capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'],
    onProgress: log,
  });
  try {
    const app = await startApp('ipam', plane.kubeconfigPath);
    const pid = app.process.pid;
    return {
      kubeConfig: plane.kubeConfig(),
      read: async () => {
        const rss = statusKiB(pid, 'VmRSS');
        return { usage: rss, peak: statusKiB(pid, 'VmHWM'), rss };
      },
      stop: async () => {
        await app.process.stop();
        await plane.stop();
      },
    };
  } catch (error) {
    await plane.stop();
    throw error;
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const inProcess = args.includes('--process');
  const withClaims = args.includes('--claims');
  const given = args.filter((arg) => !arg.startsWith('--'));
  const sizes = (given.length > 0 ? given : ['5000', '10000', '20000', '50000'])
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0)
    .sort((a, b) => a - b);
  const target = inProcess ? await processTarget() : await podTarget();
  const rows: string[] = [];
  try {
    const kc = target.kubeConfig;
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
    if (withClaims) {
      // The claims' Cluster (Tally reads its pause state); v1beta2 wants a non-empty spec.
      await custom.createNamespacedCustomObject({
        group: 'cluster.x-k8s.io',
        version: 'v1beta2',
        plural: 'clusters',
        namespace: NAMESPACE,
        body: {
          apiVersion: 'cluster.x-k8s.io/v1beta2',
          kind: 'Cluster',
          metadata: { name: CLUSTER },
          spec: { clusterNetwork: { pods: { cidrBlocks: ['192.168.0.0/16'] } } },
        },
      });
    }
    await delay(SETTLE_MS / 3);
    const idle = await target.read();
    log(`idle: usage ${mebibytes(idle.usage)}, rss ${mebibytes(idle.rss)}`);
    rows.push(`| 0 | ${mebibytes(idle.usage)} | ${mebibytes(idle.peak)} | ${mebibytes(idle.rss)} |`);
    let created = 0;
    for (const size of sizes) {
      const started = Date.now();
      let lastProgress = started;
      await forEachLimited(
        Array.from({ length: size - created }, (_, offset) => created + offset),
        32,
        async (index) => {
          if (withClaims) {
            await custom.createNamespacedCustomObject({
              group: 'ipam.cluster.x-k8s.io',
              version: 'v1beta2',
              plural: 'ipaddressclaims',
              namespace: NAMESPACE,
              body: {
                apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
                kind: 'IPAddressClaim',
                metadata: { name: `claim-${index}`, labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER } },
                spec: {
                  clusterName: CLUSTER,
                  poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: POOL },
                },
              },
            });
          } else {
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
          }
          if (Date.now() - lastProgress > PROGRESS_MS) {
            lastProgress = Date.now();
            log(
              `${index + 1}/${size} ${withClaims ? 'claims' : 'IPAddresses'} created (${((Date.now() - started) / 1000).toFixed(0)} s)`,
            );
          }
        },
      );
      if (withClaims) {
        await waitFor(
          `${size} IPAddresses written by Tally`,
          async () => {
            const list = await custom.listNamespacedCustomObject({
              group: 'ipam.cluster.x-k8s.io',
              version: 'v1beta2',
              plural: 'ipaddresses',
              namespace: NAMESPACE,
              limit: 1,
            });
            const remaining = AddressList.parse(list).metadata.remainingItemCount ?? 0;
            const count = remaining + 1;
            if (Date.now() - lastProgress > PROGRESS_MS) {
              lastProgress = Date.now();
              log(`${count}/${size} IPAddresses written by Tally (${((Date.now() - started) / 1000).toFixed(0)} s)`);
            }
            return count >= size ? true : undefined;
          },
          { timeoutMs: 3_600_000, intervalMs: 2_000 },
        );
      }
      created = size;
      await delay(SETTLE_MS);
      const usage = await target.read();
      const line = `${size} IPAddresses${withClaims ? ' (claims bound by Tally)' : ''}: usage ${mebibytes(usage.usage)}, peak ${mebibytes(usage.peak)}, rss ${mebibytes(usage.rss)} (created in ${((Date.now() - started - SETTLE_MS) / 1000).toFixed(0)} s)`;
      log(line);
      rows.push(`| ${size} | ${mebibytes(usage.usage)} | ${mebibytes(usage.peak)} | ${mebibytes(usage.rss)} |`);
    }
  } finally {
    await target.stop();
  }
  const [usage, peak] = inProcess ? ['RSS', 'RSS high-water mark'] : ['cgroup usage', 'cgroup peak'];
  process.stdout.write(`| IPAddresses cached | ${usage} | ${peak} | RSS |\n|---|---|---|---|\n${rows.join('\n')}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
