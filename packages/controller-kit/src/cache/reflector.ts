import type { Logger } from 'pino';
import { KubeApiError, type RequestTarget } from '../client/errors.js';
import { linkedSignal } from '../client/linked-signal.js';
import { collectionPath, type ResourceKind } from '../client/resource.js';
import type { KubeTransport } from '../client/transport.js';
import { Backoff, type BackoffOptions, sleep } from './backoff.js';
import { type KubeObject, keyOf } from './object.js';
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
  /**
   * Learn the full state from a watch that starts with every object (`sendInitialEvents=true`, the API server's
   * watch-list; client-go's default since 1.35) instead of a LIST. Default false: over the same 20,000 objects a
   * watch-list cost kube-apiserver 2.2× the CPU of one consistent LIST, and this process 1.4×
   * (`bench/initial-read-cost.ts`). A server that refuses it (before 1.32, unless its `WatchList` feature gate is on)
   * is listed instead, from then on.
   */
  readonly watchList?: boolean;
  /**
   * Page size of the list (client-go: 500). Default 0: one consistent LIST, read item by item as it arrives, so it
   * never holds the whole body at once. Pages cost more: after the first, kube-apiserver may serve them from etcd
   * rather than its watch cache (it did on a control plane whose objects had been quiet for minutes).
   */
  readonly pageSize?: number;
  /** Range for the server-side watch timeout, in seconds, chosen at random per watch (client-go: 300–600). */
  readonly minWatchTimeoutSeconds?: number;
  readonly maxWatchTimeoutSeconds?: number;
  /**
   * How often the API server sends a bookmark on a quiet watch (kube-apiserver's watch cache: every minute). A watch
   * with no event and no bookmark for two of these (or past its own timeout, if sooner) plus `stallGraceMs` is
   * treated as dead and reopened.
   */
  readonly bookmarkIntervalMs?: number;
  /** Slack on top of the silence limit above. Default 30 s. */
  readonly stallGraceMs?: number;
  /** Deadline for a watch's response headers. Default 30 s. */
  readonly watchOpenTimeoutMs?: number;
  /** Backoff between failed attempts (client-go: 800 ms doubling to 30 s). */
  readonly backoff?: BackoffOptions;
  /**
   * Per-request deadline of list pages; for a list in one response, the deadline for its headers and the longest
   * silence between its bytes. Default 60 s.
   */
  readonly listTimeoutMs?: number;
}

export interface ReflectorConfig<T extends KubeObject> {
  readonly resource: ResourceKind;
  readonly namespace?: string | undefined;
  readonly labelSelector?: string | undefined;
  readonly fieldSelector?: string | undefined;
  /** Validates one object from the wire; throws when it does not fit. */
  readonly parse: (raw: unknown) => T;
  /**
   * `parse` drops `metadata.managedFields`: a list read item by item leaves them out of the texts before JSON.parse,
   * sparing the work of building them (see `ListItemSplitterOptions.omitManagedFields`).
   */
  readonly omitManagedFields?: boolean | undefined;
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
/** kube-apiserver's watch cache bookmarks a quiet watch about once a minute (`defaultBookmarkFrequency`). */
const DEFAULT_BOOKMARK_INTERVAL_MS = 60_000;

class ResourceVersionExpiredError extends Error {
  override readonly name = 'ResourceVersionExpiredError';
}

/** The server answered a watch-list as a plain watch, or refused its parameters: it has no watch-list to offer. */
class WatchListUnsupportedError extends Error {
  override readonly name = 'WatchListUnsupportedError';
}

/** The annotation on the bookmark that ends a watch-list's initial events (`metav1.InitialEventsAnnotationKey`). */
const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/** Why the reflector lists again from a consistent read instead of resuming its watch. */
type RelistReason = 'initial list' | 'resourceVersion expired (410)' | 'resourceVersion too large for the watch cache';

/**
 * Keeps a sink in step with the API server for one resource (client-go's `Reflector`): the full state from a consistent
 * LIST (one response read item by item, or pages) then a WATCH from the list's resourceVersion, or, when asked, from a
 * watch-list (a WATCH whose stream starts with every object and a bookmark marking their end, then carries on as a
 * watch); bookmarks and a randomized server timeout either way, resuming from the last seen resourceVersion when the
 * stream ends. 410 Gone and "too large resource version" force a relist; a silent watch is reopened; any other failure
 * is logged and retried with capped exponential backoff (at least the server's Retry-After). It stops only when its
 * signal aborts.
 */
export class Reflector<T extends KubeObject> {
  private resourceVersion: string | undefined;
  /** Set while the next loop must list first; the reason is logged with the list. */
  private relistReason: RelistReason | undefined = 'initial list';
  /** True from a relist until its watch delivers something: a relist that gains nothing must not repeat at once. */
  private relistedWithoutProgress = false;
  private watchStartedAt: number | undefined;
  /** False once the server refused a watch-list: the state is listed from then on. */
  private watchList: boolean;
  private readonly backoff: Backoff;
  private readonly options: ReflectorOptions;
  private readonly target: RequestTarget;

