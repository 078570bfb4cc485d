import { randomUUID } from 'node:crypto';
import { type Logger, pino } from 'pino';
import { Registry } from 'prom-client';
import type { Cache, InformerScope } from '../cache/cache.js';
import type { HandlerRegistration } from '../cache/informer.js';
import type { KubeObject } from '../cache/object.js';
import { isNotFound, isStaleResourceVersionConflict } from '../client/errors.js';
import type { ObjectOf } from '../client/object-schema.js';
import { objectKeyString, parseObjectKey, type ResourceKind } from '../client/resource.js';
import { CacheSyncTimeoutError, formatGoDuration } from '../manager/api-server-monitor.js';
import { PrometheusQueueMetrics } from '../queue/prometheus-queue-metrics.js';
import type { RateLimiter } from '../queue/rate-limiter.js';
import { RateLimitingQueue } from '../queue/rate-limiting-queue.js';
import { ControllerMetrics, type ReconcileOutcome } from './controller-metrics.js';
import { type MapFunc, mappingEventHandler, requestForControllerOwner, requestForObject } from './event-handlers.js';
import type { Predicate } from './predicate.js';
import type { ReconcileContext, Reconciler, Request, Result } from './reconciler.js';

export interface WatchOptions<T extends KubeObject> extends InformerScope {
  /** Event filters of this watch; all must pass. */
  readonly predicates?: readonly Predicate<T>[] | undefined;
}

export interface ControllerOptions<R extends ResourceKind> {
  /** Unique per manager: labels metrics (`controller`, workqueue `name`) and logs. */
  readonly name: string;
  /** The primary type: its objects are the requests. */
  readonly for: R;
  /** Scope and predicates of the primary watch. */
  readonly forOptions?: WatchOptions<ObjectOf<R>> | undefined;
  readonly reconciler: Reconciler;
  /** The shared cache: controllers asking for the same resource and scope share one informer. */
  readonly cache: Cache;
  readonly logger?: Logger | undefined;
  /** Where metrics go; several controllers may share one. A private registry when absent. */
  readonly registry?: Registry | undefined;
  /** Workers reconciling different keys in parallel (a key is never reconciled twice at once). Default 1. */
  readonly maxConcurrentReconciles?: number | undefined;
  /** Fail `start` when the watched informers have not synced within this (default: the cache's, 2 min). */
  readonly cacheSyncTimeoutMs?: number | undefined;
  /** Retry policy for failures and `requeue`; client-go's default controller rate limiter when absent. */
  readonly rateLimiter?: RateLimiter<string> | undefined;
}

interface WatchRegistration {
  register(): HandlerRegistration;
  readonly resource: ResourceKind;
  readonly scope: InformerScope;
}

/**
 * A controller (controller-runtime's): watches feed keys into a de-duplicating, rate-limited queue; workers take keys
 * and call the reconciler, at most one call per key at a time. A manager runnable that needs leadership.
 */
export class Controller<R extends ResourceKind = ResourceKind> {
  readonly needLeaderElection = true;
  readonly name: string;
  private readonly queue: RateLimitingQueue<string>;
  private readonly queueMetrics: PrometheusQueueMetrics<string>;
  private readonly metrics: ControllerMetrics;
  private readonly logger: Logger;
  private readonly workers: number;
  private readonly watchRegistrations: WatchRegistration[] = [];
  private readonly eventFilters: Predicate<KubeObject>[] = [];
  private started = false;

  constructor(private readonly options: ControllerOptions<R>) {
    this.name = options.name;
    this.workers = options.maxConcurrentReconciles ?? 1;
    if (!Number.isInteger(this.workers) || this.workers < 1) {
      throw new Error(`controller ${options.name}: maxConcurrentReconciles must be a positive integer`);
    }
    const registry = options.registry ?? new Registry();
    this.logger = (options.logger ?? pino({ name: 'controller-kit' })).child({ controller: options.name });
    this.queueMetrics = new PrometheusQueueMetrics<string>(options.name, registry);
    this.queue = new RateLimitingQueue<string>({ rateLimiter: options.rateLimiter, metrics: this.queueMetrics });
    this.metrics = new ControllerMetrics(options.name, registry, this.workers);
    const forScope = options.forOptions ?? {};
    this.addWatch<ObjectOf<R>>(options.for, requestForObject, forScope.predicates ?? [], forScope);
  }

