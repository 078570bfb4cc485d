import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { setTimeout as delay } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { z } from 'zod';
import { errorMessage } from './format.js';
import { kubeRequest } from './kube-request.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface WatchCollectionOptions {
  /** The collection, with any selector: `/api/v1/namespaces/x/services?fieldSelector=metadata.name%3Dy`. */
  readonly path: string;
  /** Every item of each (re)list: what changed while no watch was open is seen here. */
  readonly onList: (items: readonly unknown[]) => void;
  readonly onEvent: (type: WatchEventType, object: unknown) => void;
  /** A list or watch that failed; it is retried after `retryMs`. */
  readonly onError: (error: Error) => void;
  /** Pause before a failed list or watch is retried (default 1 s). */
  readonly retryMs?: number;
}

export interface CollectionWatch {
  /** Closes the watch and waits for the loop to end; no callback runs after it resolves. */
  stop(): Promise<void>;
}

const listSchema = z.object({
  metadata: z.object({ resourceVersion: z.string().min(1) }).loose(),
  items: z.array(z.unknown()).nullish(),
});

const eventSchema = z.object({
  type: z.enum(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']),
  object: z.unknown(),
});

function withQuery(path: string, query: string): string {
  return `${path}${path.includes('?') ? '&' : '?'}${query}`;
}

async function list(kc: KubeConfig, path: string): Promise<z.infer<typeof listSchema>> {
  const response = await kubeRequest(kc, { method: 'GET', path });
  if (response.status !== 200) {
    throw new Error(`listing ${path} returned HTTP ${response.status}: ${response.body.slice(0, 500)}`);
  }
  const parsed = listSchema.safeParse(JSON.parse(response.body));
  if (!parsed.success) throw new Error(`listing ${path} returned no list: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/**
 * One watch stream from `resourceVersion`, line by line, until the server ends it, it breaks or `signal` aborts. An
 * `ERROR` event (typically 410 Gone: the version is too old) ends it too, so the caller lists again.
 */
async function stream(
  kc: KubeConfig,
  path: string,
  resourceVersion: string,
  onEvent: WatchCollectionOptions['onEvent'],
  signal: AbortSignal,
): Promise<void> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the KubeConfig has no current cluster');
  const query = `watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(resourceVersion)}`;
  const url = new URL(
    withQuery(path, query).replace(/^\//, ''),
    cluster.server.endsWith('/') ? cluster.server : `${cluster.server}/`,
  );
  const options: RequestOptions & { headers: Record<string, string> } = {
    method: 'GET',
    headers: { Accept: 'application/json' },
    signal,
  };
  await kc.applyToHTTPSOptions(options);
  await new Promise<void>((resolve, reject) => {
    const request = url.protocol === 'https:' ? httpsRequest(url, options) : httpRequest(url, options);
    // A watch is open for as long as the keeper runs; it must never be what keeps the process alive.
    request.on('socket', (socket) => socket.unref());
    request.on('error', (error) => {
      if (signal.aborted) resolve();
      else reject(new Error(`watching ${path} failed: ${error.message}`, { cause: error }));
    });
    request.on('response', (response) => {
      if (response.statusCode !== 200) {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          reject(
            new Error(
              `watching ${path} returned HTTP ${response.statusCode}: ${Buffer.concat(chunks).toString().slice(0, 500)}`,
            ),
          ),
        );
        return;
      }
      let pending = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        pending += chunk;
        for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n')) {
          const line = pending.slice(0, newline).trim();
          pending = pending.slice(newline + 1);
          if (line === '') continue;
          // Anything thrown here would be an uncaught exception in the host process: end the stream with it instead.
          let type: z.infer<typeof eventSchema>['type'];
          try {
            const event = eventSchema.parse(JSON.parse(line));
            type = event.type;
            if (type !== 'ERROR' && type !== 'BOOKMARK') onEvent(type, event.object);
          } catch (error) {
            request.destroy(new Error(`a watch event of ${path}: ${errorMessage(error)}`, { cause: error }));
            return;
          }
          if (type === 'ERROR') {
            request.destroy();
            resolve();
            return;
          }
        }
      });
      response.on('end', resolve);
      response.on('close', resolve);
      response.on('error', (error) =>
        signal.aborted
          ? resolve()
          : reject(new Error(`the watch of ${path} broke: ${error.message}`, { cause: error })),
      );
    });
    request.end();
  });
}

/**
 * List, then watch from the list's version, again and again until stopped: the smallest reflector that sees every
 * change of a collection (a change made while disconnected — an API server restart — shows in the next list).
 * Callbacks run synchronously in the order of events. Its sockets and retry timers are unref'd.
 */
export function watchCollection(kc: KubeConfig, options: WatchCollectionOptions): CollectionWatch {
  const abort = new AbortController();
  const { signal } = abort;
  const loop = (async (): Promise<void> => {
    while (!signal.aborted) {
      try {
        const current = await list(kc, options.path);
        if (signal.aborted) return;
        options.onList(current.items ?? []);
        await stream(kc, options.path, current.metadata.resourceVersion, options.onEvent, signal);
      } catch (error) {
        if (signal.aborted) return;
        options.onError(error instanceof Error ? error : new Error(errorMessage(error)));
        await delay(options.retryMs ?? 1_000, undefined, { signal, ref: false }).catch(() => {});
      }
    }
  })();
  return {
    stop: async () => {
      abort.abort();
      await loop;
    },
  };
}
