import type { KubeConfig } from '@kubernetes/client-node';
import { type Clock, realClock } from '../queue/clock.js';
import { BucketRateLimiter } from '../queue/rate-limiter.js';

/** `--kube-api-qps` / `--kube-api-burst` (client-go's `rest.Config.QPS` / `Burst`). */
export interface RequestRateLimit {
  readonly qps: number;
  readonly burst: number;
}

/**
 * client-go's client-side throttle: a token bucket every request waits on before it is sent. One bucket per
 * KubeConfig object, shared by everything built from it (client, cache lists, watches, leader election), so the
 * limit is the process's, as with one `rest.Config`.
 */
export class RequestThrottle {
  readonly #bucket: BucketRateLimiter<string>;
  readonly #clock: Clock;
  /** Requests that have waited for a token (for tests and diagnostics). */
  throttled = 0;

  constructor(
    readonly limit: RequestRateLimit,
    clock: Clock = realClock,
  ) {
    if (!(limit.qps > 0) || !Number.isFinite(limit.qps))
      throw new Error(`kube-api-qps ${limit.qps} must be a positive number`);
    if (!Number.isInteger(limit.burst) || limit.burst < 1)
      throw new Error(`kube-api-burst ${limit.burst} must be a positive integer`);
    this.#bucket = new BucketRateLimiter(limit.qps, limit.burst, clock);
    this.#clock = clock;
  }

  /** Takes a token, waiting for it when the bucket is empty; resolves early (without sending) if `signal` aborts. */
  wait(signal?: AbortSignal): Promise<void> {
    const delayMs = this.#bucket.when('');
    if (delayMs <= 0) return Promise.resolve();
    this.throttled += 1;
    return new Promise((resolve) => {
      const done = (): void => {
        cancel();
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const cancel = this.#clock.schedule(done, delayMs);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}

const throttles = new WeakMap<KubeConfig, RequestThrottle>();

/** Rate-limits every request made with `kubeConfig` from now on (replacing an earlier limit). */
export function setRequestRateLimit(kubeConfig: KubeConfig, limit: RequestRateLimit, clock?: Clock): RequestThrottle {
  const throttle = new RequestThrottle(limit, clock);
  throttles.set(kubeConfig, throttle);
  return throttle;
}

/** The throttle set for `kubeConfig`, if any. */
export function requestThrottleFor(kubeConfig: KubeConfig): RequestThrottle | undefined {
  return throttles.get(kubeConfig);
}