  /**
   * Also reconcile the controller owner (of the primary kind) when an object of `resource` changes — for objects this
   * controller creates and sets itself as controller owner of.
   */
  owns<O extends ResourceKind>(resource: O, options: WatchOptions<ObjectOf<O>> = {}): this {
    this.addWatch<ObjectOf<O>>(
      resource,
      requestForControllerOwner(this.options.for),
      options.predicates ?? [],
      options,
    );
    return this;
  }

  /** Also reconcile the requests `map` derives from an object of `resource` when it changes. */
  watches<O extends ResourceKind>(
    resource: O,
    map: MapFunc<ObjectOf<O>>,
    options: WatchOptions<ObjectOf<O>> = {},
  ): this {
    this.addWatch<ObjectOf<O>>(resource, map, options.predicates ?? [], options);
    return this;
  }

  /** A filter applied to the events of every watch of this controller (controller-runtime's `WithEventFilter`). */
  withEventFilter(predicate: Predicate<KubeObject>): this {
    this.assertNotStarted('withEventFilter');
    this.eventFilters.push(predicate);
    return this;
  }

  /** Queues a request directly (a generic event: a timer, an external system). */
  enqueue(request: Request): void {
    this.queue.add(objectKeyString(request));
  }

  /**
   * Registers the watches, waits for their informers to sync, then runs the workers until the signal aborts. In-flight
   * reconciles finish (their context signal is aborted) before the returned promise resolves.
   */
  async start(signal: AbortSignal): Promise<void> {
    this.assertNotStarted('start');
    this.started = true;
    const registrations = this.watchRegistrations.map((watch) => watch.register());
    try {
      const informers = this.watchRegistrations.map((watch) =>
        this.options.cache.informerFor(watch.resource, watch.scope),
      );
      const timeoutMs = this.options.cacheSyncTimeoutMs ?? this.options.cache.syncTimeoutMs;
      const timedOut = AbortSignal.timeout(timeoutMs);
      await Promise.all(informers.map((informer) => informer.whenSynced(AbortSignal.any([signal, timedOut]))));
      if (signal.aborted) return;
      const unsynced = informers.filter((informer) => !informer.hasSynced()).map((informer) => informer.resource.kind);
      if (unsynced.length > 0) {
        throw new CacheSyncTimeoutError(
          `controller ${this.options.name}: the caches did not sync within --cache-sync-timeout=${formatGoDuration(timeoutMs)} ` +
            `(${unsynced.join(', ')}): is the API server reachable, and may this identity list and watch them?`,
        );
      }
      this.logger.info({ workers: this.workers }, 'starting workers');
      const stopped = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      const workers = Array.from({ length: this.workers }, () => this.runWorker(signal));
      await stopped;
      // Workers blocked on an empty queue wake up with shutdown; busy ones finish their reconcile first.
      this.queue.shutDown();
      await Promise.all(workers);
      this.logger.info('all workers finished');
    } finally {
      for (const registration of registrations) registration.remove();
      this.queue.shutDown();
      this.queueMetrics.close();
    }
  }

  private addWatch<T extends KubeObject>(
    resource: ResourceKind,
    map: MapFunc<T>,
    predicates: readonly Predicate<T>[],
    scope: InformerScope,
  ): void {
    this.assertNotStarted('adding a watch');
    const informerScope: InformerScope = {
      namespace: scope.namespace,
      labelSelector: scope.labelSelector,
      fieldSelector: scope.fieldSelector,
    };
    this.watchRegistrations.push({
      resource,
      scope: informerScope,
      register: () => {
        const filters = [...(this.eventFilters as readonly Predicate<T>[]), ...predicates];
        const handler = mappingEventHandler<T>(map, filters, (key) => this.enqueue(key));
        return this.options.cache.addEventHandler(resource, handler as never, informerScope);
      },
    });
  }

