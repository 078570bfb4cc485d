import { createTestNamespace, type TestNamespace } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../src/client/client.js';
import { EVENTS_RESOURCE } from '../src/client/events.js';
import { Controller } from '../src/controller/controller.js';
import { reconcilerFunc } from '../src/controller/reconciler.js';
import { Manager, ShutdownTimeoutError } from '../src/manager/manager.js';
import type { Runnable, SyncingRunnable } from '../src/manager/runnable.js';
import { installCRDsReliably, THINGS, waitFor } from './fixtures/runtime-support.js';

let namespace: TestNamespace;
let admin: Client;

beforeAll(async () => {
  const { kubeConfig } = testEnv();
  await installCRDsReliably(kubeConfig);
  namespace = await createTestNamespace(kubeConfig, 'runtime-manager');
  admin = new Client(kubeConfig, { fieldManager: 'runtime-test-admin' });
  await admin.create(THINGS, { metadata: { name: 'probe', namespace: namespace.name }, spec: { size: 1 } });
});

afterAll(async () => {
  admin?.close();
  await namespace?.delete();
});

function newManager(options: { metrics?: string; probes?: string; gracefulShutdownTimeoutMs?: number } = {}): Manager {
  return new Manager({
    kubeConfig: testEnv().kubeConfig,
    name: 'runtime-test-manager',
    logger: pino({ level: 'silent' }),
    metricsBindAddress: options.metrics ?? '127.0.0.1:0',
    healthProbeBindAddress: options.probes ?? '127.0.0.1:0',
    gracefulShutdownTimeoutMs: options.gracefulShutdownTimeoutMs ?? 10_000,
  });
}

async function get(port: number | undefined, path: string): Promise<{ status: number; body: string }> {
  if (port === undefined) throw new Error('server not started');
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, body: await response.text() };
}

/** A cache-like runnable whose sync the test releases, to observe readiness before and after. */
class GatedSync implements SyncingRunnable {
  readonly needLeaderElection = false;
  #synced = false;
  #release: () => void = () => undefined;
  readonly #ready = new Promise<void>((resolve) => {
    this.#release = resolve;
  });
  release(): void {
    this.#synced = true;
    this.#release();
  }
  async start(signal: AbortSignal): Promise<void> {
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  }
  async waitForCacheSync(signal: AbortSignal): Promise<boolean> {
    await Promise.race([
      this.#ready,
      new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true })),
    ]);
    return this.#synced;
  }
  hasSynced(): boolean {
    return this.#synced;
  }
}

