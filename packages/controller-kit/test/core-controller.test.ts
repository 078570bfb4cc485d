import { CoreV1Api } from '@kubernetes/client-node';
import { testEnv, withTestNamespace } from '@tally-ipam/testenv/vitest';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { Cache } from '../src/cache/cache.js';
import { Client } from '../src/client/client.js';
import { isConflict } from '../src/client/errors.js';
import { objectKeyString } from '../src/client/resource.js';
import { Controller } from '../src/controller/controller.js';
import type { Reconciler, Request, Result } from '../src/controller/reconciler.js';
import { ItemExponentialFailureRateLimiter } from '../src/queue/rate-limiter.js';
import { captureLogs } from './fixtures/core-log-capture.js';
import { CONFIGMAPS, GADGETS, PARTS, TestObjects } from './fixtures/core-resources.js';
import { waitFor } from './fixtures/core-wait.js';

const quiet = pino({ level: 'silent' });
const stops: AbortController[] = [];

afterEach(() => {
  for (const stop of stops.splice(0)) stop.abort();
});

/** A cache and a controller on it, both running until the test ends. */
function run(build: (cache: Cache) => Controller): {
  cache: Cache;
  controller: Controller;
  cacheDone: Promise<void>;
  controllerDone: Promise<void>;
} {
  const cache = new Cache({ kubeConfig: testEnv().kubeConfig, logger: quiet });
  const controller = build(cache);
  const stop = new AbortController();
  stops.push(stop);
  const cacheDone = cache.start(stop.signal);
  const controllerDone = controller.start(stop.signal);
  return { cache, controller, cacheDone, controllerDone };
}

/** Records every call of a reconciler: start/end times, overlaps per key, what the cache showed. */
class RecordingReconciler implements Reconciler {
  readonly calls: Array<{ key: string; startedAt: number; endedAt: number }> = [];
  readonly overlaps: string[] = [];
  private readonly inFlight = new Set<string>();
  peakConcurrency = 0;

  constructor(private readonly behaviour: (request: Request, attempt: number) => Promise<Result>) {}

  async reconcile(request: Request): Promise<Result> {
    const key = objectKeyString(request);
    if (this.inFlight.has(key)) this.overlaps.push(key);
    this.inFlight.add(key);
    this.peakConcurrency = Math.max(this.peakConcurrency, this.inFlight.size);
    const startedAt = performance.now();
    const attempt = this.calls.filter((call) => call.key === key).length + 1;
    try {
      return await this.behaviour(request, attempt);
    } finally {
      this.inFlight.delete(key);
      this.calls.push({ key, startedAt, endedAt: performance.now() });
    }
  }

  callsFor(key: string): Array<{ startedAt: number; endedAt: number }> {
    return this.calls.filter((call) => call.key === key);
  }
}

