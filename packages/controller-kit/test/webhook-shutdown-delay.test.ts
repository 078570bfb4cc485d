import { Agent, request } from 'node:https';
import { createTestNamespace, type TestNamespace } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../src/client/client.js';
import { LEASE_RESOURCE } from '../src/manager/lease.js';
import { Manager } from '../src/manager/manager.js';
import type { Runnable } from '../src/manager/runnable.js';
import { allowed, WebhookServer } from '../src/webhook/index.js';
import { MAX_WEBHOOK_SHUTDOWN_DELAY_MS } from '../src/webhook/server-options.js';
import { ManualClock } from './fixtures/core-manual-clock.js';
import { type CertDir, createCertDir, createTestCA, issueServingPair, type TestCA } from './fixtures/webhook-certs.js';
import { admissionReview, listeningPort, peerCertificate, sendToWebhook } from './fixtures/webhook-client.js';
import { eventually } from './fixtures/webhook-poll.js';

// The delay is timed by a manual clock: everything "during the delay" happens before the clock moves, so nothing here
// races a timer, and the end of the delay is the test's own `advance`.
const DELAY_MS = 5_000;
const silent = pino({ level: 'silent' });

let ca: TestCA;
let certDir: CertDir;

beforeAll(async () => {
  ca = await createTestCA();
  certDir = await createCertDir();
  await certDir.write(await issueServingPair(ca));
});

afterAll(async () => {
  await certDir?.remove();
});

function review(port: number, uid: string): ReturnType<typeof sendToWebhook> {
  // `sendToWebhook` dials a new TLS connection for every request (no agent), as a caller routed anew would.
  return sendToWebhook({
    port,
    path: '/validate-anything',
    caPem: ca.certPem,
    body: JSON.stringify(admissionReview({ uid })),
  });
}

async function reviewsAllowed(port: number, count: number, prefix: string): Promise<number> {
  const answers = await Promise.all(Array.from({ length: count }, (_, index) => review(port, `${prefix}-${index}`)));
  return answers.filter((answer) => answer.status === 200 && isAllowed(answer.body)).length;
}

interface KeptAliveAnswer {
  readonly allowed: boolean;
  readonly reusedSocket: boolean;
  readonly connection: string | undefined;
}

/** A review through a keep-alive agent, as the API server's client keeps its connections to a webhook. */
function reviewKeptAlive(agent: Agent, port: number, uid: string): Promise<KeptAliveAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/validate-anything',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          resolve({
            allowed: res.statusCode === 200 && isAllowed(body),
            reusedSocket: req.reusedSocket,
            connection: res.headers.connection,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(admissionReview({ uid })));
  });
}

function isAllowed(body: unknown): boolean {
  const response = (body as { response?: { allowed?: unknown } } | undefined)?.response;
  return response?.allowed === true;
}

function serverWith(options: { shutdownDelayMs?: number; clock: ManualClock }): WebhookServer {
  const server = new WebhookServer({
    host: '127.0.0.1',
    port: 0,
    certDir: certDir.path,
    logger: silent,
    registry: new Registry(),
    ...options,
  });
  server.register('/validate-anything', () => allowed());
  return server;
}

describe('WebhookServer shutdown delay', () => {
  it('reports not started at once, keeps accepting connections and serving reviews through the delay, then refuses', async () => {
    const clock = new ManualClock();
    const server = serverWith({ shutdownDelayMs: DELAY_MS, clock });
    const stop = new AbortController();
    let stopped = false;
    const running = server.start(stop.signal).then(() => {
      stopped = true;
    });
    try {
      const port = await listeningPort(server);
      stop.abort();
      expect(server.started).toBe(false);
      await expect(server.startedChecker()()).rejects.toThrow('has not started yet or is stopping');

      // A bare TLS handshake (the API server's dial) is accepted too.
      await expect(peerCertificate(port, ca.certPem)).resolves.toHaveProperty('subject');
      expect(await reviewsAllowed(port, 5, 'in-delay')).toBe(5);
      // One moment short of the delay the port still answers; the delay is the only timer the stop waits on.
      clock.advance(DELAY_MS - 1);
      expect(await reviewsAllowed(port, 3, 'just-before')).toBe(3);
      expect(stopped).toBe(false);
      expect(clock.pendingTimers()).toBe(1);

      clock.advance(1);
      await running;
      expect(stopped).toBe(true);
      await expect(review(port, 'after-delay')).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      stop.abort();
      clock.advance(DELAY_MS);
      await running;
    }
  });

  it('closes each connection after its answer during the delay, so a kept-alive caller dials again', async () => {
    const clock = new ManualClock();
    const server = serverWith({ shutdownDelayMs: DELAY_MS, clock });
    const stop = new AbortController();
    const running = server.start(stop.signal);
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: ca.certPem });
    try {
      const port = await listeningPort(server);
      const before: KeptAliveAnswer[] = [];
      for (let index = 0; index < 3; index += 1) before.push(await reviewKeptAlive(agent, port, `before-${index}`));
      stop.abort();
      const during: KeptAliveAnswer[] = [];
      for (let index = 0; index < 3; index += 1) during.push(await reviewKeptAlive(agent, port, `during-${index}`));

      expect(before.filter((answer) => answer.allowed).length).toBe(3);
      expect(during.filter((answer) => answer.allowed).length).toBe(3);
      // Before the stop one connection carries all three. During the delay the kept-alive connection carries one
      // more answer and is closed with it; every later request dials anew.
      expect(before.map((answer) => answer.reusedSocket)).toEqual([false, true, true]);
      expect(during.map((answer) => answer.reusedSocket)).toEqual([true, false, false]);
      expect(during.map((answer) => answer.connection)).toEqual(['close', 'close', 'close']);
    } finally {
      agent.destroy();
      stop.abort();
      clock.advance(DELAY_MS);
      await running;
    }
  });

  it('with no delay (the default) stops listening on the stop, as before', async () => {
    const clock = new ManualClock();
    const server = serverWith({ clock });
    expect(server.shutdownDelayMs).toBe(0);
    const stop = new AbortController();
    const running = server.start(stop.signal);
    const port = await listeningPort(server);
    expect(await reviewsAllowed(port, 2, 'before-stop')).toBe(2);
    stop.abort();
    await running;
    expect(clock.pendingTimers()).toBe(0);
    await expect(review(port, 'after-stop')).rejects.toThrow(/ECONNREFUSED/);
  });

  it('refuses a delay that is negative, fractional or above the bound, naming the option and the value', () => {
    for (const shutdownDelayMs of [-1, 1.5, MAX_WEBHOOK_SHUTDOWN_DELAY_MS + 1]) {
      expect(() => new WebhookServer({ shutdownDelayMs })).toThrow(
        `webhook server option shutdownDelayMs=${shutdownDelayMs} must be an integer from 0 to ${MAX_WEBHOOK_SHUTDOWN_DELAY_MS}`,
      );
    }
    expect(new WebhookServer({ shutdownDelayMs: MAX_WEBHOOK_SHUTDOWN_DELAY_MS }).shutdownDelayMs).toBe(
      MAX_WEBHOOK_SHUTDOWN_DELAY_MS,
    );
  });
});

