import { type Clock, realClock } from './clock.js';

/**
 * Decides how long an item waits before it is retried (client-go's `workqueue.TypedRateLimiter`). `when` records a
 * failure and returns the delay; `forget` clears the item's history once it succeeded.
 */
export interface RateLimiter<T = string> {
  when(item: T): number;
  forget(item: T): void;
  numRequeues(item: T): number;
}

/** `base * 2^failures`, capped at `max` (client-go's `ItemExponentialFailureRateLimiter`). */
export class ItemExponentialFailureRateLimiter<T = string> implements RateLimiter<T> {
  private readonly failures = new Map<T, number>();

  constructor(
    private readonly baseDelayMs: number,
    private readonly maxDelayMs: number,
  ) {
    if (!(baseDelayMs > 0) || !(maxDelayMs >= baseDelayMs)) {
      throw new Error(`exponential rate limiter needs 0 < base (${baseDelayMs}) <= max (${maxDelayMs})`);
    }
  }

  when(item: T): number {
    const exponent = this.failures.get(item) ?? 0;
    this.failures.set(item, exponent + 1);
    // 2^exponent overflows to Infinity long after it passed any sane max, so the cap keeps this finite.
    return Math.min(this.baseDelayMs * 2 ** exponent, this.maxDelayMs);
  }

  forget(item: T): void {
    this.failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}

/**
 * A token bucket shared by all items (client-go's `BucketRateLimiter` over `rate.Limiter.Reserve()`): `burst` tokens,
 * refilled at `qps`. Every call takes a token, borrowing against the future when the bucket is empty, so the n-th
 * call past the burst waits n/qps seconds. It never forgets: it limits the overall retry rate, not one item.
 */
/** Token counts within this of zero are zero: smaller than any delay a timer can wait. */
const TOKEN_EPSILON = 1e-9;

export class BucketRateLimiter<T = string> implements RateLimiter<T> {
  private tokens: number;
  private lastRefill: number;

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly clock: Clock = realClock,
  ) {
    if (!(qps > 0) || !(burst >= 1)) throw new Error(`bucket rate limiter needs qps > 0 and burst >= 1`);
    this.tokens = burst;
    this.lastRefill = clock.now();
  }

  when(_item: T): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.lastRefill) / 1000) * this.qps);
    this.lastRefill = now;
    this.tokens -= 1;
    // Refills are fractions of qps, so a bucket that is exactly paid up can sit a rounding error below zero.
    return this.tokens >= -TOKEN_EPSILON ? 0 : (-this.tokens / this.qps) * 1000;
  }

  forget(_item: T): void {}

  numRequeues(_item: T): number {
    return 0;
  }
}

/** The longest delay of several limiters (client-go's `MaxOfRateLimiter`). */
export class MaxOfRateLimiter<T = string> implements RateLimiter<T> {
  private readonly limiters: readonly RateLimiter<T>[];

  constructor(...limiters: RateLimiter<T>[]) {
    if (limiters.length === 0) throw new Error('MaxOfRateLimiter needs at least one limiter');
    this.limiters = limiters;
  }

  when(item: T): number {
    // Every limiter must record the failure, so no short-circuit.
    return Math.max(...this.limiters.map((limiter) => limiter.when(item)));
  }

  forget(item: T): void {
    for (const limiter of this.limiters) limiter.forget(item);
  }

  numRequeues(item: T): number {
    return Math.max(...this.limiters.map((limiter) => limiter.numRequeues(item)));
  }
}

export interface DefaultRateLimiterOptions {
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  readonly qps?: number;
  readonly burst?: number;
  readonly clock?: Clock;
}

/**
 * client-go's `DefaultTypedControllerRateLimiter`: per-item exponential backoff 5 ms → 1000 s, and an overall token
 * bucket of 10 qps with a burst of 100 so a mass failure cannot hammer the API server.
 */
export function defaultControllerRateLimiter<T = string>(options: DefaultRateLimiterOptions = {}): RateLimiter<T> {
  return new MaxOfRateLimiter<T>(
    new ItemExponentialFailureRateLimiter<T>(options.baseDelayMs ?? 5, options.maxDelayMs ?? 1_000_000),
    new BucketRateLimiter<T>(options.qps ?? 10, options.burst ?? 100, options.clock ?? realClock),
  );
}
