import { createTestNamespace, type TestNamespace } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AssumedObjects } from '../src/cache/assumed-objects.js';
import { Cache } from '../src/cache/cache.js';
import { Client } from '../src/client/client.js';
import { CONFIGMAPS as CONFIG_MAPS } from './fixtures/core-resources.js';
import { waitFor } from './fixtures/core-wait.js';

let client: Client;
let namespace: TestNamespace;
const stop = new AbortController();
let cache: Cache;

beforeAll(async () => {
  client = new Client(testEnv().kubeConfig, { fieldManager: 'assumed-objects-test' });
  namespace = await createTestNamespace(testEnv().kubeConfig, 'assumed');
  cache = new Cache({ kubeConfig: testEnv().kubeConfig, logger: pino({ level: 'silent' }) });
  void cache.start(stop.signal);
});

afterAll(async () => {
  stop.abort();
  await namespace?.delete();
  client?.close();
});

function configMap(
  name: string,
  value: string,
): Record<string, unknown> & { metadata: { name: string; namespace: string } } {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: namespace.name }, data: { value } };
}

describe('AssumedObjects: the assume cache of a process’s own writes', () => {
  it('answers with a write at once, yields to the informer once it shows that version, and never goes back', async () => {
    const informer = cache.informerFor(CONFIG_MAPS, { namespace: namespace.name });
    const assumed = new AssumedObjects(informer);
    await informer.whenSynced(stop.signal);
    const key = `${namespace.name}/first`;

    const created = assumed.assume(await client.create(CONFIG_MAPS, configMap('first', 'one')));
    const patched = assumed.assume(await client.mergePatch(CONFIG_MAPS, created.metadata, { data: { value: 'two' } }));
    // Whether or not the informer has caught up, the answer is the version this process wrote last.
    expect(assumed.get(key)?.metadata.resourceVersion).toBe(patched.metadata.resourceVersion);
    expect((assumed.get(key) as { data?: { value?: string } }).data?.value).toBe('two');

    await waitFor('the informer to show the patched version', () =>
      informer.store.get(key)?.metadata.resourceVersion === patched.metadata.resourceVersion ? true : undefined,
    );
    expect(assumed.pending()).toEqual([]);
    // A write older than what the informer shows is not taken.
    assumed.assume(created);
    expect(assumed.get(key)?.metadata.resourceVersion).toBe(patched.metadata.resourceVersion);
    expect(assumed.pending()).toEqual([]);

    await client.delete(CONFIG_MAPS, created.metadata);
    await waitFor('the informer to show the deletion', () => (informer.store.get(key) ? undefined : true));
    expect(assumed.get(key)).toBeUndefined();
  });

  it('keeps a new incarnation written after the delete of an older one of the same name', async () => {
    const informer = cache.informerFor(CONFIG_MAPS, { namespace: namespace.name });
    const assumed = new AssumedObjects(informer);
    await informer.whenSynced(stop.signal);
    const key = `${namespace.name}/second`;
    const old = await client.create(CONFIG_MAPS, configMap('second', 'old'));
    await waitFor('the informer to show the first incarnation', () => informer.store.get(key));
    await client.delete(CONFIG_MAPS, old.metadata);
    const renewed = assumed.assume(await client.create(CONFIG_MAPS, configMap('second', 'new')));
    // The informer may deliver the older incarnation's deletion after this point: it must not drop the new one.
    await waitFor('the informer to show the new incarnation', () =>
      informer.store.get(key)?.metadata.uid === renewed.metadata.uid ? true : undefined,
    );
    expect(assumed.get(key)?.metadata.uid).toBe(renewed.metadata.uid);
  });
});
