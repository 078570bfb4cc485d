import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Backoff, sleep } from '../src/cache/backoff.js';
import { DelayHeap } from '../src/queue/delay-heap.js';
import { Fifo } from '../src/queue/fifo.js';

describe('Backoff', () => {
  it('doubles from the initial delay up to the cap, stretched by at most the jitter, and resets', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 1, max: 64 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (initialMs, capFactor, jitter) => {
          const maxMs = initialMs * capFactor;
          const backoff = new Backoff({ initialMs, maxMs, jitter });
          for (let n = 0; n < 12; n += 1) {
            const base = Math.min(maxMs, initialMs * 2 ** n);
            const delay = backoff.next();
            expect(delay).toBeGreaterThanOrEqual(Math.round(base) - 1);
            expect(delay).toBeLessThanOrEqual(Math.round(base * (1 + jitter)) + 1);
          }
          expect(backoff.attempts).toBe(12);
          backoff.reset();
          expect(backoff.attempts).toBe(0);
          expect(backoff.next()).toBeLessThanOrEqual(Math.round(initialMs * (1 + jitter)) + 1);
        },
      ),
    );
  });

  it('sleep ends early, without rejecting, when its signal aborts', async () => {
    const controller = new AbortController();
    const slept = sleep(60_000, controller.signal);
    controller.abort();
    await expect(slept).resolves.toBeUndefined();
    await expect(sleep(60_000, AbortSignal.abort())).resolves.toBeUndefined();
  });
});

describe('Fifo', () => {
  it('behaves like an array queue across compactions', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.nat(), fc.constant(-1)), { maxLength: 5000 }), (ops) => {
        const fifo = new Fifo<number>();
        const model: number[] = [];
        for (const op of ops) {
          if (op >= 0) {
            fifo.push(op);
            model.push(op);
          } else {
            expect(fifo.shift()).toBe(model.shift());
          }
          expect(fifo.length).toBe(model.length);
        }
        expect(fifo.toArray()).toEqual(model);
      }),
      { numRuns: 50 },
    );
  });
});

describe('DelayHeap', () => {
  it('pops items in (time, insertion) order, one entry per item, earliest time kept', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ item: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), at: fc.nat(100) }), {
          maxLength: 40,
        }),
        (schedules) => {
          const heap = new DelayHeap<string>();
          const earliest = new Map<string, { at: number; order: number }>();
          for (const [order, { item, at }] of schedules.entries()) {
            heap.schedule(item, at);
            const known = earliest.get(item);
            if (!known) earliest.set(item, { at, order });
            else if (at < known.at) earliest.set(item, { at, order: known.order });
          }
          const expected = [...earliest].sort(([, a], [, b]) => a.at - b.at || a.order - b.order).map(([item]) => item);
          expect(heap.size).toBe(earliest.size);
          expect(heap.popReady(50).concat(heap.popReady(100))).toEqual(expected);
          expect(heap.size).toBe(0);
        },
      ),
    );
  });
});
