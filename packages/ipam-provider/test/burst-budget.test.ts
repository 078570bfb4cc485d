/**
 * Guards two figures the README advertises for a burst of claims, from the API server's own request counters:
 * the request budget per claim (the three writes of the contract plus the ledger writes the claims share; no GET, no
 * 409 Conflict) and the coalesced pool
 * status writes (at most one every 2 s, the final one deferred so the status ends exact).
 *
 * `apiserver_request_total` has no label naming the client, and this package's test files share one control plane and
 * run in parallel, so this file starts an API server of its own: on it, the only traffic on the provider's resources
 * is the provider's, this file's claim creates and this file's watches.
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
  requestTarget,
  startControlPlane,
  sumRequests,
} from '@tally-ipam/testenv';
import { pino } from 'pino';
import type { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  DEFAULT_ALLOCATION_EVENTS,
  POOL_RESOURCES,
  type StoredClaim,
  type StoredPool,
} from '../src/index.js';
import {
  createClaim,
  createPool,
  forEachLimited,
  newNamespace,
  startProvider,
  testClient,
  waitFor,
} from './support.js';

const CLAIM_COUNT = 300;
/** Claim creates in flight at once: "a burst" as one client connection pool sensibly sends it. */
const CREATORS = 50;
const POOL = 'burst';
/** 10.90.0.1 – 10.90.1.254: 510 addresses, so the burst never exhausts the pool (no exhaustion path, no live reads). */
const POOL_TOTAL = 510;

/** The contract's writes of one allocation on the burst path: finalizer patch, IPAddress create, status patch. */
const CONTRACT_WRITES_PER_CLAIM = 3;
/**
 * The README's bound on the TallyAddressLedger writes of a burst, per claim: a reconcile that writes a ledger also
 * holds addresses ahead for the waiting claims of its pool, so one compare-and-swap write serves dozens of claims
 * (0.033 measured: 10 writes for 300 claims; 0.273 before holding ahead).
 */
const LEDGER_WRITES_PER_CLAIM = 0.1;
/**
 * Stated margin per claim for requests this test cannot rule out on a loaded machine without them being a defect: an
 * informer's relist after a watch timeout, a write retried after the API server answered 5xx. 0.05 × 300 = 15 requests.
 */
const MARGIN_PER_CLAIM = 0.05;

/** Every resource the provider reads or writes; anything else on the API server is its own housekeeping. */
const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'DELETECOLLECTION']);
const PROVIDER_RESOURCES = new Set([
  CLAIM_RESOURCE.plural,
  ADDRESS_RESOURCE.plural,
  LEDGER_RESOURCE.plural,
  ...Object.values(POOL_RESOURCES).map((resource) => resource.plural),
  'clusters',
  'events',
]);
/**
 * The README's interval between two counts-only pool status writes (2 s). Deliberately not `POOL_STATUS_COALESCE_MS`:
 * a bound computed from the constant would pass vacuously if the constant were set to 0.
 */
const ADVERTISED_COALESCE_MS = 2_000;
const POOL_PLURALS = new Set(Object.values(POOL_RESOURCES).map((resource) => resource.plural));

interface IPAddressCounts {
  total?: number;
  used?: number;
  free?: number;
  outOfRange?: number;
}

function poolCounts(pool: StoredPool | undefined): IPAddressCounts | undefined {
  return (pool?.status as { ipAddresses?: IPAddressCounts } | undefined)?.ipAddresses;
}

interface ReadyView {
  addressRef?: { name?: string };
  conditions?: { type?: string; status?: string }[];
}

function isReady(object: StoredPool | StoredClaim | undefined): boolean {
  const status = object?.status as ReadyView | undefined;
  return status?.conditions?.some((condition) => condition.type === 'Ready' && condition.status === 'True') ?? false;
}

function isBound(claim: StoredClaim): boolean {
  return Boolean(claim.status?.addressRef?.name) && isReady(claim);
}

/** `controller_runtime_reconcile_total` per controller (all results), as the provider's registry has it now. */
async function reconcilesByController(registry: Registry): Promise<Map<string, number>> {
  const metric = registry.getSingleMetric('controller_runtime_reconcile_total');
  const totals = new Map<string, number>();
  for (const { labels, value } of (await metric?.get())?.values ?? []) {
    const controller = String(labels.controller);
    totals.set(controller, (totals.get(controller) ?? 0) + value);
  }
  return totals;
}

interface BurstFigures {
  /** Requests on the provider's resources between the two readings, WATCH left out (counted when a watch ends). */
  readonly requests: RequestSeries[];
  /** From the first reading to the second, which follows the pool status showing every claim. */
  readonly windowMs: number;
  /** The pool as read after the second reading. */
  readonly finalPool: StoredPool;
  readonly boundClaims: number;
  /** Reconciles per controller between the two readings. */
  readonly reconciles: ReadonlyMap<string, number>;
  /**
   * Writes on the provider's resources while a second provider, started after the first stopped, reconciled every
   * bound claim again (its caches filled from the API server, which orders every object's keys its own way).
   */
  readonly restartWrites: RequestSeries[];
}

