import { fileURLToPath } from 'node:url';
import { CoreV1Api } from '@kubernetes/client-node';
import { type ControlPlane, createTestNamespace, installCRDs, startControlPlane } from '@tally-ipam/testenv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cache } from '../src/cache/cache.js';
import type { SharedInformer } from '../src/cache/informer.js';
import { keyOf } from '../src/cache/object.js';
import { compactEtcd } from './fixtures/core-etcd.js';
import { FaultProxy } from './fixtures/core-fault-proxy.js';
import { captureLogs } from './fixtures/core-log-capture.js';
import { PARTS, type Part, TestObjects } from './fixtures/core-resources.js';
import { waitFor } from './fixtures/core-wait.js';

/**
 * Faults need a control plane of their own: this file restarts kube-apiserver and compacts etcd. The watch cache is
 * off so watches are served by etcd directly: a compacted resourceVersion then yields 410 Gone deterministically
 * (with the watch cache a 410 depends on its window, and bookmarks move a reflector's resourceVersion on a timer).
 */
let plane: ControlPlane;

beforeAll(async () => {
  plane = await startControlPlane({ apiServerFlags: ['--watch-cache=false'], ignoreTestKubeconfig: true });
  // testenv's installCRDs rejects a CRD whose fresh status has `conditions: null` (served from etcd when the watch
  // cache is off); re-applying is idempotent, so retry until the CRDs are established.
  await eventually('test CRDs installed', () =>
    installCRDs(plane.kubeConfig(), [fileURLToPath(new URL('./fixtures/crds', import.meta.url))]),
  );
}, 180_000);

afterAll(async () => {
  await plane?.stop();
});

/** Mirrors an informer's events into a map: if no event is missed, it equals the store at every quiet point. */
function mirrorEvents(informer: SharedInformer<Part>): {
  view: Map<string, string | undefined>;
  unknownDeletes: string[];
} {
  const view = new Map<string, string | undefined>();
  const unknownDeletes: string[] = [];
  informer.addEventHandler({
    onAdd: (part) => view.set(keyOf(part), part.metadata.resourceVersion),
    onUpdate: (_old, part) => view.set(keyOf(part), part.metadata.resourceVersion),
    onDelete: (part, finalStateUnknown) => {
      view.delete(keyOf(part));
      if (finalStateUnknown) unknownDeletes.push(keyOf(part));
    },
  });
  return { view, unknownDeletes };
}

function versionsOf(informer: SharedInformer<Part>): Map<string, string | undefined> {
  return new Map(informer.store.list().map((part) => [keyOf(part), part.metadata.resourceVersion]));
}

function sameMap(a: Map<string, string | undefined>, b: Map<string, string | undefined>): boolean {
  return a.size === b.size && [...a].every(([key, value]) => b.get(key) === value);
}

/** Retries a write until the API server accepts it (it may be restarting). */
async function eventually(what: string, write: () => Promise<unknown>): Promise<void> {
  let lastError: unknown;
  await waitFor(
    what,
    async () => {
      try {
        await write();
        return true;
      } catch (error) {
        lastError = error;
        return false;
      }
    },
    // testenv's default deadline, a bound for a hang: a kube-apiserver restart on a busy machine, not a speed.
    { intervalMs: 100, describe: () => String(lastError) },
  );
}

