import { Fifo } from './fifo.js';
import { noopQueueMetrics, type QueueMetrics } from './queue-metrics.js';

export type QueueGetResult<T> = { readonly shutdown: false; readonly item: T } | { readonly shutdown: true };

/**
 * A de-duplicating work queue with client-go's semantics (`workqueue.Typed`):
 * - `dirty` holds items that need processing; adding an item already dirty is a no-op, so a burst of events for one
 *   object collapses into one reconcile.
 * - `processing` holds items a worker has taken. An item added while processing is only marked dirty and goes back
 *   into the queue on `done`, so one item is never handed to two workers at once, yet no event is lost.
 * - Shut down: `add` is ignored, items already queued are still handed out, then `get` reports shutdown.
 */
export class WorkQueue<T = string> {
  private readonly queue = new Fifo<T>();
  private readonly dirty = new Set<T>();
  private readonly processing = new Set<T>();
  private readonly waiters: Array<(result: QueueGetResult<T>) => void> = [];
  private readonly drainWaiters: Array<() => void> = [];
  private shuttingDown = false;

  constructor(protected readonly metrics: QueueMetrics<T> = noopQueueMetrics) {}

  add(item: T): void {
    if (this.shuttingDown || this.dirty.has(item)) return;
    this.metrics.added(item);
    this.dirty.add(item);
    if (this.processing.has(item)) return;
    this.queue.push(item);
    this.dispatch();
  }

  /** Resolves with the next item, waiting while the queue is empty; `{shutdown: true}` once shut down and empty. */
  get(): Promise<QueueGetResult<T>> {
    const item = this.take();
    if (item !== undefined) return Promise.resolve({ shutdown: false, item: item.value });
    if (this.shuttingDown) return Promise.resolve({ shutdown: true });
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks the item finished; if it was added again meanwhile it is queued again now. */
  done(item: T): void {
    if (!this.processing.delete(item)) return;
    this.metrics.finished(item);
    if (this.dirty.has(item)) {
      this.queue.push(item);
      this.dispatch();
    } else if (this.processing.size === 0) {
      for (const resolve of this.drainWaiters.splice(0)) resolve();
    }
  }

  /** Items waiting to be taken. */
  len(): number {
    return this.queue.length;
  }

  /** Items taken by a worker and not yet `done`. */
  processingCount(): number {
    return this.processing.size;
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Stops accepting items; waiting `get` calls return shutdown once the queue is empty. */
  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    this.onShutDown();
    if (this.queue.length === 0) {
      for (const resolve of this.waiters.splice(0)) resolve({ shutdown: true });
    }
  }

  /** Shuts down and resolves once every item taken so far is `done` (client-go's `ShutDownWithDrain`). */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Hook for subclasses that hold items outside the queue (delayed adds). */
  protected onShutDown(): void {}

  private take(): { value: T } | undefined {
    if (this.queue.length === 0) return undefined;
    const item = this.queue.shift() as T;
    this.processing.add(item);
    this.dirty.delete(item);
    this.metrics.taken(item);
    return { value: item };
  }

  /** Hands queued items straight to waiting workers, so a synchronous `get` never sees an item twice. */
  private dispatch(): void {
    while (this.waiters.length > 0) {
      const item = this.take();
      if (item === undefined) return;
      const resolve = this.waiters.shift();
      resolve?.({ shutdown: false, item: item.value });
    }
    if (this.shuttingDown && this.queue.length === 0) {
      for (const resolve of this.waiters.splice(0)) resolve({ shutdown: true });
    }
  }
}