let plane: ControlPlane | undefined;
let client: Client | undefined;
let figures: BurstFigures;

beforeAll(async () => {
  const started = performance.now();
  plane = await startControlPlane({
    ignoreTestKubeconfig: true,
    crds: [tallyCRDDirectory()],
    capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'],
  });
  const kubeConfig = plane.kubeConfig();
  client = testClient(kubeConfig);
  const { name: ns } = await newNamespace('burst-budget', kubeConfig);
  await createPool(client, 'TallyIPPool', POOL, ns, { addresses: ['10.90.0.1-10.90.1.254'], prefix: 16 });

  // This file's own view of the burst comes from watches, not polling, so that the only reads on the API server
  // during the burst are the provider's.
  const stopWatching = new AbortController();
  const watches = new Cache({ kubeConfig, logger: pino({ level: 'silent' }) });
  const bound = new Set<string>();
  let pool: StoredPool | undefined;
  const noteClaim = (claim: StoredClaim): void => {
    if (isBound(claim)) bound.add(claim.metadata.name);
  };
  watches.addEventHandler(
    CLAIM_RESOURCE,
    { onAdd: noteClaim, onUpdate: (_old, claim) => noteClaim(claim) },
    { namespace: ns },
  );
  const notePool = (object: StoredPool): void => {
    pool = object;
  };
  watches.addEventHandler(
    POOL_RESOURCES.TallyIPPool,
    { onAdd: notePool, onUpdate: (_old, object) => notePool(object) },
    { namespace: ns },
  );
  const watching = watches.start(stopWatching.signal);

  const running = await startProvider({ namespace: ns }, 'tally-ipam-burst-budget', kubeConfig);
  try {
    await waitFor(
      'the pool status written once before the burst (provider running, caches synced)',
      () => poolCounts(pool)?.total === POOL_TOTAL && isReady(pool),
    );
    const before = await readRequestCounters(kubeConfig);
    const reconcilesBefore = await reconcilesByController(running.registry);
    const windowStart = performance.now();
    const names = Array.from({ length: CLAIM_COUNT }, (_, index) => `claim-${index}`);
    await forEachLimited(names, CREATORS, (name) =>
      createClaim(client as Client, ns, name, { kind: 'TallyIPPool', name: POOL }),
    );
    await waitFor(`all ${CLAIM_COUNT} claims bound (seen by this file's watch)`, () => bound.size === CLAIM_COUNT, {
      timeoutMs: 300_000,
    });
    await waitFor('the deferred pool status write counting every claim', () => poolCounts(pool)?.used === CLAIM_COUNT);
    const after = await readRequestCounters(kubeConfig);
    const reconcilesAfter = await reconcilesByController(running.registry);
    const windowMs = performance.now() - windowStart;
    const finalPool = await client.get(POOL_RESOURCES.TallyIPPool, { namespace: ns, name: POOL });
    figures = {
      requests: requestsBetween(before, after).filter(
        (series) => PROVIDER_RESOURCES.has(series.resource) && series.verb !== 'WATCH',
      ),
      windowMs,
      finalPool,
      boundClaims: bound.size,
      reconciles: new Map(
        [...reconcilesAfter].map(([controller, total]) => [
          controller,
          total - (reconcilesBefore.get(controller) ?? 0),
        ]),
      ),
      restartWrites: [],
    };
    await running.stop();
    // Started again over what it bound: every claim is reconciled once more and each must be found complete.
    const restartBefore = await readRequestCounters(kubeConfig);
    const restarted = await startProvider({ namespace: ns }, 'tally-ipam-burst-budget', kubeConfig);
    try {
      await waitFor(
        'the restarted provider reconciled every claim and the pool',
        async () => {
          const reconciles = await reconcilesByController(restarted.registry);
          const claims = reconciles.get('tally-ipaddressclaim') ?? 0;
          return claims >= CLAIM_COUNT && (reconciles.get('tally-tallyippool') ?? 0) >= 1;
        },
        { timeoutMs: 300_000 },
      );
    } finally {
      await restarted.stop();
    }
    const restartAfter = await readRequestCounters(kubeConfig);
    figures = {
      ...figures,
      restartWrites: requestsBetween(restartBefore, restartAfter).filter(
        (series) => PROVIDER_RESOURCES.has(series.resource) && WRITE_VERBS.has(series.verb),
      ),
    };
    const byTarget = [...requestsByTarget(figures.requests)]
      .map(([target, count]) => `${target} ${count} (${(count / CLAIM_COUNT).toFixed(3)} per claim)`)
      .join(', ');
    console.info(
      `reconciles during the burst: ${[...figures.reconciles].map(([controller, total]) => `${controller} ${total}`).join(', ')}`,
    );
    console.info(
      `burst of ${CLAIM_COUNT} claims: window ${(windowMs / 1000).toFixed(1)} s (file ${((performance.now() - started) / 1000).toFixed(1)} s so far); ` +
        `requests on the provider's resources (the claims' own creates included): ${byTarget}`,
    );
  } finally {
    await running.stop();
    stopWatching.abort();
    await watching;
  }
}, 600_000);

