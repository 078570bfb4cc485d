import type { Logger } from 'pino';
import type { ResourceKind } from '../client/resource.js';
import type { KubeTransport } from '../client/transport.js';
import { type KubeObject, keyOf } from './object.js';
import { Reflector, type ReflectorOptions, type ReflectorSink } from './reflector.js';
import { type Indexers, indexByNamespace, indexByOwnerUID, NAMESPACE_INDEX, OWNER_UID_INDEX, Store } from './store.js';
import type { Transform } from './transform.js';
import type { WatchConnection } from './watch-connection.js';

/** Callbacks for changes the informer applies to its store. They run synchronously and must not block. */
export interface ResourceEventHandler<T extends KubeObject> {
  /** `initialList` is true for objects delivered by the first list or replayed to a late-registered handler. */
  onAdd?(object: T, initialList: boolean): void;
  onUpdate?(oldObject: T, newObject: T): void;
  /** `finalStateUnknown` is true when a relist showed the object gone: `object` is the last state the cache saw. */
  onDelete?(object: T, finalStateUnknown: boolean): void;
}

export interface HandlerRegistration {
  remove(): void;
}

export interface InformerConfig<T extends KubeObject> {
  readonly resource: ResourceKind;
  readonly namespace?: string | undefined;
  readonly labelSelector?: string | undefined;
  readonly fieldSelector?: string | undefined;
  readonly parse: (raw: unknown) => T;
  readonly transform: Transform<T>;
  /**
   * From a JSON value off the wire, owned by the callee, to the object stored: `transform(parse(raw))` when absent.
   * The cache's default decodes and compacts in one pass.
   */
  readonly decode?: ((raw: unknown) => T) | undefined;
  /** The transform drops `metadata.managedFields`: lists may leave them out before parsing. */
  readonly transformDropsManagedFields?: boolean | undefined;
  readonly indexers?: Indexers<T> | undefined;
  readonly transport: KubeTransport;
  readonly watchConnection: WatchConnection;
  readonly logger: Logger;
  readonly reflectorOptions?: ReflectorOptions | undefined;
  /**
   * Every period (±10 % jitter) each stored object is re-announced as an update with identical old and new object,
   * so level-triggered controllers revisit everything even if an event was somehow missed (controller-runtime's
   * `SyncPeriod`, 10 h by default there). Undefined or 0: off.
   */
  readonly resyncPeriodMs?: number | undefined;
}

/**
 * One reflector feeding one indexed store, fanning changes out to any number of handlers (client-go's
 * `SharedIndexInformer`). Updates that carry the same resourceVersion as the stored object (a relist of unchanged
 * objects) are not reported: handlers see real changes only.
 */
export class SharedInformer<T extends KubeObject> implements ReflectorSink<T> {
  readonly store: Store<T>;
  private readonly handlers = new Set<ResourceEventHandler<T>>();
  private readonly reflector: Reflector<T>;
  private synced = false;
  private readonly syncWaiters: Array<() => void> = [];
  private running: Promise<void> | undefined;

  constructor(private readonly config: InformerConfig<T>) {
    this.store = new Store<T>({
      [NAMESPACE_INDEX]: indexByNamespace,
      [OWNER_UID_INDEX]: indexByOwnerUID,
      ...config.indexers,
    });
    this.reflector = new Reflector<T>({
      resource: config.resource,
      namespace: config.namespace,
      labelSelector: config.labelSelector,
      fieldSelector: config.fieldSelector,
      // Each object is transformed as soon as it is parsed: a list of many pages then holds only transformed objects
      // until it is applied, never every page's full objects at once.
      parse: config.decode ?? ((raw) => config.transform(config.parse(raw))),
      omitManagedFields: config.transformDropsManagedFields,
      transport: config.transport,
      watchConnection: config.watchConnection,
      sink: {
        replace: (objects) => this.applyReplace(objects),
        upsert: (object) => this.applyUpsert(object, false),
        remove: (object) => this.applyRemove(object),
      },
      logger: config.logger,
      options: config.reflectorOptions,
    });
  }

  get resource(): ResourceKind {
    return this.config.resource;
  }

