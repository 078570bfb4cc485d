import fc from 'fast-check';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { PrometheusQueueMetrics } from '../src/queue/prometheus-queue-metrics.js';
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
} from '../src/queue/rate-limiter.js';
import { RateLimitingQueue } from '../src/queue/rate-limiting-queue.js';
import { ManualClock } from './fixtures/core-manual-clock.js';

describe('rate limiters', () => {
  it('per-item exponential: base·2^n capped at max, per item, reset by forget', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 60 }),
        (base, maxFactor, failures) => {
          const max = base * maxFactor;
          const limiter = new ItemExponentialFailureRateLimiter<string>(base, max);
          for (let n = 0; n < failures; n += 1) {
            expect(limiter.when('a')).toBe(Math.min(base * 2 ** n, max));
          }
          expect(limiter.numRequeues('a')).toBe(failures);
          expect(limiter.when('b')).toBe(base);
          limiter.forget('a');
          expect(limiter.numRequeues('a')).toBe(0);
          expect(limiter.when('a')).toBe(base);
        },
      ),
    );
  });

  it('client-go defaults: 5 ms doubling, capped at 1000 s', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>(5, 1_000_000);
    const delays = Array.from({ length: 30 }, () => limiter.when('k'));
    expect(delays.slice(0, 4)).toEqual([5, 10, 20, 40]);
    expect(delays.at(-1)).toBe(1_000_000);
  });

  it('token bucket: the burst is free, then each call waits one more 1/qps', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 20 }), (qps, burst) => {
        const clock = new ManualClock();
        const limiter = new BucketRateLimiter<string>(qps, burst, clock);
        for (let i = 0; i < burst; i += 1) expect(limiter.when(`k${i}`)).toBe(0);
        for (let extra = 1; extra <= 5; extra += 1) {
          expect(limiter.when('x')).toBeCloseTo((extra / qps) * 1000, 6);
        }
        // Time refills the bucket: after (5 + burst) / qps seconds the debt is paid and the burst is back.
        clock.advance(((5 + burst) / qps) * 1000);
        expect(limiter.when('y')).toBe(0);
      }),
    );
  });

  it('max-of takes the longest delay and records the failure in every limiter', () => {
    const clock = new ManualClock();
    const limiter = defaultControllerRateLimiter<string>({ clock, qps: 10, burst: 2 });
    expect(limiter.when('a')).toBe(5);
    expect(limiter.when('a')).toBe(10);
    // The bucket is empty now: 1/qps = 100 ms beats the item's 20 ms.
    expect(limiter.when('a')).toBeCloseTo(100, 6);
    expect(limiter.numRequeues('a')).toBe(3);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
    expect(() => new MaxOfRateLimiter<string>()).toThrow(/at least one/);
  });
});

describe('RateLimitingQueue', () => {
  it('addAfter releases an item only once its delay has passed, earliest time winning', async () => {
    const clock = new ManualClock();
    const queue = new RateLimitingQueue<string>({ clock });
    queue.addAfter('a', 100);
    queue.addAfter('b', 50);
    queue.addAfter('a', 30); // earlier: wins
    queue.addAfter('b', 500); // later: ignored
    expect(queue.len()).toBe(0);
    expect(queue.waitingCount()).toBe(2);
    clock.advance(29);
    expect(queue.len()).toBe(0);
    clock.advance(1);
    expect(queue.len()).toBe(1);
    expect(await queue.get()).toEqual({ shutdown: false, item: 'a' });
    clock.advance(20);
    expect(await queue.get()).toEqual({ shutdown: false, item: 'b' });
    expect(queue.waitingCount()).toBe(0);
  });

  it('releases delayed items in due order, each at its first tick at or after its delay', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.record({ key: fc.string({ minLength: 1, maxLength: 4 }), delay: fc.nat(1000) }), {
          selector: (entry) => entry.key,
          maxLength: 30,
        }),
        async (entries) => {
          const clock = new ManualClock();
          const queue = new RateLimitingQueue<string>({ clock });
          for (const { key, delay } of entries) queue.addAfter(key, delay);
          const released: Array<{ key: string; at: number }> = [];
          for (let tick = 0; tick <= 1010; tick += 10) {
            while (queue.len() > 0) {
              const next = await queue.get();
              if (next.shutdown) throw new Error('unexpected shutdown');
              released.push({ key: next.item, at: clock.now() });
              queue.done(next.item);
            }
            clock.advance(10);
          }
          const expectedOrder = [...entries].sort((a, b) => a.delay - b.delay).map((entry) => entry.key);
          expect(released.map((entry) => entry.key)).toEqual(expectedOrder);
          for (const { key, at } of released) {
            const delay = entries.find((entry) => entry.key === key)?.delay ?? -1;
            expect(at).toBe(Math.ceil(delay / 10) * 10);
          }
        },
      ),
    );
  });

  it('addRateLimited backs off exponentially per item; forget resets it', () => {
    const clock = new ManualClock();
    const queue = new RateLimitingQueue<string>({
      clock,
      rateLimiter: new ItemExponentialFailureRateLimiter<string>(10, 1000),
    });
    queue.addRateLimited('k');
    clock.advance(9);
    expect(queue.len()).toBe(0);
    clock.advance(1);
    expect(queue.len()).toBe(1);
    queue.addRateLimited('k'); // already queued: stays queued once; the limiter still counts the failure
    expect(queue.numRequeues('k')).toBe(2);
    queue.forget('k');
    expect(queue.numRequeues('k')).toBe(0);
  });

  it('shutdown drops delayed items and cancels the timer', () => {
    const clock = new ManualClock();
    const queue = new RateLimitingQueue<string>({ clock });
    queue.addAfter('later', 100);
    queue.shutDown();
    expect(clock.pendingTimers()).toBe(0);
    clock.advance(200);
    expect(queue.len()).toBe(0);
    queue.addAfter('ignored', 1);
    queue.addRateLimited('ignored');
    expect(queue.waitingCount()).toBe(0);
  });

  it('reports workqueue_* metrics under its name, sharing one registry with another queue', async () => {
    const registry = new Registry();
    let now = 0;
    const metricsA = new PrometheusQueueMetrics<string>('alpha', registry, () => now);
    const metricsB = new PrometheusQueueMetrics<string>('beta', registry, () => now);
    const alpha = new RateLimitingQueue<string>({ metrics: metricsA });
    const beta = new RateLimitingQueue<string>({ metrics: metricsB });
    alpha.add('x');
    alpha.add('x');
    alpha.add('y');
    beta.add('z');
    now = 2_000;
    const taken = await alpha.get();
    now = 5_000;
    const text = await registry.metrics();
    expect(text).toContain('workqueue_adds_total{name="alpha"} 2');
    expect(text).toContain('workqueue_adds_total{name="beta"} 1');
    expect(text).toContain('workqueue_depth{name="alpha"} 1');
    expect(text).toContain('workqueue_unfinished_work_seconds{name="alpha"} 3');
    expect(text).toContain('workqueue_longest_running_processor_seconds{name="alpha"} 3');
    expect(text).toContain('workqueue_queue_duration_seconds_count{name="alpha"} 1');
    if (taken.shutdown) throw new Error('expected an item');
    alpha.done(taken.item);
    alpha.addRateLimited('x');
    const after = await registry.metrics();
    expect(after).toContain('workqueue_work_duration_seconds_count{name="alpha"} 1');
    expect(after).toContain('workqueue_retries_total{name="alpha"} 1');
    alpha.shutDown();
    beta.shutDown();
  });
});