afterAll(async () => {
  client?.close();
  await plane?.stop();
});

function count(requests: readonly RequestSeries[], predicate: (series: RequestSeries) => boolean): number {
  return sumRequests(requests.filter(predicate));
}

describe(`a burst of ${CLAIM_COUNT} claims into one pool, on an API server of its own`, () => {
  it('costs the three writes of the contract per claim plus shared ledger writes: no GET, no 409, Events within budget', () => {
    const { requests, windowMs } = figures;
    const provider = requests.map((series) =>
      series.verb === 'POST' && series.resource === CLAIM_RESOURCE.plural && series.code.startsWith('2')
        ? { ...series, count: series.count - CLAIM_COUNT }
        : series,
    );
    const claimPath = provider.filter(
      (series) =>
        series.resource !== 'events' && !(POOL_PLURALS.has(series.resource) && series.subresource === 'status'),
    );
    const events = count(provider, (series) => series.resource === 'events');
    const seconds = windowMs / 1000;
    const eventBudget =
      DEFAULT_ALLOCATION_EVENTS.burst +
      Math.ceil(DEFAULT_ALLOCATION_EVENTS.perSecond * seconds) +
      // the per-pool summaries of the Events past the budget
      Math.ceil(windowMs / DEFAULT_ALLOCATION_EVENTS.summaryIntervalMs) +
      1;
    expect({
      singleObjectGets: count(provider, (series) => series.verb === 'GET'),
      conflicts: count(provider, (series) => series.code === '409'),
    }).toEqual({ singleObjectGets: 0, conflicts: 0 });
    const ledgerWrites = count(claimPath, (series) => series.resource === LEDGER_RESOURCE.plural);
    console.info(`ledger writes per claim: ${(ledgerWrites / CLAIM_COUNT).toFixed(3)}`);
    expect(ledgerWrites / CLAIM_COUNT).toBeLessThanOrEqual(LEDGER_WRITES_PER_CLAIM);
    expect(sumRequests(claimPath) / CLAIM_COUNT).toBeLessThanOrEqual(
      CONTRACT_WRITES_PER_CLAIM + LEDGER_WRITES_PER_CLAIM + MARGIN_PER_CLAIM,
    );
    expect(events).toBeLessThanOrEqual(eventBudget);
    // Each of the three writes at least once per claim, and a ledger written: the burst went through the measured path.
    expect(ledgerWrites).toBeGreaterThanOrEqual(1);
    for (const [verb, resource, subresource] of [
      ['PATCH', CLAIM_RESOURCE.plural, ''],
      ['POST', ADDRESS_RESOURCE.plural, ''],
      ['PATCH', CLAIM_RESOURCE.plural, 'status'],
    ] as const) {
      const writes = count(
        provider,
        (series) => series.verb === verb && series.resource === resource && series.subresource === subresource,
      );
      expect(writes, `${verb} ${resource}${subresource ? `/${subresource}` : ''}`).toBeGreaterThanOrEqual(CLAIM_COUNT);
    }
  });

  it(`writes the pool status at most once per ${ADVERTISED_COALESCE_MS} ms during the burst, and it ends exact`, () => {
    const { requests, windowMs, finalPool, boundClaims } = figures;
    const statusWrites = count(
      requests,
      (series) => POOL_PLURALS.has(series.resource) && series.subresource === 'status' && series.verb !== 'GET',
    );
    // One counts-only write per interval of the window, plus the deferred final one: no condition changes in a burst
    // that leaves the pool Ready.
    const coalescedBound = Math.floor(windowMs / ADVERTISED_COALESCE_MS) + 2;
    expect(statusWrites).toBeGreaterThanOrEqual(1);
    expect(statusWrites).toBeLessThanOrEqual(coalescedBound);
    expect(boundClaims).toBe(CLAIM_COUNT);
    expect(poolCounts(finalPool)).toEqual({
      total: POOL_TOTAL,
      used: CLAIM_COUNT,
      free: POOL_TOTAL - CLAIM_COUNT,
      outOfRange: 0,
    });
  });

  it('reconciles the pool (how often is reported above, not bound) and the garbage collector not at all', () => {
    // How many pool reconciles a burst takes depends on how the machine batches events into the queue (at load 15
    // a bound of four per status interval failed with 69 against 58): it is a figure, printed with the others. What
    // the code guarantees is the status writes' bound (the test above) and that the collector has nothing to do.
    expect(figures.reconciles.get('tally-tallyippool') ?? 0).toBeGreaterThanOrEqual(1);
    // Every ledger entry of the burst is held for a live claim: nothing the garbage collector needs to look at.
    expect(figures.reconciles.get('tally-ledger-collector')).toBe(0);
  });

  it('writes nothing when started again over the claims it bound: every claim, IPAddress and ledger is found complete', () => {
    expect(figures.restartWrites.map((series) => `${requestTarget(series)} ×${series.count}`)).toEqual([]);
  });

  it('reconciles each claim once: the create event of the IPAddress it wrote does not queue it again', () => {
    const claimReconciles = figures.reconciles.get('tally-ipaddressclaim') ?? 0;
    expect(claimReconciles).toBeGreaterThanOrEqual(CLAIM_COUNT);
    expect(claimReconciles).toBeLessThanOrEqual(CLAIM_COUNT * (1 + MARGIN_PER_CLAIM));
  });
});

