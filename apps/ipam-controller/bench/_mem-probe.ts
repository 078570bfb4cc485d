// Temporary probe (not committed): one control plane, one 50k prefill, Tally started under several NODE_OPTIONS.
import { tallyCRDDirectory } from '@tally-ipam/api-types';
import { Client } from '@tally-ipam/controller-kit';
import { startControlPlane } from '@tally-ipam/testenv';
import { get } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { startController } from '../test/controller-process.js';
import { CLUSTERS, cluster } from '../test/support.js';
import { poolObject, prefill, rssMiB, peakRssMiB, waitSettled, WORKERS } from './contenders.js';

const entry = process.argv[2] ?? '';
const count = Number(process.argv[3] ?? '50000');
const variants = (process.argv[4] ?? '').split('|');
const text = (url: string): Promise<{ status: number; body: string }> =>
  new Promise((resolve) => {
    get(url, (r) => {
      let body = '';
      r.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => resolve({ status: r.statusCode ?? 0, body }));
    }).on('error', () => resolve({ status: 0, body: '' }));
  });
const plane = await startControlPlane({ ignoreTestKubeconfig: true, crds: [tallyCRDDirectory()], capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'] });
try {
  const client = new Client(plane.kubeConfig(), { fieldManager: 'bench' });
  await client.create({ apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false }, { metadata: { name: 'bench' } });
  await client.create(CLUSTERS, cluster('bench', 'bench'));
  const pool = { name: 'big', octet: 1 };
  const object = await client.create({ apiVersion: 'ipam.cluster.x-k8s.io/v1alpha1', kind: 'TallyIPPool', plural: 'tallyippools', namespaced: true }, poolObject('tally', 'bench', pool));
  await prefill({ kubeConfig: plane.kubeConfig(), contender: 'tally', namespace: 'bench', pools: new Map([[pool.name, { pool, object }]]), nextIndex: new Map(), pool: pool.name, count }, console.log);
  for (const options of variants) {
    const started = performance.now();
    const c = startController(['--kubeconfig', plane.kubeconfigPath, '--namespace', 'bench', `--concurrency=${WORKERS}`, '--metrics-bind-address=127.0.0.1:18089', '--health-probe-bind-address=127.0.0.1:18088', '--webhook-port=0'], options.startsWith('PROBE_') ? { ...process.env, [options.split('=')[0] as string]: options.split('=')[1] } : { ...process.env, NODE_OPTIONS: options }, entry);
    while ((await text('http://127.0.0.1:18088/readyz')).status !== 200) await delay(50);
    const synced = (performance.now() - started) / 1000;
    const atSync = rssMiB(c.pid);
    await waitSettled(c.pid, 600_000);
    for (const wait of [0, 70]) {
      await delay(wait * 1000);
      const heap = (await text('http://127.0.0.1:18089/metrics')).body.split('\n').find((l) => l.startsWith('nodejs_heap_size_used_bytes'));
      console.log(`   settled +${wait} s: RSS ${rssMiB(c.pid)?.toFixed(0)} MiB, heap used ${(Number(heap?.split(' ')[1]) / 2 ** 20).toFixed(0)} MiB`);
    }
    if (process.env.PROBE_SNAPSHOT) {
      process.kill(c.pid, 'SIGUSR2');
      await delay(90_000);
      console.log('   after the heap snapshot (a full GC):');
    }
    const metrics = (await text('http://127.0.0.1:18089/metrics')).body.split('\n').filter((l) => /^(nodejs_heap_space_size_(used|total)_bytes|nodejs_heap_size_(used|total)_bytes|nodejs_external_memory_bytes|process_resident_memory_bytes)/.test(l));
    console.log(`[${options || 'default'}] synced ${synced.toFixed(1)} s, RSS at sync ${atSync?.toFixed(0)} MiB, settled ${rssMiB(c.pid)?.toFixed(0)} MiB, peak ${peakRssMiB(c.pid)?.toFixed(0)} MiB`);
    for (const line of metrics) {
      const [name, value] = line.split(' ');
      console.log(`   ${name} ${(Number(value) / 2 ** 20).toFixed(1)} MiB`);
    }
    await c.stop('SIGTERM');
  }
} finally {
  await plane.stop();
}
