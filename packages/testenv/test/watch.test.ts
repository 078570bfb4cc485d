import { CoreV1Api, type KubeConfig, Watch } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { testEnv, withTestNamespace } from '../src/vitest.js';

interface WatchEvent {
  readonly type: string;
  readonly name: string | undefined;
  readonly resourceVersion: string | undefined;
  /** A bookmark that ends the initial events of a `sendInitialEvents` watch. */
  readonly initialEventsEnd: boolean;
}

const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

interface WatchedObject {
  metadata?: { name?: string; resourceVersion?: string; annotations?: Record<string, string> };
}

interface WatchOptions {
  /** Extra query parameters (`resourceVersion`, `sendInitialEvents`, …). */
  readonly query: Readonly<Record<string, string | boolean>>;
  /** Runs once the server has answered the watch request, i.e. the watcher is registered. */
  readonly onStarted: () => Promise<unknown>;
  readonly stopWhen: (events: readonly WatchEvent[]) => boolean;
}

/** Watches ConfigMaps of one namespace with bookmarks on until `stopWhen` says so (the server's timeout is 60 s). */
async function watchConfigMaps(kc: KubeConfig, namespace: string, options: WatchOptions): Promise<WatchEvent[]> {
  const { query, onStarted, stopWhen } = options;
  const events: WatchEvent[] = [];
  let abort: AbortController | undefined;
  let stopped = false;
  await new Promise<void>((resolve, reject) => {
    new Watch(kc)
      .watch(
        `/api/v1/namespaces/${namespace}/configmaps`,
        { allowWatchBookmarks: true, timeoutSeconds: 60, ...query },
        (type: string, object: WatchedObject) => {
          events.push({
            type,
            name: object.metadata?.name,
            resourceVersion: object.metadata?.resourceVersion,
            initialEventsEnd: object.metadata?.annotations?.[INITIAL_EVENTS_END] === 'true',
          });
          if (!stopped && stopWhen(events)) {
            stopped = true;
            abort?.abort();
            resolve();
          }
        },
        (error: unknown) => {
          if (stopped || (error instanceof Error && error.name === 'AbortError')) resolve();
          else
            reject(error ?? new Error(`the watch ended before its condition held; events: ${JSON.stringify(events)}`));
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
    await core.createNamespacedConfigMap({ namespace: ns.name, body: { metadata: { name: 'before' } } });

    // A streaming list (sendInitialEvents): the server sends the current objects, then a bookmark marked
    // initial-events-end whose resourceVersion covers them. That bookmark comes when the state is sent, not on a
    // timer (the periodic bookmarks come about 2 s before a watch's timeout, which a loaded machine can miss).
    const first = await watchConfigMaps(kc, ns.name, {
      query: { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', resourceVersion: '' },
      onStarted: async () => {},
      stopWhen: (events) => events.some((e) => e.initialEventsEnd),
    });
    expect(first.filter((e) => e.type === 'ADDED').map((e) => e.name)).toEqual(['before']);
    const bookmark = first.find((e) => e.initialEventsEnd);
    expect(bookmark?.type).toBe('BOOKMARK');
    expect(bookmark?.resourceVersion).toBeTruthy();
    // Events of one watch are ordered: the bookmark after the ADDED event covers it.
    expect(first.findIndex((e) => e.initialEventsEnd)).toBeGreaterThan(first.findIndex((e) => e.type === 'ADDED'));

    const resumed = await watchConfigMaps(kc, ns.name, {
      query: { resourceVersion: bookmark?.resourceVersion ?? '' },
      onStarted: () => core.createNamespacedConfigMap({ namespace: ns.name, body: { metadata: { name: 'after' } } }),
      stopWhen: (events) => events.some((e) => e.type === 'ADDED'),
    });
    expect(resumed.filter((e) => e.type !== 'BOOKMARK').map((e) => `${e.type} ${e.name}`)).toEqual(['ADDED after']);
  });
});