function work(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('Controller against a real API server', () => {
  it('never reconciles one key concurrently under load, and ends on the latest state of every object', async () => {
    const ns = await withTestNamespace(testEnv().kubeConfig, 'core-load');
    const objects = new TestObjects(testEnv().kubeConfig);
    const lastSeen = new Map<string, string | undefined>();
    let cacheRef: Cache | undefined;
    const reconciler = new RecordingReconciler(async (request) => {
      await work(3);
      const gadget = cacheRef?.informerFor(GADGETS).store.get(objectKeyString(request));
      lastSeen.set(objectKeyString(request), gadget?.metadata.resourceVersion);
      return {};
    });
    const { cache, controller } = run(
      (cache) =>
        new Controller({ name: 'load', for: GADGETS, reconciler, cache, logger: quiet, maxConcurrentReconciles: 3 }),
    );
    cacheRef = cache;
    const names = ['g0', 'g1', 'g2', 'g3', 'g4'];
    const finalVersions = new Map<string, string>();
    for (let round = 0; round < 12; round += 1) {
      const results = await Promise.all(names.map((name) => objects.apply('gadgets', ns.name, name, { size: round })));
      for (const [index, result] of results.entries()) {
        finalVersions.set(`${ns.name}/${names[index]}`, result.metadata.resourceVersion);
      }
      for (let burst = 0; burst < 20; burst += 1)
        controller.enqueue({ namespace: ns.name, name: names[burst % 5] as string });
    }
    await waitFor(
      'every gadget reconciled at its final version',
      () => [...finalVersions].every(([key, version]) => lastSeen.get(key) === version),
      { describe: () => ({ lastSeen: [...lastSeen], finalVersions: [...finalVersions] }) },
    );
    expect(reconciler.overlaps).toEqual([]);
    expect(reconciler.peakConcurrency).toBeLessThanOrEqual(3);
    // 12 rounds × 5 objects plus 240 explicit enqueues collapse into far fewer reconciles.
    expect(reconciler.calls.length).toBeLessThan(60 + 240);
  });

  it('backs off exponentially on failure, then succeeds; counts errors in the metrics', async () => {
    const ns = await withTestNamespace(testEnv().kubeConfig, 'core-backoff');
    const objects = new TestObjects(testEnv().kubeConfig);
    const registry = new Registry();
    const failures = 6;
    const reconciler = new RecordingReconciler(async (_request, attempt) => {
      if (attempt <= failures) throw new Error(`attempt ${attempt} fails on purpose`);
      return {};
    });
    // The delays the controller asked its rate limiter for, in order: what the backoff was, whatever the gaps measured.
    const delays: number[] = [];
    const rateLimiter = new (class extends ItemExponentialFailureRateLimiter<string> {
      override when(item: string): number {
        const delayMs = super.when(item);
        delays.push(delayMs);
        return delayMs;
      }
    })(50, 10_000);
    run(
      (cache) =>
        new Controller({
          name: 'backoff',
          for: GADGETS,
          forOptions: { namespace: ns.name },
          reconciler,
          cache,
          logger: quiet,
          registry,
          rateLimiter,
        }),
    );
    await objects.apply('gadgets', ns.name, 'flaky', {});
    const key = `${ns.name}/flaky`;
    // testenv's default deadline, a bound for a hang: the six delays asked for sum to 3.15 s (50·(2^6 − 1) ms).
    await waitFor('the attempt after the failures', () => reconciler.callsFor(key).length > failures);
    const calls = reconciler.callsFor(key);
    const gaps = calls.slice(1, failures + 1).map((call, index) => call.startedAt - (calls[index]?.endedAt ?? 0));
    // Each failure asked for twice the delay of the one before (50·2^n ms), and the queue never releases early, so
    // every gap is at least its delay. Scheduling noise only lengthens gaps (a busy machine by seconds), so no gap is
    // compared with another.
    expect(delays).toEqual(Array.from({ length: failures }, (_, n) => 50 * 2 ** n));
    for (const [n, gap] of gaps.entries()) expect(gap).toBeGreaterThanOrEqual(50 * 2 ** n - 1);
    const text = await registry.metrics();
    expect(text).toContain(`controller_runtime_reconcile_errors_total{controller="backoff"} ${failures}`);
    expect(text).toContain(`controller_runtime_reconcile_total{controller="backoff",result="error"} ${failures}`);
    expect(text).toContain('controller_runtime_reconcile_total{controller="backoff",result="success"} 1');
    expect(text).toContain(`workqueue_retries_total{name="backoff"} ${failures}`);
  });

  it('requeues a stale-resourceVersion Conflict through the rate limiter, logged at debug and counted, not as an error', async () => {
    const ns = await withTestNamespace(testEnv().kubeConfig, 'core-conflict');
    const objects = new TestObjects(testEnv().kubeConfig);
    const client = new Client(testEnv().kubeConfig, { fieldManager: 'core-conflict-test' });
    const registry = new Registry();
    const { logger, lines } = captureLogs('debug');
    const conflicts: unknown[] = [];
    const reconciler = new RecordingReconciler(async (request, attempt) => {
      const gadget = await client.get(GADGETS, request);
      if (attempt === 1) {
        // Another writer gets there first: the update below carries a resourceVersion that is no longer current.
        await objects.apply('gadgets', ns.name, request.name, { note: 'changed by someone else' });
        try {
          await client.update(GADGETS, { ...gadget, spec: { ...gadget.spec, size: 2 } });
        } catch (error) {
          conflicts.push(error);
          throw error;
        }
      }
      return {};
    });
    run(
      (cache) =>
        new Controller({
          name: 'conflict',
          for: GADGETS,
          forOptions: { namespace: ns.name },
          reconciler,
          cache,
          logger,
          registry,
          rateLimiter: new ItemExponentialFailureRateLimiter<string>(50, 10_000),
        }),
    );
    await objects.apply('gadgets', ns.name, 'contended', { size: 1 });
    const key = `${ns.name}/contended`;
    await waitFor('the reconcile after the conflict', () => reconciler.callsFor(key).length >= 2);
    client.close();
    expect(conflicts).toHaveLength(1);
    expect(isConflict(conflicts[0])).toBe(true);
    expect(lines.filter((line) => line.msg === 'Reconciler error')).toEqual([]);
    const debug = lines.find((line) => line.msg === 'Reconcile conflict, requeueing');
    expect(debug).toMatchObject({ level: 20, controller: 'conflict', name: 'contended' });
    const text = await registry.metrics();
    expect(text).toContain('controller_kit_reconcile_conflicts_total{controller="conflict"} 1');
    expect(text).toContain('controller_runtime_reconcile_errors_total{controller="conflict"} 0');
    expect(text).toContain('controller_runtime_reconcile_total{controller="conflict",result="requeue"} 1');
    // Through the rate limiter, like a failure: the retry counts, and the success afterwards forgets it.
    expect(text).toContain('workqueue_retries_total{name="conflict"} 1');
  });

  it('runs the reconciler again after requeueAfter, not before', async () => {
    const ns = await withTestNamespace(testEnv().kubeConfig, 'core-after');
    const objects = new TestObjects(testEnv().kubeConfig);
    const registry = new Registry();
    const delayMs = 400;
    const reconciler = new RecordingReconciler(async (_request, attempt) =>
      attempt === 1 ? { requeueAfterMs: delayMs } : {},
    );
    run(
      (cache) =>
        new Controller({
          name: 'after',
          for: GADGETS,
          forOptions: { namespace: ns.name },
          reconciler,
          cache,
          logger: quiet,
          registry,
        }),
    );
    await objects.apply('gadgets', ns.name, 'later', {});
    const key = `${ns.name}/later`;
    await waitFor('the requeued run', () => reconciler.callsFor(key).length >= 2);
    const [first, second] = reconciler.callsFor(key);
    expect((second?.startedAt ?? 0) - (first?.endedAt ?? 0)).toBeGreaterThanOrEqual(delayMs - 1);
    const text = await registry.metrics();
    expect(text).toContain('controller_runtime_reconcile_total{controller="after",result="requeue_after"} 1');
  });

  it('gives each reconcile its own ID, the same on every read and in its log lines', async () => {
    const ns = await withTestNamespace(testEnv().kubeConfig, 'core-ids');
    const objects = new TestObjects(testEnv().kubeConfig);
    const { logger, lines } = captureLogs('info');
    const seen: Array<{ first: string; second: string; name: string }> = [];
    const reconciler: Reconciler = {
      async reconcile(request, context) {
        const first = context.reconcileID;
        context.logger.info('reconciling');
        seen.push({ first, second: context.reconcileID, name: request.name });
        return seen.length < 2 ? { requeue: true } : {};
      },
    };
    run(
      (cache) =>
        new Controller({
          name: 'ids',
          for: GADGETS,
          forOptions: { namespace: ns.name },
          reconciler,
          cache,
          logger,
          registry: new Registry(),
        }),
    );
    await objects.apply('gadgets', ns.name, 'one', {});
    await waitFor('two reconciles', () => seen.length >= 2);
    const [first, second] = seen;
    expect(first?.first).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(first?.second).toBe(first?.first);
    expect(second?.first).not.toBe(first?.first);
    const logged = lines.filter((line) => line.msg === 'reconciling').slice(0, 2);
    expect(logged).toEqual([
      expect.objectContaining({ namespace: ns.name, name: 'one', reconcileID: first?.first, controller: 'ids' }),
      expect.objectContaining({ namespace: ns.name, name: 'one', reconcileID: second?.first, controller: 'ids' }),
    ]);
  });

  it('maps owned objects to their controller owner and related objects through watches()', async () => {
    const ns = await withTestNamespace(testEnv().kubeConfig, 'core-map');
    const objects = new TestObjects(testEnv().kubeConfig);
    const core = testEnv().kubeConfig.makeApiClient(CoreV1Api);
    const owner = await objects.apply('gadgets', ns.name, 'owner', {});
    await objects.apply('gadgets', ns.name, 'target', {});
    await objects.apply('gadgets', ns.name, 'bystander', {});
    const reconciler = new RecordingReconciler(async () => ({}));
    const { cache, controller } = run((cache) =>
      new Controller({
        name: 'mapping',
        for: GADGETS,
        forOptions: { namespace: ns.name },
        reconciler,
        cache,
        logger: quiet,
      })
        .owns(CONFIGMAPS, { namespace: ns.name })
        .watches(
          PARTS,
          (part) => (part.spec?.gadget ? [{ namespace: part.metadata.namespace, name: part.spec.gadget }] : []),
          {
            namespace: ns.name,
          },
        ),
    );
    const key = (name: string): string => `${ns.name}/${name}`;
    await waitFor('initial reconciles', () =>
      ['owner', 'target', 'bystander'].every((n) => reconciler.callsFor(key(n)).length >= 1),
    );
    const before = (name: string): number => reconciler.callsFor(key(name)).length;
    const ownerBefore = before('owner');
    const targetBefore = before('target');

    const ownerRef = { apiVersion: GADGETS.apiVersion, kind: 'Gadget', name: 'owner', uid: owner.metadata.uid };
    await core.createNamespacedConfigMap({
      namespace: ns.name,
      body: { metadata: { name: 'owned', ownerReferences: [{ ...ownerRef, controller: true }] } },
    });
    await waitFor('owner reconciled for its ConfigMap', () => before('owner') > ownerBefore);

    await objects.apply('parts', ns.name, 'part', { gadget: 'target' });
    await waitFor('target reconciled for its Part', () => before('target') > targetBefore);

    // Moving the part to another gadget re-queues both: the old side must let go, the new side must pick up.
    const ownerNow = before('owner');
    const targetNow = before('target');
    await objects.apply('parts', ns.name, 'part', { gadget: 'owner' });
    await waitFor(
      'both sides of the moved Part reconciled',
      () => before('owner') > ownerNow && before('target') > targetNow,
    );

    // A non-controller owner reference maps to nothing. Once the ConfigMap is in the cache its handlers have run;
    // with one worker the queue is FIFO, so when a marker enqueued after it is done, any request for the bystander
    // would have been processed already.
    await core.createNamespacedConfigMap({
      namespace: ns.name,
      body: { metadata: { name: 'unowned', ownerReferences: [{ ...ownerRef, name: 'bystander', controller: false }] } },
    });
    const configMaps = cache.informerFor(CONFIGMAPS, { namespace: ns.name });
    await waitFor('unowned ConfigMap cached', () => configMaps.store.get(key('unowned')) !== undefined);
    const targetMarker = before('target');
    controller.enqueue({ namespace: ns.name, name: 'target' });
    await waitFor('marker processed', () => before('target') > targetMarker);
    expect(before('bystander')).toBe(1);
  });

  it('aborts the reconcile signal on stop and waits for in-flight reconciles before start resolves', async () => {
    const ns = await withTestNamespace(testEnv().kubeConfig, 'core-stop');
    const objects = new TestObjects(testEnv().kubeConfig);
    let entered = false;
    let sawAbort = false;
    let finished = false;
    const cache = new Cache({ kubeConfig: testEnv().kubeConfig, logger: quiet });
    const controller = new Controller({
      name: 'stopping',
      for: GADGETS,
      forOptions: { namespace: ns.name },
      cache,
      logger: quiet,
      reconciler: {
        reconcile: async (_request, context) => {
          entered = true;
          // A reconciler that honours its signal: it waits for the abort, then finishes its step.
          await new Promise<void>((resolve) =>
            context.signal.addEventListener('abort', () => resolve(), { once: true }),
          );
          sawAbort = context.signal.aborted;
          await work(50);
          finished = true;
          return {};
        },
      },
    });
    const stop = new AbortController();
    const cacheDone = cache.start(stop.signal);
    const controllerDone = controller.start(stop.signal);
    await objects.apply('gadgets', ns.name, 'busy', {});
    await waitFor('the reconcile in flight', () => entered);
    stop.abort();
    await controllerDone;
    expect(sawAbort).toBe(true);
    expect(finished).toBe(true);
    await cacheDone;
  });

  it('lets two controllers share one registry and one informer, and stops cleanly', async () => {
    const ns = await withTestNamespace(testEnv().kubeConfig, 'core-share');
    const objects = new TestObjects(testEnv().kubeConfig);
    const registry = new Registry();
    const cache = new Cache({ kubeConfig: testEnv().kubeConfig, logger: quiet });
    const a = new RecordingReconciler(async () => ({}));
    const b = new RecordingReconciler(async () => ({}));
    const first = new Controller({
      name: 'first',
      for: GADGETS,
      forOptions: { namespace: ns.name },
      reconciler: a,
      cache,
      logger: quiet,
      registry,
    });
    const second = new Controller({
      name: 'second',
      for: GADGETS,
      forOptions: { namespace: ns.name },
      reconciler: b,
      cache,
      logger: quiet,
      registry,
      maxConcurrentReconciles: 2,
    });
    const stop = new AbortController();
    const done = Promise.all([cache.start(stop.signal), first.start(stop.signal), second.start(stop.signal)]);
    await objects.apply('gadgets', ns.name, 'shared', {});
    await waitFor('both reconciled', () => a.calls.length > 0 && b.calls.length > 0);
    expect(cache.listInformers()).toHaveLength(1);
    expect(
      () => new Controller({ name: 'first', for: GADGETS, reconciler: a, cache, logger: quiet, registry }),
    ).toThrow(/already used/);
    const text = await registry.metrics();
    expect(text).toContain('controller_runtime_max_concurrent_reconciles{controller="first"} 1');
    expect(text).toContain('controller_runtime_max_concurrent_reconciles{controller="second"} 2');
    expect(text).toContain('workqueue_adds_total{name="second"}');
    expect(first.needLeaderElection).toBe(true);
    expect(cache.needLeaderElection).toBe(false);
    stop.abort();
    await done;
    expect(() => first.owns(CONFIGMAPS)).toThrow(/after start/);
  });
});