  /** True once the first list has been applied to the store and announced to the handlers. */
  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves when synced, or when the signal aborts (check `hasSynced()` after). */
  whenSynced(signal: AbortSignal): Promise<void> {
    if (this.synced || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.syncWaiters.push(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  get lastSyncResourceVersion(): string | undefined {
    return this.reflector.lastSyncResourceVersion;
  }

  /**
   * Registers a handler. Objects already in the store are replayed to it as adds first, so a handler registered after
   * the informer started sees the same world as one registered before.
   */
  addEventHandler(handler: ResourceEventHandler<T>): HandlerRegistration {
    this.handlers.add(handler);
    for (const object of this.store.list()) this.call(handler, 'onAdd', () => handler.onAdd?.(object, true));
    return { remove: () => this.handlers.delete(handler) };
  }

  addIndexers(indexers: Indexers<T>): void {
    this.store.addIndexers(indexers);
  }

  /** Runs the reflector until the signal aborts. Calling it again while running returns the same promise. */
  run(signal: AbortSignal): Promise<void> {
    if (!this.running) {
      const stopResync = this.startResync(signal);
      this.running = this.reflector.run(signal).finally(() => {
        stopResync();
        this.running = undefined;
      });
    }
    return this.running;
  }

  replace(objects: readonly T[], _resourceVersion: string): void {
    this.applyReplace(objects.map((object) => this.config.transform(object)));
  }

  upsert(raw: T): void {
    this.applyUpsert(this.config.transform(raw), false);
  }

  remove(raw: T): void {
    this.applyRemove(this.config.transform(raw));
  }

  /** Applies a (re)list of transformed objects: objects missing from it were deleted. */
  private applyReplace(objects: readonly T[]): void {
    const initialList = !this.synced;
    const seen = new Set<string>();
    for (const object of objects) {
      const key = keyOf(object);
      seen.add(key);
      this.applyUpsert(object, initialList);
    }
    for (const key of this.store.keys()) {
      if (seen.has(key)) continue;
      const removed = this.store.remove(key);
      if (removed) this.notifyDelete(removed, true);
    }
    if (!this.synced) {
      this.synced = true;
      for (const resolve of this.syncWaiters.splice(0)) resolve();
    }
  }

  private applyRemove(object: T): void {
    const removed = this.store.remove(keyOf(object));
    // Report the final state the server sent, not the cached one.
    if (removed) this.notifyDelete(object, false);
  }

  private startResync(signal: AbortSignal): () => void {
    const period = this.config.resyncPeriodMs ?? 0;
    if (!(period > 0)) return () => {};
    let timer: NodeJS.Timeout | undefined;
    const schedule = (): void => {
      timer = setTimeout(tick, period * (0.9 + Math.random() * 0.2));
      // A resync alone must not keep the process alive.
      timer.unref();
    };
    const tick = (): void => {
      if (signal.aborted) return;
      if (this.synced) {
        for (const object of this.store.list()) {
          for (const handler of this.handlers) this.call(handler, 'onUpdate', () => handler.onUpdate?.(object, object));
        }
      }
      schedule();
    };
    schedule();
    return () => clearTimeout(timer);
  }

  private applyUpsert(object: T, initialList: boolean): void {
    const previous = this.store.upsert(object);
    if (!previous) {
      for (const handler of this.handlers) this.call(handler, 'onAdd', () => handler.onAdd?.(object, initialList));
      return;
    }
    const version = object.metadata.resourceVersion;
    if (version !== undefined && version === previous.metadata.resourceVersion) return;
    for (const handler of this.handlers) {
      this.call(handler, 'onUpdate', () => handler.onUpdate?.(previous, object));
    }
  }

  private notifyDelete(object: T, finalStateUnknown: boolean): void {
    for (const handler of this.handlers) {
      this.call(handler, 'onDelete', () => handler.onDelete?.(object, finalStateUnknown));
    }
  }

  /** A throwing handler is logged; it must not break the reflector or starve the other handlers. */
  private call(_handler: ResourceEventHandler<T>, what: string, invoke: () => void): void {
    try {
      invoke();
    } catch (error) {
      this.config.logger.error({ err: error }, `${this.config.resource.kind} event handler ${what} threw`);
    }
  }
}
