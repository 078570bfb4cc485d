import type { Logger } from 'pino';
import { KubeApiError, type RequestTarget } from '../client/errors.js';
import { collectionPath, type ResourceKind } from '../client/resource.js';
import type { KubeTransport } from '../client/transport.js';
import { Backoff, type BackoffOptions, sleep } from './backoff.js';
import type { KubeObject } from './object.js';
import type { WatchConnection } from './watch-connection.js';
import { bookmarkSchema, listEnvelopeSchema, type WatchEvent, watchErrorStatusSchema } from './wire.js';

/** Where a reflector delivers what it learns (the informer, which owns the store and the event handlers). */
export interface ReflectorSink<T extends KubeObject> {
  /** The complete state after a (re)list: objects missing from it were deleted. */
  replace(objects: readonly T[], resourceVersion: string): void;
  upsert(object: T): void;
  remove(object: T): void;
}

export interface ReflectorOptions {
  /** Page size of the list (client-go: 500). */
  readonly pageSize?: number;
  /** Range for the server-side watch timeout, in seconds, chosen at random per watch (client-go: 300–600). */
  readonly minWatchTimeoutSeconds?: number;
  readonly maxWatchTimeoutSeconds?: number;
  /** No byte for this long past the watch timeout means the connection is dead. Default 30 s. */
  readonly stallGraceMs?: number;
  /** Backoff between failed attempts (client-go: 800 ms doubling to 30 s). */
  readonly backoff?: BackoffOptions;
  /** Per-request deadline of list pages. Default 60 s. */
  readonly listTimeoutMs?: number;
}

export interface ReflectorConfig<T extends KubeObject> {
  readonly resource: ResourceKind;
  readonly namespace?: string | undefined;
  readonly labelSelector?: string | undefined;
  readonly fieldSelector?: string | undefined;
  /** Validates one object from the wire; throws when it does not fit. */
  readonly parse: (raw: unknown) => T;
  readonly transport: KubeTransport;
  readonly watchConnection: WatchConnection;
  readonly sink: ReflectorSink<T>;
  readonly logger: Logger;
  readonly options?: ReflectorOptions | undefined;
}

/** A watch that ended sooner than this without delivering anything counts as a failure (client-go's rule). */
const SHORT_WATCH_MS = 1_000;
/** A watch that ran at least this long, or delivered events, proves the connection healthy again. */
const HEALTHY_WATCH_MS = 5_000;

class ResourceVersionExpiredError extends Error {
  override readonly name = 'ResourceVersionExpiredError';
}

/**
 * Keeps a sink in step with the API server for one resource (client-go's `Reflector`): a paginated LIST, then a WATCH
 * from the list's resourceVersion with bookmarks and a randomized server timeout, resuming from the last seen
 * resourceVersion when the stream ends. 410 Gone (as an HTTP status or an ERROR event) forces a relist; any other
 * failure is logged and retried with capped exponential backoff. It stops only when its signal aborts.
 */
export class Reflector<T extends KubeObject> {
  private resourceVersion: string | undefined;
  private watchStartedAt: number | undefined;
  private readonly backoff: Backoff;
  private readonly options: ReflectorOptions;
  private readonly target: RequestTarget;

  constructor(private readonly config: ReflectorConfig<T>) {
    this.options = config.options ?? {};
    this.backoff = new Backoff(this.options.backoff);
    this.target = { verb: 'list/watch', resource: config.resource.plural, namespace: config.namespace };
  }