  constructor(private readonly config: ReflectorConfig<T>) {
    this.options = config.options ?? {};
    this.watchList = this.options.watchList ?? false;
    this.backoff = new Backoff(this.options.backoff);
    this.target = { verb: 'list/watch', resource: config.resource.plural, namespace: config.namespace };
  }

  /** The resourceVersion the next watch resumes from; undefined until listed or after a 410. */
  get lastSyncResourceVersion(): string | undefined {
    return this.resourceVersion;
  }

  async run(signal: AbortSignal): Promise<void> {
    // Every request, watch and sleep of this reflector hangs off one child signal, so the caller's signal (shared by
    // all informers of a cache) carries one listener however many requests are in flight.
    const own = linkedSignal(signal);
    try {
      await this.loop(own.signal);
    } finally {
      own.dispose();
    }
  }

  private async loop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        if (this.relistReason !== undefined && this.watchList) await this.watchOnce(signal, this.relistReason);
        else {
          if (this.relistReason !== undefined) await this.listAndReplace(signal, this.relistReason);
          await this.watchOnce(signal, undefined);
        }
      } catch (error) {
        if (signal.aborted) return;
        if (this.watchList && this.relistReason !== undefined && refusesWatchList(error)) {
          this.watchList = false;
          this.config.logger.info(
            { err: error },
            `the API server offers no watch-list for ${this.config.resource.plural}: listing in pages instead`,
          );
          continue;
        }
        // A watch that ran a while before failing proves the path healthy: start the backoff over.
        if (this.watchStartedAt !== undefined && Date.now() - this.watchStartedAt >= HEALTHY_WATCH_MS) {
          this.backoff.reset();
        }
        this.watchStartedAt = undefined;
        const relistReason = relistReasonFor(error);
        if (relistReason !== undefined) {
          const immediately = !this.relistedWithoutProgress;
          this.config.logger.info(
            { resourceVersion: this.resourceVersion, reason: relistReason, err: error, immediately },
            `relisting ${this.config.resource.plural}: ${relistReason}`,
          );
          this.resourceVersion = undefined;
          this.relistReason = relistReason;
          // The first relist after progress is immediate, whatever failed before it (a restarted API server answers
          // 410 right after a run of connection errors). A relist whose watch fails the same way before delivering
          // anything would spin: that one backs off like any failure.
          if (immediately) continue;
        }
        const delayMs = this.retryDelayMs(error);
        this.config.logger.warn(
          { err: error, attempt: this.backoff.attempts, retryInMs: delayMs, resourceVersion: this.resourceVersion },
          `list/watch of ${this.config.resource.plural} failed, retrying`,
        );
        await sleep(delayMs, signal);
      }
    }
  }

  /** The backoff, stretched to the server's Retry-After (429/503) with jitter so clients told the same do not align. */
  private retryDelayMs(error: unknown): number {
    const backoffMs = this.backoff.next();
    const retryAfterSeconds = error instanceof KubeApiError ? error.retryAfterSeconds : undefined;
    if (retryAfterSeconds === undefined) return backoffMs;
    const jitter = this.options.backoff?.jitter ?? 0.5;
    return Math.max(backoffMs, Math.round(retryAfterSeconds * 1000 * (1 + jitter * Math.random())));
  }

  private query(extra: Record<string, string>): Record<string, string> {
    const query: Record<string, string> = { ...extra };
    if (this.config.labelSelector) query.labelSelector = this.config.labelSelector;
    if (this.config.fieldSelector) query.fieldSelector = this.config.fieldSelector;
    return query;
  }

  /**
   * Lists with `resourceVersion` unset: a consistent read (served from etcd, or from the watch cache once it has
   * caught up with etcd's current revision). Never `resourceVersion=0`, which any cache may answer from wherever it
   * is — right after an API server restart that is behind the watch it would feed, the 410 loop client-go avoids by
   * relisting with "" after a 410 (`isLastSyncResourceVersionUnavailable`).
   */
  private async listAndReplace(signal: AbortSignal, reason: RelistReason): Promise<void> {
    const path = collectionPath(this.config.resource, this.config.namespace);
    const pageSize = this.options.pageSize ?? 0;
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
    this.replaceAll(listed, resourceVersion, reason, 'list');
  }

  private replaceAll(objects: readonly T[], resourceVersion: string, reason: RelistReason, via: string): void {
    this.config.sink.replace(objects, resourceVersion);
    this.resourceVersion = resourceVersion;
    this.relistedWithoutProgress = reason !== 'initial list';
    this.relistReason = undefined;
    this.config.logger.info(
      { count: objects.length, resourceVersion, reason, via },
      `listed ${this.config.resource.plural} (${reason})`,
    );
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
      this.config.logger.debug(
        { resourceVersion: query.resourceVersion ?? '', pageSize, continued: continueToken !== undefined },
        `listing ${this.config.resource.plural}`,
      );
      const timeoutMs = this.options.listTimeoutMs ?? 60_000;
      const parseInto = (raw: unknown): void => {
        const object = this.parseOrLog(raw);
        if (object) listed.push(object);
      };
      // One response is read item by item as it arrives; pages are small enough to be read whole.
      const body =
        pageSize > 0
          ? await this.config.transport.request({ method: 'GET', path, query, signal, timeoutMs, target: this.target })
          : await this.config.watchConnection.list(
              { path, query, signal, idleTimeoutMs: timeoutMs, openTimeoutMs: timeoutMs, target: this.target },
              parseInto,
              { omitManagedFields: this.config.omitManagedFields ?? false },
            );
      const page = listEnvelopeSchema.safeParse(body);
      if (!page.success) {
        throw new Error(`list of ${this.config.resource.plural} returned a malformed body: ${page.error.message}`);
      }
      for (const raw of page.data.items ?? []) parseInto(raw);
      resourceVersion = page.data.metadata.resourceVersion ?? resourceVersion;
      continueToken = page.data.metadata.continue || undefined;
    } while (continueToken);
    return { listed, resourceVersion };
  }

  /**
   * One watch, until the server ends it. With `initial` set it is a watch-list: the stream first carries every object
   * (as ADDED events) and then a bookmark annotated as their end, at whose resourceVersion they are the complete
   * state; they replace the sink's state at that bookmark, and the stream carries on as a plain watch.
   */
  private async watchOnce(signal: AbortSignal, initial: RelistReason | undefined): Promise<void> {
    const minSeconds = this.options.minWatchTimeoutSeconds ?? 300;
    const maxSeconds = this.options.maxWatchTimeoutSeconds ?? 600;
    const timeoutSeconds = Math.floor(minSeconds + Math.random() * (maxSeconds - minSeconds + 1));
    const bookmarkIntervalMs = this.options.bookmarkIntervalMs ?? DEFAULT_BOOKMARK_INTERVAL_MS;
    // Past the server's own timeout, or two missed bookmarks, a watch that said nothing is not coming back.
    const idleTimeoutMs =
      Math.min(timeoutSeconds * 1000, 2 * bookmarkIntervalMs) + (this.options.stallGraceMs ?? 30_000);
    const startedAt = Date.now();
    this.watchStartedAt = startedAt;
    let delivered = 0;
    // A watch-list from an unset resourceVersion is a consistent read, as the LIST it replaces.
    const resourceVersion = initial ? '' : (this.resourceVersion ?? '');
    this.config.logger.debug(
      { resourceVersion, timeoutSeconds, idleTimeoutMs, initial },
      `watching ${this.config.resource.plural}`,
    );
    const events = this.config.watchConnection.events({
      path: collectionPath(this.config.resource, this.config.namespace),
      query: this.query({
        watch: 'true',
        allowWatchBookmarks: 'true',
        timeoutSeconds: String(timeoutSeconds),
        resourceVersion,
        ...(initial ? { sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan' } : {}),
      }),
      signal,
      idleTimeoutMs,
      openTimeoutMs: this.options.watchOpenTimeoutMs ?? 30_000,
      target: { ...this.target, verb: 'watch' },
    });
    // The initial events, by key, until the bookmark that ends them (undefined from then on).
    let pending: Map<string, T> | undefined = initial ? new Map() : undefined;
    for await (const event of events) {
      if (pending && initial) {
        if (this.applyInitial(event, pending, initial)) pending = undefined;
      } else {
        this.apply(event);
        this.relistedWithoutProgress = false;
      }
      delivered += 1;
      if (delivered === 1 || Date.now() - startedAt >= HEALTHY_WATCH_MS) this.backoff.reset();
    }
    this.watchStartedAt = undefined;
    if (signal.aborted) return;
    if (pending) {
      throw new Error(
        `watch-list of ${this.config.resource.plural} ended after ${pending.size} initial events, before the bookmark ` +
          'marking their end',
      );
    }
    const ranMs = Date.now() - startedAt;
    if (delivered === 0 && ranMs < SHORT_WATCH_MS) {
      throw new Error(`watch of ${this.config.resource.plural} closed after ${ranMs} ms without any event`);
    }
    if (ranMs >= HEALTHY_WATCH_MS) this.backoff.reset();
  }

  /** One event of a watch-list's initial events; true when it was the bookmark ending them (the state is replaced). */
  private applyInitial(event: WatchEvent, pending: Map<string, T>, reason: RelistReason): boolean {
    switch (event.type) {
      case 'ERROR':
        this.apply(event);
        return false;
      case 'BOOKMARK': {
        const bookmark = bookmarkSchema.safeParse(event.object);
        if (!bookmark.success || bookmark.data.metadata.annotations?.[INITIAL_EVENTS_END_ANNOTATION] !== 'true') {
          // A server without watch-list serves the request as a plain watch: its bookmarks end nothing.
          throw new WatchListUnsupportedError(
            `a bookmark without the ${INITIAL_EVENTS_END_ANNOTATION} annotation came before the initial events ended`,
          );
        }
        this.replaceAll([...pending.values()], bookmark.data.metadata.resourceVersion, reason, 'watch-list');
        return true;
      }
      case 'ADDED':
      case 'MODIFIED':
      case 'DELETED': {
        const object = this.parseOrLog(event.object);
        if (!object) return false;
        if (event.type === 'DELETED') pending.delete(keyOf(object));
        else pending.set(keyOf(object), object);
        return false;
      }
    }
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
 * Whether a failure means the resourceVersion cannot be resumed from, so only a fresh consistent LIST helps:
 * - 410 Gone / `Expired` (HTTP status or ERROR event): compacted away, or older than a restarted watch cache's start;
 * - 504 with cause `ResourceVersionTooLarge` ("Too large resource version"): this server's watch cache is behind the
 *   resourceVersion we hold (it came from etcd or another server); waiting for it is what a relist does properly.
 */
function relistReasonFor(error: unknown): RelistReason | undefined {
  if (error instanceof ResourceVersionExpiredError) return 'resourceVersion expired (410)';
  if (!(error instanceof KubeApiError)) return undefined;
  if (error.statusCode === 410 || error.reason === 'Expired' || error.reason === 'Gone') {
    return 'resourceVersion expired (410)';
  }
  if (isTooLargeResourceVersion(error)) return 'resourceVersion too large for the watch cache';
  return undefined;
}

function isTooLargeResourceVersion(error: KubeApiError): boolean {
  return (
    error.statusCode === 504 &&
    (error.causes.some((cause) => cause.reason === 'ResourceVersionTooLarge') ||
      /too large resource version/i.test(error.serverMessage))
  );
}

/**
 * Whether a failed watch-list means this server has none to offer: it refused the request's parameters (400/422, as
 * kube-apiserver does when its `WatchList` feature gate is off), or answered it as a plain watch.
 */
function refusesWatchList(error: unknown): boolean {
  if (error instanceof WatchListUnsupportedError) return true;
  return error instanceof KubeApiError && (error.statusCode === 400 || error.statusCode === 422);
}

/** A continue token that expired during a paginated list (410): the list restarts unpaginated. */
function isExpired(error: unknown): boolean {
  return relistReasonFor(error) === 'resourceVersion expired (410)';
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
