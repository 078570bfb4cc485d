import type { KubeConfig } from '@kubernetes/client-node';
import { type Logger, pino } from 'pino';
import type { z } from 'zod';
import { isNotFound } from '../client/errors.js';
import { decodeObject, type ObjectOf, resourceSchema } from '../client/object-schema.js';
import { type ObjectKey, objectKeyString, objectPath, type ResourceKind } from '../client/resource.js';
import { KubeTransport } from '../client/transport.js';
import { compactDecoded, compactObject } from './compact.js';
import { type HandlerRegistration, type ResourceEventHandler, SharedInformer } from './informer.js';
import { formatLabelSelector, type LabelSelector } from './label-selector.js';
import type { KubeObject } from './object.js';
import type { ReflectorOptions } from './reflector.js';
import { type Indexers, NAMESPACE_INDEX } from './store.js';
import type { Transform } from './transform.js';
import { WatchConnection } from './watch-connection.js';

export interface CacheOptions {
  readonly kubeConfig: KubeConfig;
  readonly logger?: Logger | undefined;
  /** Transport for list and direct reads; one is made from the kubeconfig when absent. */
  readonly transport?: KubeTransport | undefined;
  /** Reflector tuning shared by all informers (tests shorten timeouts and backoff). */
  readonly reflector?: ReflectorOptions | undefined;
  /**
   * Re-announce every cached object as an update this often (±10 %), like controller-runtime's `SyncPeriod`
   * (default 10 h). 0 turns it off.
   */
  readonly resyncPeriodMs?: number | undefined;
  /**
   * How long a controller waits for its informers to sync before it fails (controller-runtime's `CacheSyncTimeout`,
   * default 2 min); controllers built on this cache use it unless they set their own.
   */
  readonly syncTimeoutMs?: number | undefined;
}

/**
 * The default transform applied as an object is decoded: a value the schema keeps as it is (validated, not rebuilt)
 * is compacted in place, being fresh from JSON.parse and the reflector's alone; what zod had to rebuild is copied.
 */
export function decodeCompacted<T extends KubeObject>(schema: z.ZodType<T>, raw: unknown): T {
  const decoded = decodeObject(schema, raw);
  if (!decoded.success) throw decoded.error;
  return decoded.data === raw ? compactDecoded(decoded.data) : compactObject(decoded.data);
}

/** Cached objects without managedFields and kubectl's last-applied annotation, their repeated strings shared. */
function defaultTransform<T extends KubeObject>(object: T): T {
  return compactObject(object);
}

/** controller-runtime's default `CacheSyncTimeout`. */
export const DEFAULT_CACHE_SYNC_TIMEOUT_MS = 2 * 60_000;

/** controller-runtime's default `SyncPeriod`. */
export const DEFAULT_RESYNC_PERIOD_MS = 10 * 60 * 60 * 1000;

/** What selects one shared informer: the resource, an optional namespace and an optional server-side selector. */
export interface InformerScope {
  /** Watch one namespace only; all namespaces when absent. */
  readonly namespace?: string | undefined;
  readonly labelSelector?: LabelSelector | undefined;
  readonly fieldSelector?: string | undefined;
}

export interface InformerOptions<T extends KubeObject> extends InformerScope {
  /** Extra indexes; merged into the informer's store whoever asked first. */
  readonly indexers?: Indexers<T> | undefined;
  /**
   * Applied to every object before it is stored; the default (`compactObject`) drops `metadata.managedFields` and
   * kubectl's last-applied annotation and shares repeated strings; with it, a list leaves managedFields out of each
   * item before parsing. A transform of one's own sees every object whole. The transform is fixed by whoever creates
   * the informer first; later callers asking for a different one get an error.
   */
  readonly transform?: Transform<T> | undefined;
}

export interface CacheListOptions extends InformerScope {
  /** Only objects under this value of this index (e.g. `{name: 'byOwnerUID', value: uid}`). */
  readonly index?: { readonly name: string; readonly value: string } | undefined;
  /** With an all-namespaces informer, only objects in this namespace. */
  readonly inNamespace?: string | undefined;
}

