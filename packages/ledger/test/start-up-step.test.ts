import { describe, expect, it } from 'vitest';
import { type StartUpInformer, startUpStep } from '../src/start-up-step.js';

/** An informer that has listed once `sync()` is called (the step only asks `hasSynced` and waits on `whenSynced`). */
function informer(synced: boolean): StartUpInformer & { sync(): void } {
  let listed = synced;
  const waiting: (() => void)[] = [];
  return {
    hasSynced: () => listed,
    whenSynced: () => (listed ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve))),
    sync: () => {
      listed = true;
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

describe('startUpStep', () => {
  it('runs once for every caller, after its gate and once its informers listed', async () => {
    const order: string[] = [];
    const late = informer(false);
    let openGate: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    const step = startUpStep({
      after: async () => {
        await gate;
        order.push('gate');
      },
      informers: [informer(true), late],
      run: async () => {
        order.push('run');
        return order.length;
      },
    });
    const callers = [step(), step(), step()];
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([]);
    openGate();
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['gate']);
    late.sync();
    expect(await Promise.all(callers)).toEqual([2, 2, 2]);
    expect(await step()).toBe(2);
    expect(order).toEqual(['gate', 'run']);
  });

  it('forgets a failure: the next caller runs it again, and a success is kept', async () => {
    let runs = 0;
    const step = startUpStep({
      informers: [],
      run: async () => {
        runs += 1;
        if (runs === 1) throw new Error('first run fails');
        return runs;
      },
    });
    await expect(step()).rejects.toThrow('first run fails');
    expect(await step()).toBe(2);
    expect(await step()).toBe(2);
    expect(runs).toBe(2);
  });
});