  private assertNotStarted(what: string): void {
    if (this.started) throw new Error(`controller ${this.name}: ${what} after start`);
  }

  private async runWorker(signal: AbortSignal): Promise<void> {
    for (;;) {
      const next = await this.queue.get();
      if (next.shutdown) return;
      try {
        // After shutdown the queue still hands out what it holds; a stopping controller drops it instead.
        if (!signal.aborted) await this.reconcileKey(next.item, signal);
      } finally {
        this.queue.done(next.item);
      }
    }
  }

  private async reconcileKey(key: string, signal: AbortSignal): Promise<void> {
    const context = new LazyReconcileContext(this.logger, parseObjectKey(key), signal);
    const startedAt = performance.now();
    this.metrics.workerStarted();
    let outcome: ReconcileOutcome;
    try {
      const result: Result = await this.options.reconciler.reconcile(context.request, context);
      outcome = this.schedule(key, result);
    } catch (error) {
      if (!signal.aborted) this.queue.addRateLimited(key);
      // A 409 from a stale resourceVersion means the reconciler acted on a cache a write behind; the event for the
      // newer version is on its way and the next attempt reads it. controller-runtime logs it as a Reconciler error,
      // but CAPI providers swallow it and requeue: at error level it drowns the real failures under load. It is a
      // rate-limited requeue, counted as `requeue` plus in `controller_kit_reconcile_conflicts_total`.
      if (isStaleResourceVersionConflict(error)) {
        outcome = 'conflict';
        context.logger.debug({ err: error, retries: this.queue.numRequeues(key) }, 'Reconcile conflict, requeueing');
      } else if (signal.aborted) {
        // The controller is stopping and aborted the reconcile's requests: expected, and nobody needs to act.
        outcome = 'error';
        context.logger.debug({ err: error }, 'Reconcile aborted: the controller is stopping');
      } else if (isNotFound(error)) {
        // An object the reconcile read or wrote went away meanwhile (typically one being deleted): the retry sees
        // its absence in the cache. A failure, counted and retried, but nothing a person has to act on.
        outcome = 'error';
        context.logger.info({ err: error, retries: this.queue.numRequeues(key) }, 'Reconcile target gone, requeueing');
      } else {
        outcome = 'error';
        context.logger.error({ err: error, retries: this.queue.numRequeues(key) }, 'Reconciler error');
      }
    } finally {
      this.metrics.workerFinished();
    }
    this.metrics.observe(outcome, (performance.now() - startedAt) / 1000);
  }

  /** controller-runtime's order: requeueAfter wins over requeue; both reset or use the failure backoff. */
  private schedule(key: string, result: Result): ReconcileOutcome {
    const after = result.requeueAfterMs ?? 0;
    if (after > 0) {
      this.queue.forget(key);
      this.queue.addAfter(key, after);
      return 'requeue_after';
    }
    if (result.requeue) {
      this.queue.addRateLimited(key);
      return 'requeue';
    }
    this.queue.forget(key);
    return 'success';
  }
}

/** Creates a controller; chain `owns`/`watches`/`withEventFilter`, then hand it to the manager (or call `start`). */
export function newController<R extends ResourceKind>(options: ControllerOptions<R>): Controller<R> {
  return new Controller(options);
}

/**
 * A reconcile's context whose ID and logger are made when first read: most reconciles log nothing. A start over
 * 50,000 claims reconciles each once, and a UUID string (built from ~20 concatenations) plus a context object with
 * its own getter closures per reconcile left ~70 MiB more heap for V8's next full GC, which came 100 s later.
 */
class LazyReconcileContext implements ReconcileContext {
  private id: string | undefined;
  private child: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    readonly request: Request,
    readonly signal: AbortSignal,
  ) {}

  get reconcileID(): string {
    this.id ??= randomUUID();
    return this.id;
  }

  get logger(): Logger {
    this.child ??= this.parent.child({
      namespace: this.request.namespace,
      name: this.request.name,
      reconcileID: this.reconcileID,
    });
    return this.child;
  }
}