/**
 * The informer factory and read side of the manager (controller-runtime's `cache.Cache`): one shared informer per
 * (resource, namespace, selector), started with the cache or immediately if the cache already runs, read from memory.
 * It is a manager runnable that runs on every replica, leader or not, so followers are warm when they take over.
 */
export class Cache {
  readonly needLeaderElection = false;
  private readonly informers = new Map<string, SharedInformer<KubeObject>>();
  private readonly transforms = new Map<string, Transform<KubeObject>>();
  private readonly logger: Logger;
  private readonly transport: KubeTransport;
  private readonly watchConnection: WatchConnection;
  private readonly running = new Set<Promise<void>>();
  private signal: AbortSignal | undefined;

  /** See `CacheOptions.syncTimeoutMs`. */
  readonly syncTimeoutMs: number;

  constructor(private readonly options: CacheOptions) {
    this.syncTimeoutMs = options.syncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS;
    this.logger = options.logger ?? pino({ name: 'controller-kit' });
    this.transport = options.transport ?? new KubeTransport(options.kubeConfig);
    this.watchConnection = new WatchConnection(options.kubeConfig);
  }

  /** The shared informer for a resource and scope, created (and started, if the cache runs) on first use. */
  informerFor<R extends ResourceKind>(
    resource: R,
    options: InformerOptions<ObjectOf<R>> = {},
  ): SharedInformer<ObjectOf<R>> {
    const labelSelector = options.labelSelector ? formatLabelSelector(options.labelSelector) : undefined;
    const namespace = resource.namespaced ? options.namespace : undefined;
    const id = [resource.apiVersion, resource.plural, namespace ?? '', labelSelector ?? '', options.fieldSelector ?? '']
      .map((part) => encodeURIComponent(part))
      .join('|');
    const transform = (options.transform ?? defaultTransform) as unknown as Transform<KubeObject>;
    const existing = this.informers.get(id) as SharedInformer<ObjectOf<R>> | undefined;
    if (existing) {
      if (options.transform && this.transforms.get(id) !== transform) {
        throw new Error(`the informer for ${resource.plural} (${id}) already exists with a different transform`);
      }
      if (options.indexers) existing.addIndexers(options.indexers);
      return existing;
    }
    const schema = resourceSchema(resource);
    const parse = (raw: unknown): ObjectOf<R> => schema.parse(raw);
    const informer = new SharedInformer<ObjectOf<R>>({
      decode: options.transform === undefined ? (raw) => decodeCompacted(schema, raw) : undefined,
      resource,
      namespace,
      labelSelector,
      fieldSelector: options.fieldSelector,
      parse,
      transform: transform as unknown as Transform<ObjectOf<R>>,
      transformDropsManagedFields: options.transform === undefined,
      indexers: options.indexers,
      transport: this.transport,
      watchConnection: this.watchConnection,
      logger: this.logger.child({ resource: resource.plural, namespace, labelSelector }),
      reflectorOptions: this.options.reflector,
      resyncPeriodMs: this.options.resyncPeriodMs ?? DEFAULT_RESYNC_PERIOD_MS,
    });
    this.informers.set(id, informer as unknown as SharedInformer<KubeObject>);
    this.transforms.set(id, transform);
    if (this.signal && !this.signal.aborted) this.runInformer(informer as unknown as SharedInformer<KubeObject>);
    return informer;
  }

  /** Registers handlers on the shared informer for a resource (creating it as needed). */
  addEventHandler<R extends ResourceKind>(
    resource: R,
    handler: ResourceEventHandler<ObjectOf<R>>,
    scope: InformerScope = {},
  ): HandlerRegistration {
    return this.informerFor(resource, scope).addEventHandler(handler);
  }