describe('WebhookServer shutdown delay under the Manager', () => {
  let namespace: TestNamespace;
  let admin: Client;

  beforeAll(async () => {
    namespace = await createTestNamespace(testEnv().kubeConfig, 'webhook-delay');
    admin = new Client(testEnv().kubeConfig, { fieldManager: 'webhook-delay-test' });
  });

  afterAll(async () => {
    admin?.close();
    await namespace?.delete();
  });

  it('fails /readyz at once, stops controllers and releases the Lease without waiting, serves through the delay', async () => {
    const kubeConfig = testEnv().kubeConfig;
    const lease = 'webhook-delay-test';
    const manager = new Manager({
      kubeConfig,
      name: 'webhook-delay-test',
      logger: silent,
      registry: new Registry(),
      healthProbeBindAddress: '127.0.0.1:0',
      leaderElection: {
        namespace: namespace.name,
        id: lease,
        identity: 'webhook-delay-a',
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 500,
      },
    });
    const clock = new ManualClock();
    const server = serverWith({ shutdownDelayMs: DELAY_MS, clock });
    manager.add(server);
    manager.addReadyzCheck('webhook', server.startedChecker());
    let controllersStopped = 0;
    const controller: Runnable = {
      needLeaderElection: true,
      start: (signal) =>
        new Promise<void>((resolve) => {
          signal.addEventListener('abort', () => {
            controllersStopped += 1;
            resolve();
          });
        }),
    };
    manager.add(controller);

    const stop = new AbortController();
    let managerStopped = false;
    const running = manager.start(stop.signal).then(() => {
      managerStopped = true;
    });
    try {
      await manager.elected;
      const probePort = manager.healthProbePort ?? 0;
      await eventually('readyz passes', async () => {
        const answer = await fetch(`http://127.0.0.1:${probePort}/readyz?verbose`);
        if (answer.status !== 200) throw new Error(await answer.text());
      });
      const port = await listeningPort(server);
      expect(await holderOf(lease)).toBe('webhook-delay-a');

      stop.abort();
      const readyz = await fetch(`http://127.0.0.1:${probePort}/readyz?verbose`);
      expect(readyz.status).toBe(500);
      expect(await readyz.text()).toContain('[-]shutdown failed: the manager is stopping');

      // The clock has not moved: all of this happens inside the webhook server's delay.
      await eventually('Lease released', async () => {
        if ((await holderOf(lease)) !== '') throw new Error('still held');
      });
      expect(controllersStopped).toBe(1);
      expect(await reviewsAllowed(port, 5, 'after-release')).toBe(5);
      expect(managerStopped).toBe(false);

      clock.advance(DELAY_MS);
      await running;
      expect(managerStopped).toBe(true);
      await expect(review(port, 'after-delay')).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      stop.abort();
      clock.advance(DELAY_MS);
      await running;
    }
  });

  it('refuses a webhook server whose delay leaves nothing of the graceful shutdown timeout', () => {
    const manager = new Manager({
      kubeConfig: testEnv().kubeConfig,
      name: 'webhook-delay-bound',
      logger: silent,
      registry: new Registry(),
      gracefulShutdownTimeoutMs: DELAY_MS,
    });
    expect(() => manager.add(serverWith({ shutdownDelayMs: DELAY_MS, clock: new ManualClock() }))).toThrow(
      `Manager.add: a shutdown delay of ${DELAY_MS} ms leaves nothing of the graceful shutdown timeout of ${DELAY_MS} ms`,
    );
  });

  async function holderOf(lease: string): Promise<string> {
    const current = await admin.get(LEASE_RESOURCE, { namespace: namespace.name, name: lease });
    return current.spec?.holderIdentity ?? '';
  }
});
