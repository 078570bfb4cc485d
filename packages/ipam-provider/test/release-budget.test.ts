/**
 * What releasing many claims at once costs, from the API server's own request counters: N claims bound by one
 * provider, then all deleted at once (16 deletes in flight, as the chaos test sends them) while one provider runs, and
 * again while two providers run (leader election off, both releasing every claim). Counted: ledger writes, 409
 * Conflicts and ledger reads per released claim; the time from the first delete to the last entry gone is printed,
 * never asserted.
 *
 * `apiserver_request_total` has no label naming the client, so this file starts an API server of its own (see
 * burst-budget.test.ts).
 */

import { tallyCRDDirectory } from '@tally-ipam/api-types';
import { Cache, type Client } from '@tally-ipam/controller-kit';
import { LEDGER_RESOURCE } from '@tally-ipam/ledger';
import {
  type ControlPlane,
  type RequestSeries,
  readRequestCounters,
  requestsBetween,
  requestsByTarget,
  startControlPlane,
  sumRequests,
} from '@tally-ipam/testenv';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADDRESS_RESOURCE, CLAIM_RESOURCE, type StoredClaim } from '../src/index.js';
import {
  createClaim,
  createPool,
  forEachLimited,
  newNamespace,
  type RunningProvider,
  startProvider,
  testClient,
  waitFor,
} from './support.js';

const CLAIM_COUNT = Number(process.env.TALLY_RELEASE_CLAIMS ?? 300);
/** Deletes in flight at once, as the chaos test sends them. */
const DELETERS = 16;
const CREATORS = 50;
/** A hang bound for binding the claims (and for another provider to list what that wrote). */
const BIND_HANG_BOUND_MS = 300_000;

/**
 * A deleted claim's IPAddress is proven gone by the answers of its finalizer patch and its delete (conditioned on the
 * resourceVersion the patch returned), so one provider reads none in the common case (it read two per claim: one
 * before, one after the delete). The margin covers a lagging cache (a Conflict and a read).
 */
const ADDRESS_READS_PER_RELEASE = 0.1;
/**
 * Releases of one block share writes (in the background, a coalescing window of 1-3 s): at most one ledger write per
 * release and provider whatever the machine's speed (how many share a write depends on how many arrive per window;
 * the figures are printed).
 */
const LEDGER_WRITES_PER_RELEASE_AND_PROVIDER = 1;

interface ReleaseFigures {
  readonly replicas: number;
  readonly requests: RequestSeries[];
  readonly windowMs: number;
  /** Ledger writes the providers' writers counted (conflicts included). */
  readonly writerWrites: number;
}

let plane: ControlPlane | undefined;
let client: Client | undefined;
const figures = new Map<number, ReleaseFigures>();

function count(requests: readonly RequestSeries[], predicate: (series: RequestSeries) => boolean): number {
  return sumRequests(requests.filter(predicate));
}

