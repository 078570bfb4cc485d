import { fileURLToPath } from 'node:url';
import { type ControlPlane, createTestNamespace, installCRDs, startControlPlane } from '@tally-ipam/testenv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cache } from '../src/cache/cache.js';
import type { SharedInformer } from '../src/cache/informer.js';
import { keyOf } from '../src/cache/object.js';
import { captureLogs } from './fixtures/core-log-capture.js';
import { GADGETS, PARTS, type Part, TestObjects } from './fixtures/core-resources.js';
import { waitFor } from './fixtures/core-wait.js';

/**
 * kube-apiserver restarted (etcd kept) with its watch cache ON, as in a real cluster: after the restart each resource's
 * watch cache starts from etcd's current revision, so a reflector resuming from an older resourceVersion is told 410
 * ("too old resource version: N (M)"), while the server also answers 429 "storage is (re)initializing" and 503 for a
 * while. The reflector must relist with a consistent read and be watching again, with writes going on throughout.
 * Own control plane: the restart would disturb every other test file.
 */
let plane: ControlPlane;

beforeAll(async () => {
  plane = await startControlPlane({ ignoreTestKubeconfig: true });
  await installCRDs(plane.kubeConfig(), [fileURLToPath(new URL('./fixtures/crds', import.meta.url))]);
}, 180_000);

afterAll(async () => {
  await plane?.stop();
});

function versionsOf(informer: SharedInformer<Part>): Map<string, string | undefined> {
  return new Map(informer.store.list().map((part) => [keyOf(part), part.metadata.resourceVersion]));
}

function sameMap(a: Map<string, string | undefined>, b: Map<string, string | undefined>): boolean {
  return a.size === b.size && [...a].every(([key, value]) => b.get(key) === value);
}

describe('Reflector across a kube-apiserver restart (watch cache on)', () => {
  it('relists from a consistent read and keeps watching while writes continue', async () => {
    const kc = plane.kubeConfig();
    const ns = await createTestNamespace(kc, 'core-restart-wc');
    const objects = new TestObjects(kc);
    const { logger, lines } = captureLogs('debug');
    const cache = new Cache({ kubeConfig: kc, logger });
    const stop = new AbortController();
    const done = cache.start(stop.signal);
    const parts = cache.informerFor(PARTS, { namespace: ns.name });
    // Nothing writes gadgets until after the restart: its reflector holds the oldest resourceVersion of the two.
    const gadgets = cache.informerFor(GADGETS, { namespace: ns.name });
    for (let i = 0; i < 5; i += 1) await objects.apply('parts', ns.name, `p${i}`, { payload: 'v0' });
    await waitFor('5 parts cached', () => parts.store.size === 5);
    await waitFor('gadgets synced', () => gadgets.hasSynced());

    // A writer that keeps updating the parts through the restart; failed writes (server down) are simply retried.
    let writing = true;
    let written = 0;
    const writer = (async (): Promise<void> => {
      while (writing) {
        try {
          await objects.apply('parts', ns.name, `p${written % 5}`, { payload: `w${written}` });
          written += 1;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    })();

    const restartedAt = Date.now();
    await plane.restartAPIServer();
    const readyAt = Date.now();
    const writtenAtReady = written;
    await waitFor('20 writes after the restart', () => written >= writtenAtReady + 20, { timeoutMs: 120_000 });
    writing = false;
    await writer;

    await objects.apply('parts', ns.name, 'after', { payload: 'x' });
    await objects.apply('gadgets', ns.name, 'after', { size: 1 });
    await waitFor(
      'both informers watching again',
      () => parts.store.get(`${ns.name}/after`) !== undefined && gadgets.store.get(`${ns.name}/after`) !== undefined,
      { timeoutMs: 120_000, describe: () => lines.filter((line) => (line.level as number) >= 30).slice(-10) },
    );
    console.info(`[core-reflector-restart] API server ready → both informers current: ${Date.now() - readyAt} ms`);
    const fresh = await objects.listVersions('parts', ns.name);
    await waitFor('parts store equal to a fresh LIST', () => sameMap(versionsOf(parts), fresh), {
      describe: () => ({ store: [...versionsOf(parts)], fresh: [...fresh] }),
    });

    // Each relist says why and from which resourceVersion; each list says what it got.
    const relists = lines.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('relisting '));
    for (const relist of relists) {
      expect(relist.reason).toMatch(/^resourceVersion (expired \(410\)|too large)/);
      expect(relist.level).toBe(30);
    }
    const lists = lines.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('listed '));
    for (const list of lists) {
      expect(list.resourceVersion).toMatch(/^\d+$/);
      expect(list.level).toBe(30);
    }
    // A retry the server timed (429 "storage is (re)initializing", 503 with Retry-After) waits at least that long.
    for (const retry of lines.filter((line) => line.level === 40)) {
      const retryAfterSeconds = (retry.err as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
      if (typeof retryAfterSeconds === 'number')
        expect(retry.retryInMs).toBeGreaterThanOrEqual(retryAfterSeconds * 1000);
    }
    const reopened = lines.filter((line) => line.msg === 'watching parts' && (line.time as number) >= restartedAt);
    expect(reopened.length).toBeGreaterThan(0);

    stop.abort();
    await done;
  });
});
