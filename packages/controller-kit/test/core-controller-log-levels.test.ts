import { testEnv, withTestNamespace } from '@tally-ipam/testenv/vitest';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Cache } from '../src/cache/cache.js';
import { Client } from '../src/client/client.js';
import { Controller } from '../src/controller/controller.js';
import { reconcilerFunc } from '../src/controller/reconciler.js';
import { captureLogs } from './fixtures/core-log-capture.js';
import { GADGETS, PARTS, TestObjects } from './fixtures/core-resources.js';
import { waitFor } from './fixtures/core-wait.js';

/**
 * Error-level lines are for what a person must act on. A reconcile that meets a NotFound (an object deleted under
 * it) or whose requests are aborted because the controller is stopping is retried or dropped, and logged below error.
 */
describe('Controller log levels', () => {
  it('logs a NotFound from the API server and an abort at shutdown below error level, a real failure at error', async () => {
    const { kubeConfig } = testEnv();
    const ns = await withTestNamespace(kubeConfig, 'log-levels');
    const objects = new TestObjects(kubeConfig);
    await objects.apply('gadgets', ns.name, 'gone', { size: 1 });
    await objects.apply('gadgets', ns.name, 'slow', { size: 1 });
    await objects.apply('gadgets', ns.name, 'broken', { size: 1 });
    const client = new Client(kubeConfig, { fieldManager: 'log-level-test' });
    const { logger, lines } = captureLogs('debug');
    const cache = new Cache({ kubeConfig, logger: pino({ level: 'silent' }) });
    const stop = new AbortController();
    let slowStarted = false;
    const controller = new Controller({
      name: 'log-levels',
      for: GADGETS,
      forOptions: { namespace: ns.name },
      cache,
      registry: new Registry(),
      logger,
      maxConcurrentReconciles: 3,
      reconciler: reconcilerFunc(async (request, { signal }) => {
        if (request.name === 'gone') {
          // A real NotFound from the API server: the Part it looks for does not exist.
          await client.get(PARTS, { namespace: ns.name, name: 'deleted-meanwhile' }, { signal });
        }
        if (request.name === 'slow') {
          slowStarted = true;
          // A request in flight when the controller stops: its signal aborts it.
          await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
        }
        if (request.name === 'broken') throw new Error('the pool spec cannot be parsed');
        return {};
      }),
    });
    const cacheDone = cache.start(stop.signal);
    const controllerDone = controller.start(stop.signal);
    try {
      await waitFor('the NotFound and the failure to be retried', () =>
        ['gone', 'broken'].every(
          (name) => lines.filter((line) => line.name === name && String(line.msg).startsWith('Reconcile')).length >= 2,
        ),
      );
      await waitFor('the slow reconcile to start', () => slowStarted);
    } finally {
      stop.abort();
      await controllerDone;
      await cacheDone;
      client.close();
    }
    const errorsFor = (name: string) => lines.filter((line) => line.name === name && Number(line.level) >= 50);
    expect(errorsFor('gone')).toEqual([]);
    expect(errorsFor('slow')).toEqual([]);
    expect(errorsFor('broken').length).toBeGreaterThanOrEqual(2);
    expect(lines.find((line) => line.name === 'gone')).toMatchObject({
      level: 30,
      msg: 'Reconcile target gone, requeueing',
    });
    expect(
      lines.find((line) => line.name === 'slow' && line.msg !== undefined && Number(line.level) === 20),
    ).toMatchObject({
      msg: 'Reconcile aborted: the controller is stopping',
    });
  });
});