/** Pools of the many-pools burst, their claims each, and the shared rate the provider is given for it. */
const SHARED_POOLS = 6;
const CLAIMS_PER_SHARED_POOL = 30;
/** One counts-only pool status write every 2 s, all pools together: far under six pools' one every 2 s each. */
const SHARED_WRITES_PER_SECOND = 0.5;

describe(`${SHARED_POOLS} pools allocating at once, on the same API server`, () => {
  it('share one budget of counts-only status writes, and every pool still ends exact', async () => {
    const kubeConfig = (plane as ControlPlane).kubeConfig();
    const writer = client as Client;
    const { name: ns } = await newNamespace('shared-budget', kubeConfig);
    const pools = Array.from({ length: SHARED_POOLS }, (_, index) => `shared-${index}`);
    for (const [index, pool] of pools.entries()) {
      await createPool(writer, 'TallyIPPool', pool, ns, {
        addresses: [`10.91.${index}.1-10.91.${index}.100`],
        prefix: 24,
      });
    }
    const readPools = (): Promise<StoredPool[]> =>
      Promise.all(pools.map((name) => writer.get(POOL_RESOURCES.TallyIPPool, { namespace: ns, name })));
    const running = await startProvider(
      { namespace: ns, poolStatusWritesPerSecond: SHARED_WRITES_PER_SECOND },
      'tally-ipam-shared-budget',
      kubeConfig,
    );
    try {
      await waitFor('every pool Ready with its counts before the burst', async () =>
        (await readPools()).every((pool) => isReady(pool) && poolCounts(pool)?.total === 100),
      );
      const before = await readRequestCounters(kubeConfig);
      const windowStart = performance.now();
      const claims = pools.flatMap((pool) =>
        Array.from({ length: CLAIMS_PER_SHARED_POOL }, (_, index) => ({ pool, name: `${pool}-claim-${index}` })),
      );
      await forEachLimited(claims, CREATORS, ({ pool, name }) =>
        createClaim(writer, ns, name, { kind: 'TallyIPPool', name: pool }),
      );
      const finalPools = await waitFor(
        'every pool status counting its claims',
        async () => {
          const read = await readPools();
          return read.every((pool) => poolCounts(pool)?.used === CLAIMS_PER_SHARED_POOL) ? read : undefined;
        },
        { timeoutMs: 300_000 },
      );
      const windowMs = performance.now() - windowStart;
      const after = await readRequestCounters(kubeConfig);
      const statusWrites = count(
        requestsBetween(before, after),
        (series) => POOL_PLURALS.has(series.resource) && series.subresource === 'status' && series.verb !== 'GET',
      );
      console.info(
        `${SHARED_POOLS} pools x ${CLAIMS_PER_SHARED_POOL} claims: ${statusWrites} pool status writes in ` +
          `${(windowMs / 1000).toFixed(1)} s`,
      );
      // One slot every 1 / rate seconds across all pools, plus the slot the window may open with.
      expect(statusWrites).toBeGreaterThanOrEqual(SHARED_POOLS);
      expect(statusWrites).toBeLessThanOrEqual(Math.floor((windowMs / 1000) * SHARED_WRITES_PER_SECOND) + 1);
      for (const pool of finalPools) {
        expect(poolCounts(pool)).toEqual({ total: 100, used: CLAIMS_PER_SHARED_POOL, free: 70, outOfRange: 0 });
      }
    } finally {
      await running.stop();
    }
  }, 600_000);
});
