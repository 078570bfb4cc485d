import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { testEnv, withTestNamespace } from '@tally-ipam/testenv/vitest';
import { type Logger, pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Cache } from '../src/cache/cache.js';
import { keyOf } from '../src/cache/object.js';
import { OWNER_UID_INDEX } from '../src/cache/store.js';
import { keepObject } from '../src/cache/transform.js';
import { typedResource } from '../src/client/object-schema.js';
import { type KubeRequest, KubeTransport } from '../src/client/transport.js';
import { captureLogs } from './fixtures/core-log-capture.js';
import {
  CONFIGMAPS,
  GADGETS,
  type Gadget,
  gadgetSchema,
  PARTS,
  type Part,
  TestObjects,
} from './fixtures/core-resources.js';
import { waitFor } from './fixtures/core-wait.js';

/** A cache sync lists a few objects: testenv's default wait, a bound for a hang, not the 30 s a busy machine reaches. */
const SYNC_HANG_BOUND_MS = 120_000;

const quiet = pino({ level: 'silent' });
const stops: AbortController[] = [];

function startCache(
  options: { pageSize?: number; watchList?: boolean; logger?: Logger; transport?: KubeTransport } = {},
): { cache: Cache; stop: AbortController; done: Promise<void> } {
  const cache = new Cache({
    kubeConfig: testEnv().kubeConfig,
    logger: options.logger ?? quiet,
    transport: options.transport,
    reflector: { pageSize: options.pageSize, watchList: options.watchList },
  });
  const stop = new AbortController();
  stops.push(stop);
  return { cache, stop, done: cache.start(stop.signal) };
}

/** The cache's transport, recording the path of every GET that lists a collection (has `limit`). */
class CountingTransport extends KubeTransport {
  readonly lists: string[] = [];

  override request(request: KubeRequest): Promise<unknown> {
    if (request.method === 'GET' && request.query?.limit !== undefined) this.lists.push(request.path);
    return super.request(request);
  }
}

afterEach(() => {
  for (const stop of stops.splice(0)) stop.abort();
});

