/**
 * A start over N bound claims whose IPAddresses no ledger holds — the target cluster of `clusterctl move`, whose
 * cluster-scoped ledgers do not move: on a private control plane, the claims (Tally's finalizer on, no status) and
 * their IPAddresses are created, then one provider is started; printed are the TallyAddressLedger writes (from the API
 * server's `apiserver_request_total`), the time until they stopped and until every claim was Ready.
 * Run: `pnpm --filter @tally-ipam/ipam-provider exec tsx bench/adoption-start.ts` (BENCH_CLAIMS, default 5 000). The
 * same file run from another checkout measures that checkout's provider, for a before/after pair on one machine.
 */
import { TALLY_GROUP, TALLY_V1ALPHA1_API_VERSION, tallyCRDDirectory } from '@tally-ipam/api-types';
import { Client, Manager, ownerReferenceTo, type ResourceKind } from '@tally-ipam/controller-kit';
import { LEDGER_RESOURCE } from '@tally-ipam/ledger';
import {
  forEachLimited,
  readRequestCounters,
  requestsBetween,
  startControlPlane,
  sumRequests,
} from '@tally-ipam/testenv';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import {
  ADDRESS_FINALIZER,
  ADDRESS_RESOURCE,
  CLAIM_FINALIZER,
  CLAIM_RESOURCE,
  POOL_RESOURCES,
  type StoredClaim,
  type StoredPool,
  setupIPAMProvider,
} from '../src/index.js';

const CLAIMS = Number(process.env.BENCH_CLAIMS ?? 5_000);
if (!Number.isInteger(CLAIMS) || CLAIMS < 1 || CLAIMS > 65_000) {
  throw new Error(`BENCH_CLAIMS: "${String(process.env.BENCH_CLAIMS).slice(0, 20)}" is not an integer from 1 to 65000`);
}
const NAMESPACE = 'bench';
const NAMESPACES: ResourceKind = { apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false };
/** The writes are taken as stopped when none came for this long after every claim was Ready. */
const QUIET_MS = 5_000;
const SAMPLE_MS = 500;
const WRITE_VERBS = new Set(['POST', 'PUT', 'DELETE']);

/** The index-th host address of 10.0.0.0/16, from 10.0.0.1. */
function addressAt(index: number): string {
  const value = index + 1;
  return `10.0.${Math.floor(value / 256)}.${value % 256}`;
}

const plane = await startControlPlane({
  ignoreTestKubeconfig: true,
  crds: [tallyCRDDirectory()],
  capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'],
});
try {
  const kubeConfig = plane.kubeConfig();
  const client = new Client(kubeConfig, { fieldManager: 'adoption-bench' });
  await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
  const pool: StoredPool = await client.create(POOL_RESOURCES.TallyIPPool, {
    apiVersion: TALLY_V1ALPHA1_API_VERSION,
    kind: 'TallyIPPool',
    metadata: { name: 'pool', namespace: NAMESPACE },
    spec: { addresses: ['10.0.0.1-10.0.255.254'], prefix: 16 },
  });
  const createdAt = performance.now();
  await forEachLimited(
    Array.from({ length: CLAIMS }, (_, index) => index),
    50,
    async (index) => {
      const name = `claim-${index}`;
      const claim: StoredClaim = await client.create(CLAIM_RESOURCE, {
        apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
        kind: 'IPAddressClaim',
        metadata: { name, namespace: NAMESPACE, finalizers: [CLAIM_FINALIZER] },
        spec: { poolRef: { apiGroup: TALLY_GROUP, kind: 'TallyIPPool', name: 'pool' } },
      });
      await client.create(ADDRESS_RESOURCE, {
        apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
        kind: 'IPAddress',
        metadata: {
          name,
          namespace: NAMESPACE,
          finalizers: [ADDRESS_FINALIZER],
          ownerReferences: [
            ownerReferenceTo(claim, { controller: true, blockOwnerDeletion: true }),
            ownerReferenceTo(pool, { controller: false, blockOwnerDeletion: true }),
          ],
        },
        spec: {
          address: addressAt(index),
          prefix: 16,
          poolRef: { apiGroup: TALLY_GROUP, kind: 'TallyIPPool', name: 'pool' },
          claimRef: { name },
        },
      });
    },
  );
  console.log(`${CLAIMS} claims and IPAddresses created in ${((performance.now() - createdAt) / 1000).toFixed(1)} s`);

  const ledgerWrites = async (): Promise<number> =>
    sumRequests(
      (await readRequestCounters(kubeConfig)).filter(
        (series) => series.resource === LEDGER_RESOURCE.plural && WRITE_VERBS.has(series.verb),
      ),
    );
  const before = await readRequestCounters(kubeConfig);
  const writesBefore = await ledgerWrites();
  const manager = new Manager({
    kubeConfig,
    name: 'adoption-bench',
    registry: new Registry(),
    logger: pino({ level: process.env.TALLY_BENCH_LOG ?? 'silent' }),
    gracefulShutdownTimeoutMs: 20_000,
  });
  setupIPAMProvider(manager);
  const claims = manager.cache.informerFor(CLAIM_RESOURCE, {});
  const abort = new AbortController();
  const startedAt = performance.now();
  const running = manager.start(abort.signal);
  running.catch(() => undefined);

  let writes = 0;
  let lastWriteAt = startedAt;
  let readyAt: number | undefined;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
    const now = performance.now();
    const current = (await ledgerWrites()) - writesBefore;
    if (current !== writes) {
      writes = current;
      lastWriteAt = now;
    }
    const ready = claims.store
      .list()
      .filter((claim) => claim.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
    if (readyAt === undefined && ready === CLAIMS) readyAt = now;
    if (readyAt !== undefined && now - lastWriteAt >= QUIET_MS) break;
  }
  const requests = requestsBetween(before, await readRequestCounters(kubeConfig));
  const ledgerFailures = sumRequests(
    requests.filter((series) => series.resource === LEDGER_RESOURCE.plural && !series.code.startsWith('2')),
  );
  abort.abort();
  await running;
  client.close();
  const seconds = (at: number): string => ((at - startedAt) / 1000).toFixed(1);
  console.log(
    `start over ${CLAIMS} moved claims: ${writes} ledger writes (${ledgerFailures} answered non-2xx), ` +
      `the last ${seconds(lastWriteAt)} s after the start; every claim Ready after ${seconds(readyAt ?? startedAt)} s`,
  );
} finally {
  await plane.stop();
}