/** Binds CLAIM_COUNT claims with one provider, then deletes them all with `replicas` providers running. */
async function releaseRound(replicas: number, round: number): Promise<ReleaseFigures> {
  const kubeConfig = (plane as ControlPlane).kubeConfig();
  const api = client as Client;
  const { name: ns } = await newNamespace(`release-${replicas}`, kubeConfig);
  // Eight /24 blocks picked at random, as in the chaos test: the releases spread over eight ledgers.
  await createPool(api, 'TallyIPPool', 'pool', ns, {
    addresses: [`10.${100 + round}.0.1-10.${100 + round}.7.254`],
    prefix: 16,
    allocationStrategy: 'Random',
  });
  const stopWatching = new AbortController();
  const watches = new Cache({ kubeConfig, logger: pino({ level: 'silent' }) });
  const claims = watches.informerFor(CLAIM_RESOURCE, { namespace: ns }).store;
  const addresses = watches.informerFor(ADDRESS_RESOURCE, { namespace: ns }).store;
  const ledgers = watches.informerFor(LEDGER_RESOURCE).store;
  const watching = watches.start(stopWatching.signal);
  const entriesLeft = (): number =>
    ledgers
      .list()
      .flatMap((ledger) => ledger.spec.entries ?? [])
      .filter((entry) => entry.claimRef.namespace === ns).length;
  const running: RunningProvider[] = [];
  try {
    running.push(await startProvider({ namespace: ns }, `tally-ipam-release-a`, kubeConfig));
    const names = Array.from({ length: CLAIM_COUNT }, (_, index) => `claim-${index}`);
    await forEachLimited(names, CREATORS, (name) => createClaim(api, ns, name, { kind: 'TallyIPPool', name: 'pool' }));
    const isBound = (claim: StoredClaim): boolean => Boolean(claim.status?.addressRef?.name);
    await waitFor(
      `${CLAIM_COUNT} claims bound`,
      () => claims.list().filter(isBound).length === CLAIM_COUNT && entriesLeft() === CLAIM_COUNT,
      { timeoutMs: BIND_HANG_BOUND_MS },
    );
    for (let index = 1; index < replicas; index += 1) {
      const other = await startProvider({ namespace: ns }, `tally-ipam-release-${index}`, kubeConfig);
      running.push(other);
      // A hang bound, the one of binding them: the sync lists the claims, IPAddresses and ledgers binding wrote.
      await other.provider.waitForSync(AbortSignal.timeout(BIND_HANG_BOUND_MS));
    }
    const writesBefore = running.reduce((sum, each) => sum + (each.provider.ledgers?.writes ?? 0), 0);
    const before = await readRequestCounters(kubeConfig);
    const started = performance.now();
    await forEachLimited(names, DELETERS, (name) => api.delete(CLAIM_RESOURCE, { namespace: ns, name }));
    await waitFor(
      'every claim, IPAddress and ledger entry gone',
      () => claims.list().length + addresses.list().length + entriesLeft() === 0,
      { timeoutMs: 600_000, intervalMs: 200 },
    );
    const windowMs = performance.now() - started;
    const after = await readRequestCounters(kubeConfig);
    const writerWrites = running.reduce((sum, each) => sum + (each.provider.ledgers?.writes ?? 0), 0) - writesBefore;
    const requests = requestsBetween(before, after).filter((series) => series.verb !== 'WATCH');
    const byTarget = [...requestsByTarget(requests)]
      .filter(([target]) => !target.includes('leases') && !target.includes('events'))
      .map(([target, total]) => `${target} ${total} (${(total / CLAIM_COUNT).toFixed(3)})`)
      .join(', ');
    console.info(
      `release of ${CLAIM_COUNT} claims with ${replicas} provider(s): ${(windowMs / 1000).toFixed(1)} s ` +
        `(${((windowMs / CLAIM_COUNT) * 1000).toFixed(0)} µs per claim), writer writes ${writerWrites}; ` +
        `requests (per claim): ${byTarget}`,
    );
    return { replicas, requests, windowMs, writerWrites };
  } finally {
    for (const each of running) await each.stop();
    stopWatching.abort();
    await watching;
  }
}

beforeAll(async () => {
  plane = await startControlPlane({
    ignoreTestKubeconfig: true,
    crds: [tallyCRDDirectory()],
    capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'],
  });
  client = testClient(plane.kubeConfig());
  figures.set(1, await releaseRound(1, 0));
  figures.set(2, await releaseRound(2, 1));
  const one = figures.get(1) as ReleaseFigures;
  const two = figures.get(2) as ReleaseFigures;
  console.info(`release time, two providers / one: ${(two.windowMs / one.windowMs).toFixed(2)}`);
}, 1_500_000);

afterAll(async () => {
  client?.close();
  await plane?.stop();
});

const ledgerWrites = (series: RequestSeries): boolean =>
  series.resource === LEDGER_RESOURCE.plural && ['POST', 'PUT', 'PATCH', 'DELETE'].includes(series.verb);
const conflicts = (series: RequestSeries): boolean =>
  series.resource === LEDGER_RESOURCE.plural && series.code === '409';

describe(`releasing ${CLAIM_COUNT} claims deleted at once, on an API server of its own`, () => {
  it.for([1, 2])('with %i provider(s): every release shares ledger writes', (replicas) => {
    const { requests } = figures.get(replicas) as ReleaseFigures;
    const writes = count(requests, ledgerWrites);
    const lost = count(requests, conflicts);
    const addressReads = count(
      requests,
      (series) => series.resource === ADDRESS_RESOURCE.plural && series.verb === 'GET',
    );
    console.info(
      `${replicas} provider(s): ledger writes ${writes} (${(writes / CLAIM_COUNT).toFixed(3)} per claim), ` +
        `409 ${lost} (${(lost / CLAIM_COUNT).toFixed(3)}), IPAddress GETs ${addressReads} (${(addressReads / CLAIM_COUNT).toFixed(3)})`,
    );
    expect(writes / CLAIM_COUNT).toBeLessThanOrEqual(replicas * LEDGER_WRITES_PER_RELEASE_AND_PROVIDER);
    if (replicas === 1) expect(addressReads / CLAIM_COUNT).toBeLessThanOrEqual(ADDRESS_READS_PER_RELEASE);
  });
});
