import { describe, expect, it } from 'vitest';
import { eventually, forEachLimited, waitFor } from '../src/wait.js';

describe('waitFor', () => {
  it('keeps polling through undefined, false and throws, and resolves with the first other value', async () => {
    const answers: Array<() => number | undefined | false> = [
      () => undefined,
      () => false,
      () => {
        throw new Error('not ready');
      },
      () => 0,
    ];
    let calls = 0;
    const value = await waitFor('the fourth answer', () => (answers[calls++] ?? (() => 99))(), { intervalMs: 1 });
    expect(value).toBe(0);
    expect(calls).toBe(4);
  });

  it('fails naming what it waited for and the last error, which is the cause', async () => {
    const failure = new Error('still 503');
    const error = await waitFor(
      'the server',
      () => {
        throw failure;
      },
      { timeoutMs: 20, intervalMs: 1 },
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('timed out after 20 ms waiting for the server: still 503');
    expect((error as Error).cause).toBe(failure);
  });

  it('reports the described state when the condition just never held', async () => {
    const error = await waitFor('three replicas', () => false, {
      timeoutMs: 20,
      intervalMs: 1,
      describe: () => ({ replicas: 2 }),
    }).catch((caught: unknown) => caught);
    expect((error as Error).message).toBe(
      'timed out after 20 ms waiting for three replicas: last state: {"replicas":2}',
    );
  });

  it('reports the last error, the state an async describe reads and where to look, all together', async () => {
    const error = await waitFor(
      'the claim to be bound',
      async () => {
        throw new Error('status.addressRef: Required');
      },
      {
        timeoutMs: 20,
        intervalMs: 1,
        describe: async () => ({ status: {} }),
        hint: "the controller's log: /tmp/controller.log",
      },
    ).catch((caught: unknown) => caught);
    expect((error as Error).message).toBe(
      'timed out after 20 ms waiting for the claim to be bound: status.addressRef: Required; last state: {"status":{}}' +
        "\nsee the controller's log: /tmp/controller.log",
    );
  });

  it('says so in place of the state when describe fails, and still fails with the timeout', async () => {
    const error = await waitFor('the pool', () => undefined, {
      timeoutMs: 20,
      intervalMs: 1,
      describe: async () => {
        throw new Error('connection refused');
      },
    }).catch((caught: unknown) => caught);
    expect((error as Error).message).toBe(
      'timed out after 20 ms waiting for the pool: last state: (could not read it: connection refused)',
    );
  });
});

describe('eventually', () => {
  it('retries until the attempt stops throwing and resolves with its value, even undefined', async () => {
    let calls = 0;
    const value = await eventually(
      'the third try',
      async () => {
        calls += 1;
        if (calls < 3) throw new Error(`try ${calls}`);
        return undefined;
      },
      { intervalMs: 1 },
    );
    expect(value).toBeUndefined();
    expect(calls).toBe(3);
  });

  it('fails with the last error and the hint', async () => {
    const error = await eventually(
      'the webhook',
      () => {
        throw new Error('connection refused');
      },
      { timeoutMs: 20, intervalMs: 1, hint: 'the webhook server log' },
    ).catch((caught: unknown) => caught);
    expect((error as Error).message).toBe(
      'timed out after 20 ms waiting for the webhook: connection refused\nsee the webhook server log',
    );
  });
});

describe('forEachLimited', () => {
  it('runs every item once, in order of start, never more than the limit at a time', async () => {
    const items = Array.from({ length: 50 }, (_, index) => index);
    const started: number[] = [];
    let inFlight = 0;
    let mostInFlight = 0;
    await forEachLimited(items, 4, async (item) => {
      started.push(item);
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      // Uneven work, so workers overtake each other.
      for (let turn = 0; turn < item % 5; turn++) await Promise.resolve();
      inFlight -= 1;
    });
    expect(started).toEqual(items);
    expect(mostInFlight).toBe(4);
  });

  it('starts no item after a failure and rejects with that failure once the items in flight settle', async () => {
    const started: number[] = [];
    let finishedAfterFailure = 0;
    let failedYet = false;
    const run = forEachLimited([0, 1, 2, 3, 4, 5, 6, 7], 2, async (item) => {
      started.push(item);
      if (item === 2) {
        failedYet = true;
        throw new Error('item 2 failed');
      }
      await new Promise((resolve) => setImmediate(resolve));
      if (failedYet) finishedAfterFailure += 1;
    });
    await expect(run).rejects.toThrow('item 2 failed');
    // Item 1 was in flight when item 2 failed: it finishes, and its worker starts nothing more.
    expect(started).toEqual([0, 1, 2]);
    expect(finishedAfterFailure).toBe(1);
  });

  it('refuses a limit that would run nothing', async () => {
    await expect(forEachLimited([1], 0, async () => {})).rejects.toThrow(/limit must be a positive integer, got 0/);
    await expect(forEachLimited([1], 1.5, async () => {})).rejects.toThrow(RangeError);
  });
});