describe('Reflector under faults (own control plane)', () => {
  it('resumes after kube-apiserver is killed mid-watch and converges on changes made while it came back', async () => {
    const kc = plane.kubeConfig();
    const ns = await createTestNamespace(kc, 'core-restart');
    const objects = new TestObjects(kc);
    const { logger } = captureLogs('warn');
    const cache = new Cache({ kubeConfig: kc, logger, reflector: { backoff: { initialMs: 100, maxMs: 1_000 } } });
    const stop = new AbortController();
    const done = cache.start(stop.signal);
    const informer = cache.informerFor(PARTS, { namespace: ns.name });
    const { view } = mirrorEvents(informer);
    for (let i = 0; i < 10; i += 1) await objects.apply('parts', ns.name, `p${i}`, { payload: 'v1' });
    await waitFor('10 parts cached', () => informer.store.size === 10);

    const restart = plane.restartAPIServer();
    const changes = (async (): Promise<void> => {
      for (let i = 0; i < 5; i += 1) {
        await eventually(`update p${i}`, () => objects.apply('parts', ns.name, `p${i}`, { payload: 'v2' }));
      }
      for (let i = 5; i < 8; i += 1) await eventually(`delete p${i}`, () => objects.delete('parts', ns.name, `p${i}`));
      for (let i = 10; i < 13; i += 1) {
        await eventually(`create p${i}`, () => objects.apply('parts', ns.name, `p${i}`, { payload: 'new' }));
      }
    })();
    await Promise.all([restart, changes]);

    const fresh = await objects.listVersions('parts', ns.name);
    await waitFor('store equal to a fresh LIST', () => sameMap(versionsOf(informer), fresh), {
      describe: () => ({ store: [...versionsOf(informer)], fresh: [...fresh] }),
    });
    expect(sameMap(view, fresh)).toBe(true);
    expect(fresh.size).toBe(10);

    // Still watching, not stopped.
    await objects.apply('parts', ns.name, 'after', { payload: 'x' });
    await waitFor('a change after the restart', () => informer.store.get(`${ns.name}/after`) !== undefined);
    stop.abort();
    await done;
  });

  it.each([
    { way: 'a LIST', watchList: false },
    { way: 'a watch-list', watchList: true },
  ])(
    'relists by $way when its resourceVersion was compacted away (410 Gone), reporting vanished objects as deleted',
    async ({ watchList }) => {
      const kc = plane.kubeConfig();
      const ns = await createTestNamespace(kc, 'core-gone');
      const objects = new TestObjects(kc);
      const core = kc.makeApiClient(CoreV1Api);
      const proxy = await FaultProxy.start(kc.getCurrentCluster()?.server ?? '');
      const { logger, lines } = captureLogs('debug');
      const cache = new Cache({
        kubeConfig: proxy.kubeConfigThrough(kc),
        logger,
        reflector: { backoff: { initialMs: 100, maxMs: 500 }, watchList },
      });
      const stop = new AbortController();
      const done = cache.start(stop.signal);
      const informer = cache.informerFor(PARTS, { namespace: ns.name });
      const { view, unknownDeletes } = mirrorEvents(informer);
      await objects.apply('parts', ns.name, 'keep', { payload: 'v1' });
      await objects.apply('parts', ns.name, 'doomed', { payload: 'v1' });
      await waitFor('both parts cached', () => informer.store.size === 2);

      // Partition the reflector, change things behind its back, and compact the history it would resume from.
      proxy.cut();
      await objects.delete('parts', ns.name, 'doomed');
      await objects.apply('parts', ns.name, 'keep', { payload: 'v2' });
      await objects.apply('parts', ns.name, 'born', { payload: 'v1' });
      for (let i = 0; i < 5; i += 1) {
        await core.createNamespacedConfigMap({ namespace: ns.name, body: { metadata: { name: `noise-${i}` } } });
      }
      await compactEtcd(plane);
      proxy.restore();

      await waitFor('the relist', () => lines.some((line) => line.reason === 'resourceVersion expired (410)'));
      const fresh = await objects.listVersions('parts', ns.name);
      await waitFor('store equal to a fresh LIST', () => sameMap(versionsOf(informer), fresh), {
        describe: () => ({ store: [...versionsOf(informer)], fresh: [...fresh] }),
      });
      expect(sameMap(view, fresh)).toBe(true);
      expect(unknownDeletes).toEqual([`${ns.name}/doomed`]);
      expect(informer.store.get(`${ns.name}/keep`)?.spec?.payload).toBe('v2');
      // Both the first state and the relist after the 410 are consistent reads (resourceVersion unset): a relist from
      // the stale resourceVersion would be refused again, one from "0" could go back behind what was seen.
      const reads = watchList
        ? lines
            .filter((line) => line.msg === 'watching parts' && line.initial !== undefined)
            .map((line) => `${String(line.initial)} from "${String(line.resourceVersion)}"`)
        : lines
            .filter((line) => line.msg === 'listing parts')
            .map((line) => `list from "${String(line.resourceVersion)}"`);
      const listed = lines.filter((line) => String(line.msg).startsWith('listed parts')).map((line) => line.reason);
      expect(listed[0]).toBe('initial list');
      expect(listed).toContain('resourceVersion expired (410)');
      // One read per state learnt (the first, and each relist), every one of them consistent.
      expect(reads).toHaveLength(listed.length);
      expect(reads.every((read) => read.endsWith('from ""'))).toBe(true);

      await objects.apply('parts', ns.name, 'later', { payload: 'v1' });
      await waitFor('watching again after the relist', () => informer.store.get(`${ns.name}/later`) !== undefined);
      stop.abort();
      await done;
      await proxy.stop();
    },
  );

  it('detects a half-open watch with its stall timer and reconnects', async () => {
    const kc = plane.kubeConfig();
    const ns = await createTestNamespace(kc, 'core-stall');
    const objects = new TestObjects(kc);
    const proxy = await FaultProxy.start(kc.getCurrentCluster()?.server ?? '');
    const { logger, lines } = captureLogs('warn');
    const cache = new Cache({
      kubeConfig: proxy.kubeConfigThrough(kc),
      logger,
      // Server-side watch timeout 2 s, stall declared 1 s after it: a frozen stream is dropped within ~3 s.
      reflector: {
        minWatchTimeoutSeconds: 2,
        maxWatchTimeoutSeconds: 2,
        stallGraceMs: 1_000,
        backoff: { initialMs: 100 },
      },
    });
    const stop = new AbortController();
    const done = cache.start(stop.signal);
    const informer = cache.informerFor(PARTS, { namespace: ns.name });
    await objects.apply('parts', ns.name, 'before', { payload: 'v1' });
    await waitFor('first part cached', () => informer.store.size === 1);

    proxy.freeze();
    await objects.apply('parts', ns.name, 'during', { payload: 'v1' });
    await waitFor('a logged stall', () =>
      lines.some((line) => JSON.stringify(line.err ?? '').includes('WatchStalledError')),
    );
    proxy.restore();
    await waitFor('the change made while frozen', () => informer.store.get(`${ns.name}/during`) !== undefined);
    stop.abort();
    await done;
    await proxy.stop();
  });
});