describe('Cache against a real API server', () => {
  it('sees every create, update and delete, with old and new objects', async () => {
    const ns = await withTestNamespace(testEnv().kubeConfig, 'core-cache');
    const objects = new TestObjects(testEnv().kubeConfig);
    const { cache } = startCache();
    const events: string[] = [];
    const updates: Array<{ old: Gadget; new: Gadget }> = [];
    const informer = cache.informerFor(GADGETS, { namespace: ns.name });
    informer.addEventHandler({
      onAdd: (gadget) => events.push(`add ${keyOf(gadget)}`),
      onUpdate: (oldGadget, newGadget) => {
        events.push(`update ${keyOf(newGadget)}`);
        updates.push({ old: oldGadget, new: newGadget });
      },
      onDelete: (gadget, unknown) => events.push(`delete ${keyOf(gadget)} ${unknown}`),
    });
    expect(await cache.waitForCacheSync(AbortSignal.timeout(SYNC_HANG_BOUND_MS))).toBe(true);

    await objects.apply('gadgets', ns.name, 'g1', { size: 1 });
    await waitFor('g1 in the store', () => informer.store.get(`${ns.name}/g1`) !== undefined);
    await objects.apply('gadgets', ns.name, 'g1', { size: 2 });
    await waitFor('g1 updated', () => informer.store.get(`${ns.name}/g1`)?.spec?.size === 2);
    await objects.delete('gadgets', ns.name, 'g1');
    await waitFor('g1 gone', () => informer.store.get(`${ns.name}/g1`) === undefined);

    expect(events).toEqual([`add ${ns.name}/g1`, `update ${ns.name}/g1`, `delete ${ns.name}/g1 false`]);
    expect(updates[0]?.old.spec?.size).toBe(1);
    expect(updates[0]?.new.spec?.size).toBe(2);
  });

  it.each([
    { way: 'one LIST read as a stream (the default)', watchList: undefined, via: 'list' },
    { way: 'a watch-list when asked', watchList: true, via: 'watch-list' },
  ])('syncs from $way, drops managedFields, and keeps them when told to', async ({ watchList, via }) => {
    const ns = await withTestNamespace(testEnv().kubeConfig, 'core-initial');
    const objects = new TestObjects(testEnv().kubeConfig);
    for (let i = 0; i < 23; i += 1) await objects.apply('parts', ns.name, `p${i}`, { payload: `n${i}` });
    const { logger, lines } = captureLogs('info');
    const transport = new CountingTransport(testEnv().kubeConfig);
    const { cache } = startCache({ logger, transport, watchList });
    const stripped = cache.informerFor(PARTS, { namespace: ns.name });
    const kept = cache.informerFor(PARTS, {
      labelSelector: {},
      namespace: ns.name,
      fieldSelector: 'metadata.namespace!=x',
      transform: keepObject,
    });
    expect(await cache.waitForCacheSync(AbortSignal.timeout(SYNC_HANG_BOUND_MS))).toBe(true);

    expect(stripped.store.size).toBe(23);
    expect(kept.store.size).toBe(23);
    expect(stripped.store.list().every((part) => part.metadata.managedFields === undefined)).toBe(true);
    expect(kept.store.list().every((part) => (part.metadata.managedFields?.length ?? 0) > 0)).toBe(true);
    // Neither went through the buffering transport: the list is read from its stream, the watch-list is a watch.
    expect(transport.lists).toEqual([]);
    const listed = lines.filter((line) => line.msg === 'listed parts (initial list)');
    expect(listed.map((line) => [line.via, line.count])).toEqual([
      [via, 23],
      [via, 23],
    ]);
    // A watch carries on from the state.
    await objects.apply('parts', ns.name, 'p23', { payload: 'n23' });
    await waitFor('p23 in both stores', () => stripped.store.size === 24 && kept.store.size === 24);
    expect(await cache.list(PARTS, { namespace: ns.name })).toHaveLength(24);
  });

  it('lists in pages when asked, and watches from the list', async () => {
    const ns = await withTestNamespace(testEnv().kubeConfig, 'core-pages');
    const objects = new TestObjects(testEnv().kubeConfig);
    for (let i = 0; i < 23; i += 1) await objects.apply('parts', ns.name, `p${i}`, { payload: `n${i}` });
    const { logger, lines } = captureLogs('info');
    const transport = new CountingTransport(testEnv().kubeConfig);
    const { cache } = startCache({ pageSize: 5, watchList: false, logger, transport });
    const informer = cache.informerFor(PARTS, { namespace: ns.name });
    expect(await cache.waitForCacheSync(AbortSignal.timeout(SYNC_HANG_BOUND_MS))).toBe(true);

    expect(informer.store.size).toBe(23);
    // 23 objects in pages of 5.
    expect(transport.lists).toEqual(Array(5).fill(`/apis/${PARTS.apiVersion}/namespaces/${ns.name}/parts`));
    expect(lines.filter((line) => line.msg === 'listed parts (initial list)').map((line) => line.via)).toEqual([
      'list',
    ]);
    await objects.apply('parts', ns.name, 'p23', { payload: 'n23' });
    await waitFor('p23 in the store', () => informer.store.size === 24);
  });

  it('shares one informer per resource and scope, and replays the store to late handlers', async () => {
    const ns = await withTestNamespace(testEnv().kubeConfig, 'core-share');
    const objects = new TestObjects(testEnv().kubeConfig);
    await objects.apply('gadgets', ns.name, 'early', { size: 1 });
    const { cache } = startCache();
    const first = cache.informerFor(GADGETS, { namespace: ns.name });
    expect(cache.informerFor(GADGETS, { namespace: ns.name })).toBe(first);
    expect(cache.informerFor(GADGETS)).not.toBe(first);
    await waitFor('synced', () => cache.hasSynced());
    const replayed: Array<[string, boolean]> = [];
    first.addEventHandler({ onAdd: (gadget, initial) => replayed.push([gadget.metadata.name, initial]) });
    expect(replayed).toEqual([['early', true]]);
    await objects.apply('gadgets', ns.name, 'late', { size: 1 });
    await waitFor('late add', () => replayed.length === 2);
    expect(replayed[1]).toEqual(['late', false]);
  });

  it('indexes by owner UID and by a custom index, kept current through updates', async () => {
    const ns = await withTestNamespace(testEnv().kubeConfig, 'core-index');
    const objects = new TestObjects(testEnv().kubeConfig);
    const owner = await objects.apply('gadgets', ns.name, 'owner', {});
    const ownerRef = { apiVersion: GADGETS.apiVersion, kind: 'Gadget', name: 'owner', uid: owner.metadata.uid };
    await objects.apply('parts', ns.name, 'a', { gadget: 'g1' }, { ownerReferences: [ownerRef] });
    await objects.apply('parts', ns.name, 'b', { gadget: 'g2' });
    const { cache } = startCache();
    const informer = cache.informerFor(PARTS, {
      namespace: ns.name,
      indexers: { byGadget: (part: Part) => (part.spec?.gadget ? [part.spec.gadget] : []) },
    });
    expect(await cache.waitForCacheSync(AbortSignal.timeout(SYNC_HANG_BOUND_MS))).toBe(true);

    expect(informer.store.byIndex(OWNER_UID_INDEX, owner.metadata.uid).map((p) => p.metadata.name)).toEqual(['a']);
    expect(informer.store.byIndex('byGadget', 'g1').map((p) => p.metadata.name)).toEqual(['a']);
    await objects.apply('parts', ns.name, 'b', { gadget: 'g1' });
    await waitFor('b re-indexed', () => informer.store.byIndex('byGadget', 'g1').length === 2);
    expect(informer.store.byIndex('byGadget', 'g2')).toEqual([]);
    const viaCache = await cache.list(PARTS, { namespace: ns.name, index: { name: 'byGadget', value: 'g1' } });
    expect(viaCache.map((p) => p.metadata.name).sort()).toEqual(['a', 'b']);
  });

  it('logs a throwing handler and still delivers the event to the other handlers', async () => {
    const ns = await withTestNamespace(testEnv().kubeConfig, 'core-throw');
    const objects = new TestObjects(testEnv().kubeConfig);
    const { logger, lines } = captureLogs('error');
    const cache = new Cache({ kubeConfig: testEnv().kubeConfig, logger });
    const stop = new AbortController();
    stops.push(stop);
    void cache.start(stop.signal);
    const informer = cache.informerFor(GADGETS, { namespace: ns.name });
    informer.addEventHandler({
      onAdd: () => {
        throw new Error('handler bug');
      },
    });
    const seen: string[] = [];
    informer.addEventHandler({ onAdd: (gadget) => seen.push(gadget.metadata.name) });
    await objects.apply('gadgets', ns.name, 'one', {});
    await objects.apply('gadgets', ns.name, 'two', {});
    await waitFor('both adds delivered', () => seen.length === 2);
    expect(seen).toEqual(['one', 'two']);
    expect(lines.filter((line) => line.msg === 'Gadget event handler onAdd threw')).toHaveLength(2);
  });

  it('filters on the server with a label selector, and drops an object whose labels stop matching', async () => {
    const ns = await withTestNamespace(testEnv().kubeConfig, 'core-labels');
    const core = testEnv().kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({
      namespace: ns.name,
      body: { metadata: { name: 'in', labels: { pick: 'yes' } } },
    });
    await core.createNamespacedConfigMap({
      namespace: ns.name,
      body: { metadata: { name: 'out', labels: { pick: 'no' } } },
    });
    const { cache } = startCache();
    const scope = { namespace: ns.name, labelSelector: { matchLabels: { pick: 'yes' } } };
    const picked = await cache.list(CONFIGMAPS, scope);
    expect(picked.map((cm) => cm.metadata.name)).toEqual(['in']);

    const deleted: string[] = [];
    cache.informerFor(CONFIGMAPS, scope).addEventHandler({ onDelete: (cm) => deleted.push(cm.metadata.name) });
    await core.patchNamespacedConfigMap(
      { namespace: ns.name, name: 'in', body: { metadata: { labels: { pick: 'no' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await waitFor('the unmatched ConfigMap dropped', () => deleted.length === 1);
    expect(deleted).toEqual(['in']);
    expect(await cache.list(CONFIGMAPS, scope)).toEqual([]);
  });

  it('re-announces cached objects as same-object updates every resync period', async () => {
    const ns = await withTestNamespace(testEnv().kubeConfig, 'core-resync');
    const objects = new TestObjects(testEnv().kubeConfig);
    await objects.apply('gadgets', ns.name, 'steady', {});
    const cache = new Cache({ kubeConfig: testEnv().kubeConfig, logger: quiet, resyncPeriodMs: 200 });
    const stop = new AbortController();
    stops.push(stop);
    void cache.start(stop.signal);
    const resyncs: Array<{ same: boolean; name: string }> = [];
    cache.informerFor(GADGETS, { namespace: ns.name }).addEventHandler({
      onUpdate: (oldGadget, newGadget) =>
        resyncs.push({ same: oldGadget === newGadget, name: newGadget.metadata.name }),
    });
    await waitFor('two resyncs', () => resyncs.length >= 2);
    expect(resyncs.every((event) => event.same && event.name === 'steady')).toBe(true);
  });

  it('reads live from the API server with liveGet, undefined when absent', async () => {
    const ns = await withTestNamespace(testEnv().kubeConfig, 'core-live');
    const objects = new TestObjects(testEnv().kubeConfig);
    const { cache } = startCache();
    const created = await objects.apply('gadgets', ns.name, 'fresh', { size: 7 });
    const live = await cache.liveGet(GADGETS, { namespace: ns.name, name: 'fresh' });
    expect(live?.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(live?.spec?.size).toBe(7);
    expect(await cache.liveGet(GADGETS, { namespace: ns.name, name: 'missing' })).toBeUndefined();

    // A typed resource whose schema the object fails: the error names the object, not just the zod issue.
    const strict = typedResource(GADGETS, gadgetSchema.extend({ spec: z.object({ note: z.string() }) }));
    await expect(cache.liveGet(strict, { namespace: ns.name, name: 'fresh' })).rejects.toThrow(
      `Gadget ${ns.name}/fresh read from the API server does not match its schema`,
    );
  });

  it('start resolves once stopped, and waitForCacheSync reports false when aborted before sync', async () => {
    const { cache, stop, done } = startCache();
    cache.informerFor(GADGETS);
    expect(await cache.waitForCacheSync(AbortSignal.abort())).toBe(false);
    expect(await cache.waitForCacheSync(AbortSignal.timeout(SYNC_HANG_BOUND_MS))).toBe(true);
    stop.abort();
    await done;
    expect(cache.hasSynced()).toBe(true);
  });
});
