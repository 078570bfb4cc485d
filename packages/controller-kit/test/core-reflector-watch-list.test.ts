import { fileURLToPath } from 'node:url';
import { type ControlPlane, createTestNamespace, installCRDs, startControlPlane } from '@tally-ipam/testenv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cache } from '../src/cache/cache.js';
import { captureLogs } from './fixtures/core-log-capture.js';
import { PARTS, TestObjects } from './fixtures/core-resources.js';
import { waitFor } from './fixtures/core-wait.js';

/** A cache sync lists a few objects: testenv's default wait, a bound for a hang, not the 30 s a busy machine reaches. */
const SYNC_HANG_BOUND_MS = 120_000;

/**
 * An API server without watch-list (kube-apiserver before 1.32 serves none unless its `WatchList` feature gate is on):
 * a control plane of its own with the gate off, where the reflector's watch-list is refused with 422 Invalid.
 */
let plane: ControlPlane;

beforeAll(async () => {
  plane = await startControlPlane({ apiServerFlags: ['--feature-gates=WatchList=false'], ignoreTestKubeconfig: true });
  await installCRDs(plane.kubeConfig(), [fileURLToPath(new URL('./fixtures/crds', import.meta.url))]);
}, 180_000);

afterAll(async () => {
  await plane?.stop();
});

describe('Reflector against an API server without watch-list (own control plane)', () => {
  it('lists in pages instead, says so once, and keeps watching from the list', async () => {
    const kc = plane.kubeConfig();
    const ns = await createTestNamespace(kc, 'core-no-watch-list');
    const objects = new TestObjects(kc);
    for (let i = 0; i < 12; i += 1) await objects.apply('parts', ns.name, `p${i}`, { payload: 'v1' });
    const { logger, lines } = captureLogs('info');
    const cache = new Cache({ kubeConfig: kc, logger, reflector: { watchList: true, pageSize: 5 } });
    const stop = new AbortController();
    const done = cache.start(stop.signal);
    const informer = cache.informerFor(PARTS, { namespace: ns.name });
    expect(await cache.waitForCacheSync(AbortSignal.timeout(SYNC_HANG_BOUND_MS))).toBe(true);

    expect(informer.store.size).toBe(12);
    const refused = lines.filter((line) =>
      String(line.msg).startsWith('the API server offers no watch-list for parts'),
    );
    expect(refused).toHaveLength(1);
    expect(JSON.stringify(refused[0]?.err)).toContain('sendInitialEvents');
    expect(lines.filter((line) => line.msg === 'listed parts (initial list)').map((line) => line.via)).toEqual([
      'list',
    ]);
    // Nothing was retried as a failure: the refusal is an answer, not an error.
    expect(lines.filter((line) => line.level === 40)).toEqual([]);

    await objects.apply('parts', ns.name, 'p0', { payload: 'v2' });
    await objects.delete('parts', ns.name, 'p1');
    await waitFor(
      'the update and the delete in the store',
      () =>
        informer.store.get(`${ns.name}/p0`)?.spec?.payload === 'v2' &&
        informer.store.get(`${ns.name}/p1`) === undefined,
    );
    stop.abort();
    await done;
  });
});
