import { type Clock, realClock } from './clock.js';
import { DelayHeap } from './delay-heap.js';
import { noopQueueMetrics, type QueueMetrics } from './queue-metrics.js';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.js';
import { WorkQueue } from './work-queue.js';

export interface RateLimitingQueueOptions<T> {
  readonly rateLimiter?: RateLimiter<T>;
  readonly metrics?: QueueMetrics<T>;
  readonly clock?: Clock;
}

/**
 * The controller's queue: a de-duplicating `WorkQueue` plus delayed adds (`addAfter`, client-go's delaying queue) and
 * rate-limited re-adds (`addRateLimited`, per-item backoff and an overall bucket by default).
 */
export class RateLimitingQueue<T = string> extends WorkQueue<T> {
  private readonly rateLimiter: RateLimiter<T>;
  private readonly clock: Clock;
  private readonly waiting = new DelayHeap<T>();
  private cancelTimer: (() => void) | undefined;

  constructor(options: RateLimitingQueueOptions<T> = {}) {
    super(options.metrics ?? noopQueueMetrics);
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter<T>();
    this.clock = options.clock ?? realClock;
  }

  /** Adds the item once `delayMs` has passed; an item already waiting keeps the earlier time. */
  addAfter(item: T, delayMs: number): void {
    if (this.isShuttingDown()) return;
    if (!(delayMs > 0)) {
      this.add(item);
      return;
    }
    if (this.waiting.schedule(item, this.clock.now() + delayMs)) this.armTimer();
  }

  /** Re-adds the item after the rate limiter's delay, counting a retry. */
  addRateLimited(item: T): void {
    if (this.isShuttingDown()) return;
    this.metrics.retried(item);
    this.addAfter(item, this.rateLimiter.when(item));
  }

  /** Clears the item's failure history (after a successful reconcile). */
  forget(item: T): void {
    this.rateLimiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.rateLimiter.numRequeues(item);
  }

  /** Items waiting for their delay to pass. */
  waitingCount(): number {
    return this.waiting.size;
  }

  protected override onShutDown(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.waiting.clear();
  }

  private armTimer(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    const readyAt = this.waiting.peekTime();
    if (readyAt === undefined) return;
    this.cancelTimer = this.clock.schedule(() => this.releaseReady(), readyAt - this.clock.now());
  }

  private releaseReady(): void {
    this.cancelTimer = undefined;
    for (const item of this.waiting.popReady(this.clock.now())) this.add(item);
    this.armTimer();
  }
}