  /**
   * Reads one object from the cache, waiting for its informer to sync first (controller-runtime's `Get`); undefined
   * when the object does not exist. Rejects if the cache is not started or stops before the informer synced.
   */
  async get<R extends ResourceKind>(
    resource: R,
    key: ObjectKey,
    scope: InformerScope = {},
  ): Promise<ObjectOf<R> | undefined> {
    const informer = await this.syncedInformer(resource, scope);
    return informer.store.get(objectKeyString(key));
  }

  /** Lists objects from the cache, waiting for the informer to sync first. */
  async list<R extends ResourceKind>(resource: R, options: CacheListOptions = {}): Promise<ObjectOf<R>[]> {
    const informer = await this.syncedInformer(resource, options);
    const { index, inNamespace } = options;
    let objects = index ? informer.store.byIndex(index.name, index.value) : undefined;
    if (inNamespace !== undefined) {
      objects = objects
        ? objects.filter((object) => object.metadata.namespace === inNamespace)
        : informer.store.byIndex(NAMESPACE_INDEX, inNamespace);
    }
    return objects ?? informer.store.list();
  }

  /**
   * Reads one object from the API server, bypassing the cache, for the moments freshness matters more than load
   * (e.g. right before an irreversible decision). Undefined on 404; parsed with the resource's schema if it has one.
   */
  async liveGet<R extends ResourceKind>(
    resource: R,
    key: ObjectKey,
    signal?: AbortSignal,
  ): Promise<ObjectOf<R> | undefined> {
    let body: unknown;
    try {
      body = await this.transport.request({
        method: 'GET',
        path: objectPath(resource, key),
        signal,
        target: { verb: 'get', resource: resource.plural, namespace: key.namespace, name: key.name },
      });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    try {
      const decoded = decodeObject(resourceSchema(resource), body);
      if (!decoded.success) throw decoded.error;
      return decoded.data;
    } catch (error) {
      const name = `${key.namespace ? `${key.namespace}/` : ''}${key.name}`;
      throw new Error(`${resource.kind} ${name} read from the API server does not match its schema: ${String(error)}`, {
        cause: error,
      });
    }
  }

  /** Runs every informer (present and future) until the signal aborts; resolves once they all stopped. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.signal) throw new Error('cache already started');
    this.signal = signal;
    for (const informer of this.informers.values()) this.runInformer(informer);
    if (!signal.aborted) {
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    }
    while (this.running.size > 0) await Promise.all([...this.running]);
    this.watchConnection.close();
    if (!this.options.transport) this.transport.close();
  }

  /** Resolves true once every informer created so far has synced; false if the signal aborts first. */
  async waitForCacheSync(signal: AbortSignal): Promise<boolean> {
    for (;;) {
      const pending = [...this.informers.values()].filter((informer) => !informer.hasSynced());
      if (pending.length === 0) return true;
      await Promise.all(pending.map((informer) => informer.whenSynced(signal)));
      if (signal.aborted) return false;
    }
  }

  hasSynced(): boolean {
    return [...this.informers.values()].every((informer) => informer.hasSynced());
  }

  /** Informers created so far (for readiness reporting and tests). */
  listInformers(): SharedInformer<KubeObject>[] {
    return [...this.informers.values()];
  }

  private async syncedInformer<R extends ResourceKind>(
    resource: R,
    scope: InformerScope,
  ): Promise<SharedInformer<ObjectOf<R>>> {
    const informer = this.informerFor(resource, scope);
    if (informer.hasSynced()) return informer;
    const signal = this.signal;
    if (!signal) throw new Error(`cache not started: cannot read ${resource.plural} before the cache runs`);
    await informer.whenSynced(signal);
    if (!informer.hasSynced()) throw new Error(`cache stopped before ${resource.plural} synced`);
    return informer;
  }

  private runInformer(informer: SharedInformer<KubeObject>): void {
    const signal = this.signal as AbortSignal;
    const run = informer.run(signal).catch((error: unknown) => {
      // The reflector retries every failure itself; reaching here is a bug, so it is logged loudly, not swallowed.
      this.logger.error({ err: error, resource: informer.resource.plural }, 'informer stopped unexpectedly');
    });
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }
}