  /** The resourceVersion the next watch resumes from; undefined until listed or after a 410. */
  get lastSyncResourceVersion(): string | undefined {
    return this.resourceVersion;
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        if (this.resourceVersion === undefined) await this.listAndReplace(signal);
        await this.watchOnce(signal);
      } catch (error) {
        if (signal.aborted) return;
        // A watch that ran a while before failing proves the path healthy: start the backoff over.
        if (this.watchStartedAt !== undefined && Date.now() - this.watchStartedAt >= HEALTHY_WATCH_MS) {
          this.backoff.reset();
        }
        this.watchStartedAt = undefined;
        if (isExpired(error)) {
          this.config.logger.info(
            { resourceVersion: this.resourceVersion, err: error },
            'resourceVersion too old, relisting',
          );
          this.resourceVersion = undefined;
          // An immediate relist is right once; a loop of them is a failure like any other and backs off.
          if (this.backoff.attempts === 0) {
            this.backoff.next();
            continue;
          }
        }
        const delayMs = this.backoff.next();
        this.config.logger.warn(
          { err: error, attempt: this.backoff.attempts, retryInMs: delayMs, resourceVersion: this.resourceVersion },
          `list/watch of ${this.config.resource.plural} failed, retrying`,
        );
        await sleep(delayMs, signal);
      }
    }
  }

  private query(extra: Record<string, string>): Record<string, string> {
    const query: Record<string, string> = { ...extra };
    if (this.config.labelSelector) query.labelSelector = this.config.labelSelector;
    if (this.config.fieldSelector) query.fieldSelector = this.config.fieldSelector;
    return query;
  }

  private async listAndReplace(signal: AbortSignal): Promise<void> {
    const path = collectionPath(this.config.resource, this.config.namespace);
    const pageSize = this.options.pageSize ?? 500;
    let listed: T[];
    let resourceVersion: string;
    try {
      ({ listed, resourceVersion } = await this.listPages(path, pageSize, signal));
    } catch (error) {
      // A continue token expires with compaction; a list slower than that falls back to one unpaginated request.
      if (!(isExpired(error) && pageSize > 0)) throw error;
      this.config.logger.info({ err: error }, 'continue token expired during a paginated list, listing in one page');
      ({ listed, resourceVersion } = await this.listPages(path, 0, signal));
    }
    this.config.sink.replace(listed, resourceVersion);
    this.resourceVersion = resourceVersion;
    this.config.logger.debug({ count: listed.length, resourceVersion }, `listed ${this.config.resource.plural}`);
  }

  private async listPages(
    path: string,
    pageSize: number,
    signal: AbortSignal,
  ): Promise<{ listed: T[]; resourceVersion: string }> {
    const listed: T[] = [];
    let continueToken: string | undefined;
    let resourceVersion = '';
    do {
      const query = this.query(pageSize > 0 ? { limit: String(pageSize) } : {});
      if (continueToken) query.continue = continueToken;
      const body = await this.config.transport.request({
        method: 'GET',
        path,
        query,
        signal,
        timeoutMs: this.options.listTimeoutMs ?? 60_000,
        target: this.target,
      });
      const page = listEnvelopeSchema.safeParse(body);
      if (!page.success) {
        throw new Error(`list of ${this.config.resource.plural} returned a malformed body: ${page.error.message}`);
      }
      for (const raw of page.data.items ?? []) {
        const object = this.parseOrLog(raw);
        if (object) listed.push(object);
      }
      resourceVersion = page.data.metadata.resourceVersion ?? resourceVersion;
      continueToken = page.data.metadata.continue || undefined;
    } while (continueToken);
    return { listed, resourceVersion };
  }

  private async watchOnce(signal: AbortSignal): Promise<void> {
    const minSeconds = this.options.minWatchTimeoutSeconds ?? 300;
    const maxSeconds = this.options.maxWatchTimeoutSeconds ?? 600;
    const timeoutSeconds = Math.floor(minSeconds + Math.random() * (maxSeconds - minSeconds + 1));
    const startedAt = Date.now();
    this.watchStartedAt = startedAt;
    let delivered = 0;
    const events = this.config.watchConnection.events({
      path: collectionPath(this.config.resource, this.config.namespace),
      query: this.query({
        watch: 'true',
        allowWatchBookmarks: 'true',
        timeoutSeconds: String(timeoutSeconds),
        resourceVersion: this.resourceVersion ?? '',
      }),
      signal,
      stallTimeoutMs: timeoutSeconds * 1000 + (this.options.stallGraceMs ?? 30_000),
      target: { ...this.target, verb: 'watch' },
    });
    for await (const event of events) {
      this.apply(event);
      delivered += 1;
      if (delivered === 1 || Date.now() - startedAt >= HEALTHY_WATCH_MS) this.backoff.reset();
    }
    this.watchStartedAt = undefined;
    if (signal.aborted) return;
    const ranMs = Date.now() - startedAt;
    if (delivered === 0 && ranMs < SHORT_WATCH_MS) {
      throw new Error(`watch of ${this.config.resource.plural} closed after ${ranMs} ms without any event`);
    }
    if (ranMs >= HEALTHY_WATCH_MS) this.backoff.reset();
  }

  private apply(event: WatchEvent): void {
    switch (event.type) {
      case 'ERROR': {
        const status = watchErrorStatusSchema.safeParse(event.object);
        const code = status.success ? (status.data.code ?? 0) : 0;
        if (code === 410) throw new ResourceVersionExpiredError(status.data?.message ?? 'resourceVersion expired');
        throw new KubeApiError(code || 500, event.object, { ...this.target, verb: 'watch' });
      }
      case 'BOOKMARK': {
        const bookmark = bookmarkSchema.safeParse(event.object);
        if (bookmark.success) this.resourceVersion = bookmark.data.metadata.resourceVersion;
        return;
      }
      case 'ADDED':
      case 'MODIFIED':
      case 'DELETED': {
        const object = this.parseOrLog(event.object);
        if (!object) return;
        if (event.type === 'DELETED') this.config.sink.remove(object);
        else this.config.sink.upsert(object);
        this.resourceVersion = object.metadata.resourceVersion ?? this.resourceVersion;
        return;
      }
    }
  }

  /** An object the schema rejects is logged and skipped: one bad object must not stop the whole cache. */
  private parseOrLog(raw: unknown): T | undefined {
    try {
      return this.config.parse(raw);
    } catch (error) {
      this.config.logger.error(
        { err: error, object: describeRaw(raw) },
        `skipping a ${this.config.resource.kind} that does not match its schema`,
      );
      return undefined;
    }
  }
}

/**
 * 410 Gone: the resourceVersion was compacted away. Also the API server's "Too large resource version" timeout: this
 * server is behind the one that gave us the resourceVersion; client-go relists in both cases rather than wait.
 */
function isExpired(error: unknown): boolean {
  if (error instanceof ResourceVersionExpiredError) return true;
  if (!(error instanceof KubeApiError)) return false;
  return (
    error.statusCode === 410 || (error.statusCode === 504 && /too large resource version/i.test(error.serverMessage))
  );
}

function describeRaw(raw: unknown): string {
  if (typeof raw === 'object' && raw !== null && 'metadata' in raw) {
    const metadata = (raw as { metadata: unknown }).metadata;
    if (typeof metadata === 'object' && metadata !== null) {
      const { namespace, name } = metadata as { namespace?: unknown; name?: unknown };
      return `${typeof namespace === 'string' ? `${namespace}/` : ''}${String(name)}`;
    }
  }
  return 'unnamed object';
}
