import { CoreV1Api, type KubeConfig, Watch } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { testEnv, withTestNamespace } from '../src/vitest.js';

interface WatchEvent {
  readonly type: string;
  readonly name: string | undefined;
  readonly resourceVersion: string | undefined;
}

interface WatchedObject {
  metadata?: { name?: string; resourceVersion?: string };
}

interface WatchOptions {
  readonly resourceVersion: string;
  readonly timeoutSeconds: number;
  /** Runs once the server has answered the watch request, i.e. the watcher is registered. */
  readonly onStarted: () => Promise<unknown>;
  readonly stopWhen?: (events: readonly WatchEvent[]) => boolean;
}

/**
 * Watches ConfigMaps of one namespace with bookmarks on, until the server ends the watch (`timeoutSeconds`) or
 * `stopWhen` says so.
 */
async function watchConfigMaps(kc: KubeConfig, namespace: string, options: WatchOptions): Promise<WatchEvent[]> {
  const { resourceVersion, timeoutSeconds, onStarted, stopWhen = () => false } = options;
  const events: WatchEvent[] = [];
  let abort: AbortController | undefined;
  let stopped = false;
  await new Promise<void>((resolve, reject) => {
    new Watch(kc)
      .watch(
        `/api/v1/namespaces/${namespace}/configmaps`,
        { allowWatchBookmarks: true, resourceVersion, timeoutSeconds },
        (type: string, object: WatchedObject) => {
          events.push({ type, name: object.metadata?.name, resourceVersion: object.metadata?.resourceVersion });
          if (!stopped && stopWhen(events)) {
            stopped = true;
            abort?.abort();
            resolve();
          }
        },
        (error: unknown) => {
          if (error && !stopped && !(error instanceof Error && error.name === 'AbortError')) reject(error);
          else resolve();
        },
      )
      .then(async (controller) => {
        abort = controller;
        await onStarted();
      })
      .catch(reject);
  });
  return events;
}

describe('watch bookmarks', () => {
  it('resumes from a bookmark without replaying what came before it', async () => {
    const kc = testEnv().kubeConfig;
    const core = kc.makeApiClient(CoreV1Api);
    const ns = await withTestNamespace(kc, 'watch');
    const listed = await core.listNamespacedConfigMap({ namespace: ns.name });
    const startVersion = listed.metadata?.resourceVersion;
    expect(startVersion).toBeTruthy();

    // A bookmark carries the newest resourceVersion the server has processed, and is only sent when that is newer
    // than what the watcher has seen; so the change happens while the watch is open. The API server sends the
    // bookmark shortly (about 2 s) before the watch's timeout.
    const first = await watchConfigMaps(kc, ns.name, {
      resourceVersion: startVersion ?? '',
      timeoutSeconds: 6,
      onStarted: () => core.createNamespacedConfigMap({ namespace: ns.name, body: { metadata: { name: 'before' } } }),
    });
    expect(first.filter((e) => e.type === 'ADDED').map((e) => e.name)).toEqual(['before']);
    const bookmark = first.findLast((e) => e.type === 'BOOKMARK');
    expect(bookmark?.resourceVersion).toBeTruthy();
    // Events of one watch are ordered: a bookmark after the ADDED event covers it.
    expect(first.findLastIndex((e) => e.type === 'BOOKMARK')).toBeGreaterThan(
      first.findIndex((e) => e.type === 'ADDED'),
    );

    const resumed = await watchConfigMaps(kc, ns.name, {
      resourceVersion: bookmark?.resourceVersion ?? '',
      timeoutSeconds: 30,
      onStarted: () => core.createNamespacedConfigMap({ namespace: ns.name, body: { metadata: { name: 'after' } } }),
      stopWhen: (events) => events.some((e) => e.type === 'ADDED'),
    });
    expect(resumed.filter((e) => e.type !== 'BOOKMARK').map((e) => `${e.type} ${e.name}`)).toEqual(['ADDED after']);
  });
});