describe('Manager', () => {
  it('is live at once, ready only once caches synced, and starts controllers after the sync', async () => {
    const manager = newManager();
    const gate = new GatedSync();
    manager.add(gate);
    let reconciles = 0;
    manager.add(
      new Controller({
        name: 'probe-things',
        for: THINGS,
        forOptions: { namespace: namespace.name },
        cache: manager.cache,
        registry: manager.registry,
        logger: manager.logger,
        reconciler: reconcilerFunc(async () => {
          reconciles += 1;
          return {};
        }),
      }),
    );
    const stop = new AbortController();
    const running = manager.start(stop.signal);
    try {
      await waitFor('the probe server', () => manager.healthProbePort);
      expect((await get(manager.healthProbePort, '/healthz')).status).toBe(200);
      const notReady = await get(manager.healthProbePort, '/readyz?verbose');
      expect(notReady.status).toBe(500);
      expect(notReady.body).toContain('[-]cache-sync-1 failed: cache not synced yet');
      expect(reconciles).toBe(0);
      expect(manager.isLeader()).toBe(true);

      gate.release();
      await waitFor('readiness', async () =>
        (await get(manager.healthProbePort, '/readyz')).status === 200 ? true : undefined,
      );
      await waitFor('the controller to reconcile', () => (reconciles > 0 ? true : undefined));
      const metrics = await get(manager.metricsPort, '/metrics');
      expect(metrics.status).toBe(200);
      expect(metrics.body).toMatch(/controller_runtime_reconcile_total\{[^}]*controller="probe-things"[^}]*\} [1-9]/);
      expect(metrics.body).toContain('controller_runtime_max_concurrent_reconciles{controller="probe-things"} 1');
      expect(metrics.body).toContain('workqueue_adds_total{name="probe-things"}');
      expect(metrics.body).toContain('nodejs_eventloop_lag_seconds');
      expect((await get(manager.metricsPort, '/nope')).status).toBe(404);
    } finally {
      stop.abort();
      await running;
    }
    await expect(get(manager.healthProbePort, '/healthz')).rejects.toThrow();
  });

  it('a user readiness check takes part in /readyz and a failing health check fails /healthz', async () => {
    const manager = newManager({ metrics: '0' });
    let webhookReady = false;
    manager.addReadyzCheck('webhook', () => {
      if (!webhookReady) throw new Error('certificates not loaded');
    });
    manager.addHealthzCheck('event-loop', () => {
      throw new Error('stalled');
    });
    const stop = new AbortController();
    const running = manager.start(stop.signal);
    try {
      await waitFor('the probe server', () => manager.healthProbePort);
      expect(manager.metricsPort).toBeUndefined();
      const health = await get(manager.healthProbePort, '/healthz');
      expect(health.status).toBe(500);
      expect(health.body).toContain('[+]ping ok\n[+]api-server ok\n[-]event-loop failed: stalled');
      await waitFor('the webhook check to be the only failing one', async () => {
        const ready = await get(manager.healthProbePort, '/readyz');
        return ready.body.includes('[-]webhook failed: certificates not loaded') && ready.status === 500
          ? true
          : undefined;
      });
      webhookReady = true;
      await waitFor('readiness', async () =>
        (await get(manager.healthProbePort, '/readyz')).status === 200 ? true : undefined,
      );
    } finally {
      stop.abort();
      await running;
    }
  });

  it('stops everything when a runnable fails and rejects with its error', async () => {
    const manager = newManager({ metrics: '0', probes: '0' });
    let leaderSignal: AbortSignal | undefined;
    const leader: Runnable = {
      needLeaderElection: true,
      start: async (signal) => {
        leaderSignal = signal;
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      },
    };
    const failing: Runnable = {
      needLeaderElection: false,
      start: async () => {
        await waitFor('the leader runnable to start', () => leaderSignal);
        throw new Error('watch broke for good');
      },
    };
    manager.add(leader);
    manager.add(failing);
    await expect(manager.start(new AbortController().signal)).rejects.toThrow('watch broke for good');
    expect(leaderSignal?.aborted).toBe(true);
  });

  it('gives up draining after the graceful shutdown timeout and says so', async () => {
    const manager = newManager({ metrics: '0', probes: '0', gracefulShutdownTimeoutMs: 300 });
    let started = false;
    manager.add({
      needLeaderElection: true,
      start: async () => {
        started = true;
        // Ignores its signal: a reconcile stuck on something without a deadline.
        await new Promise<void>(() => undefined);
      },
    });
    const stop = new AbortController();
    const running = manager.start(stop.signal);
    await waitFor('the stuck runnable to start', () => (started ? true : undefined));
    stop.abort();
    await expect(running).rejects.toThrow(ShutdownTimeoutError);
    await expect(running).rejects.toThrow('runnables did not stop within the graceful shutdown timeout of 300 ms');
  });

  it('fails to start with a clear error when a port is taken', async () => {
    const first = newManager({ metrics: '0' });
    const stop = new AbortController();
    const running = first.start(stop.signal);
    try {
      const port = await waitFor('the first probe server', () => first.healthProbePort);
      const second = newManager({ metrics: '0', probes: `127.0.0.1:${port}` });
      await expect(second.start(new AbortController().signal)).rejects.toThrow(
        `cannot serve health probes on 127.0.0.1:${port}: listen EADDRINUSE`,
      );
    } finally {
      stop.abort();
      await running;
    }
  });

  it('gives each controller an event recorder that reports the manager identity as instance', async () => {
    const manager = newManager({ metrics: '0', probes: '0' });
    const regarding = await admin.get(THINGS, { namespace: namespace.name, name: 'probe' });
    await manager.getEventRecorderFor('probe-things').normal(regarding, 'Probed', 'Probe', 'looked at it');
    const events = await admin.list(EVENTS_RESOURCE, { namespace: namespace.name });
    const event = events.items.find((item) => item.metadata.name.startsWith('probe.')) as unknown as Record<
      string,
      unknown
    >;
    expect(event).toMatchObject({
      reason: 'Probed',
      reportingController: 'runtime-test-manager/probe-things',
      reportingInstance: manager.identity,
    });
    expect(manager.identity).toMatch(/^.+_[0-9a-f]{12}$/);
    manager.client.close();
  });

  it('refuses runnables after start and a second start', async () => {
    const manager = newManager({ metrics: '0', probes: '0' });
    const stop = new AbortController();
    const running = manager.start(stop.signal);
    expect(() => manager.add({ needLeaderElection: false, start: async () => undefined })).toThrow(
      'Manager.add: runnables must be added before start',
    );
    await expect(manager.start(stop.signal)).rejects.toThrow('a manager can be started only once');
    stop.abort();
    await running;
  });
});
