import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WorkQueue } from '../src/queue/work-queue.js';

/** The reference model: client-go's three sets, written as plainly as possible. */
interface Model {
  queue: string[];
  dirty: Set<string>;
  processing: Set<string>;
  shutDown: boolean;
}

type Real = WorkQueue<string>;

class AddCommand implements fc.AsyncCommand<Model, Real> {
  constructor(readonly key: string) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    real.add(this.key);
    if (model.shutDown || model.dirty.has(this.key)) return;
    model.dirty.add(this.key);
    if (!model.processing.has(this.key)) model.queue.push(this.key);
  }
  toString(): string {
    return `add(${this.key})`;
  }
}

class GetCommand implements fc.AsyncCommand<Model, Real> {
  check(model: Readonly<Model>): boolean {
    return model.queue.length > 0;
  }
  async run(model: Model, real: Real): Promise<void> {
    const result = await real.get();
    const expected = model.queue.shift() as string;
    expect(result).toEqual({ shutdown: false, item: expected });
    expect(model.processing.has(expected)).toBe(false);
    model.processing.add(expected);
    model.dirty.delete(expected);
  }
  toString(): string {
    return 'get()';
  }
}

class DoneCommand implements fc.AsyncCommand<Model, Real> {
  constructor(readonly pick: number) {}
  check(model: Readonly<Model>): boolean {
    return model.processing.size > 0;
  }
  async run(model: Model, real: Real): Promise<void> {
    const key = [...model.processing][this.pick % model.processing.size] as string;
    real.done(key);
    model.processing.delete(key);
    if (model.dirty.has(key)) model.queue.push(key);
  }
  toString(): string {
    return `done(#${this.pick})`;
  }
}

class ShutDownCommand implements fc.AsyncCommand<Model, Real> {
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    real.shutDown();
    model.shutDown = true;
  }
  toString(): string {
    return 'shutDown()';
  }
}

const keys = fc.constantFrom('a', 'b', 'c', 'd', 'e');

describe('WorkQueue (client-go semantics)', () => {
  it('agrees with the dirty/processing/queue model under any sequence of operations', async () => {
    const commands = fc.commands(
      [
        keys.map((key) => new AddCommand(key)),
        fc.constant(new GetCommand()),
        fc.nat().map((pick) => new DoneCommand(pick)),
        fc.constant(new ShutDownCommand()),
      ],
      { maxCommands: 80 },
    );
    await fc.assert(
      fc.asyncProperty(commands, async (cmds) => {
        const model: Model = { queue: [], dirty: new Set(), processing: new Set(), shutDown: false };
        const real = new WorkQueue<string>();
        await fc.asyncModelRun(() => ({ model, real }), cmds);
        expect(real.len()).toBe(model.queue.length);
        expect(real.processingCount()).toBe(model.processing.size);
      }),
      { numRuns: 300 },
    );
  });

  it('never hands one key to two workers at once, and processes every add after it happened', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(keys, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 4 }),
        async (s, adds, workerCount) => {
          const queue = new WorkQueue<string>();
          let clock = 0;
          const inFlight = new Set<string>();
          const overlaps: string[] = [];
          const addTimes = new Map<string, number[]>();
          const startTimes = new Map<string, number[]>();

          const worker = async (): Promise<void> => {
            for (;;) {
              const next = await queue.get();
              if (next.shutdown) return;
              if (inFlight.has(next.item)) overlaps.push(next.item);
              inFlight.add(next.item);
              startTimes.set(next.item, [...(startTimes.get(next.item) ?? []), clock++]);
              // The scheduler decides when this "reconcile" finishes relative to adds and other workers.
              await s.schedule(Promise.resolve(), `work ${next.item}`);
              inFlight.delete(next.item);
              queue.done(next.item);
            }
          };
          const workers = Array.from({ length: workerCount }, () => worker());
          const producer = s.scheduleSequence(
            adds.map((key) => ({
              label: `add ${key}`,
              builder: async () => {
                addTimes.set(key, [...(addTimes.get(key) ?? []), clock++]);
                queue.add(key);
              },
            })),
          );
          while (!producer.done || queue.len() > 0 || queue.processingCount() > 0) {
            if (s.count() > 0) await s.waitOne();
            // Let resumed workers run up to their next scheduled point (a macrotask flushes all microtasks).
            else await new Promise((resolve) => setImmediate(resolve));
          }
          queue.shutDown();
          await s.waitAll();
          await Promise.all(workers);

          expect(overlaps).toEqual([]);
          for (const [key, times] of addTimes) {
            const lastAdd = Math.max(...times);
            const starts = startTimes.get(key) ?? [];
            expect(starts.some((start) => start > lastAdd)).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('re-queues a key added while it was processing once the worker is done', async () => {
    const queue = new WorkQueue<string>();
    queue.add('x');
    const first = await queue.get();
    expect(first).toEqual({ shutdown: false, item: 'x' });
    queue.add('x');
    queue.add('x');
    expect(queue.len()).toBe(0);
    queue.done('x');
    expect(queue.len()).toBe(1);
    expect(await queue.get()).toEqual({ shutdown: false, item: 'x' });
  });

  it('wakes a waiting worker on add, and waiting workers with shutdown', async () => {
    const queue = new WorkQueue<string>();
    const waiting = queue.get();
    const idle = queue.get();
    queue.add('k');
    expect(await waiting).toEqual({ shutdown: false, item: 'k' });
    queue.shutDown();
    expect(await idle).toEqual({ shutdown: true });
    queue.add('ignored');
    expect(queue.len()).toBe(0);
  });

  it('hands out what is queued after shutdown, then reports shutdown', async () => {
    const queue = new WorkQueue<string>();
    queue.add('one');
    queue.add('two');
    queue.shutDown();
    expect(await queue.get()).toEqual({ shutdown: false, item: 'one' });
    expect(await queue.get()).toEqual({ shutdown: false, item: 'two' });
    expect(await queue.get()).toEqual({ shutdown: true });
  });

  it('shutDownWithDrain resolves only after every taken item is done', async () => {
    const queue = new WorkQueue<string>();
    queue.add('a');
    queue.add('b');
    const a = await queue.get();
    const b = await queue.get();
    let drained = false;
    const drain = queue.shutDownWithDrain().then(() => {
      drained = true;
    });
    if (a.shutdown || b.shutdown) throw new Error('expected items');
    queue.done(a.item);
    await Promise.resolve();
    expect(drained).toBe(false);
    queue.done(b.item);
    await drain;
    expect(drained).toBe(true);
  });
});
