/**
 * Claims served per second on a private control plane: N claims created at once against one pool, timed until every
 * claim shows `Ready=True`; once with one provider, once with two providers racing (no leader election).
 * Run: `pnpm --filter @tally-ipam/ipam-provider exec tsx bench/throughput.ts` (BENCH_CLAIMS, default 200).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { TALLY_GROUP, TALLY_V1ALPHA1_API_VERSION, tallyCRDDirectory } from '@tally-ipam/api-types';
import { Client, Manager } from '@tally-ipam/controller-kit';
import { createTestNamespace, startControlPlane } from '@tally-ipam/testenv';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { ADDRESS_RESOURCE, CLAIM_RESOURCE, POOL_RESOURCES, setupIPAMProvider } from '../src/index.js';

const CLAIMS = Number(process.env.BENCH_CLAIMS ?? 200);

const plane = await startControlPlane({
  crds: [tallyCRDDirectory()],
  capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'],
  ignoreTestKubeconfig: true,
});
const client = new Client(plane.kubeConfig(), { fieldManager: 'bench' });

async function run(replicas: number): Promise<void> {
  const ns = (await createTestNamespace(plane.kubeConfig(), `bench-${replicas}`)).name;
  const abort = new AbortController();
  const managers = Array.from({ length: replicas }, (_, index) => {
    const manager = new Manager({
      kubeConfig: plane.kubeConfig(),
      name: `bench-${index}`,
      registry: new Registry(),
      logger: pino({ level: 'silent' }),
    });
    setupIPAMProvider(manager);
    return manager;
  });
  const running = managers.map((manager) => manager.start(abort.signal));
  await Promise.all(managers.map((manager) => manager.elected));
  await client.create(POOL_RESOURCES.TallyIPPool, {
    apiVersion: TALLY_V1ALPHA1_API_VERSION,
    kind: 'TallyIPPool',
    metadata: { name: 'pool', namespace: ns },
    spec: { addresses: ['10.0.0.0/16'], prefix: 16 },
  });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLAIMS }, (_, index) =>
      client.create(CLAIM_RESOURCE, {
        apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
        kind: 'IPAddressClaim',
        metadata: { name: `m-${index}`, namespace: ns },
        spec: { poolRef: { apiGroup: TALLY_GROUP, kind: 'TallyIPPool', name: 'pool' } },
      }),
    ),
  );
  const created = performance.now();
  for (;;) {
    const claims = (await client.listAll(CLAIM_RESOURCE, { namespace: ns })).items;
    const ready = claims.filter((claim) =>
      claim.status?.conditions?.some((condition) => condition.type === 'Ready' && condition.status === 'True'),
    );
    if (ready.length === CLAIMS) break;
    await delay(100);
  }
  const done = performance.now();
  const addresses = (await client.listAll(ADDRESS_RESOURCE, { namespace: ns })).items.map((a) => a.spec.address);
  const duplicates = addresses.length - new Set(addresses).size;
  console.log(
    `${replicas} provider(s): ${CLAIMS} claims created in ${((created - started) / 1000).toFixed(1)} s, all Ready ` +
      `${((done - started) / 1000).toFixed(1)} s after the first create (${(CLAIMS / ((done - started) / 1000)).toFixed(0)} ` +
      `claims/s); ${addresses.length} IPAddresses, ${duplicates} duplicate addresses`,
  );
  abort.abort();
  await Promise.all(running);
}

try {
  await run(1);
  await run(2);
} finally {
  client.close();
  await plane.stop();
}
