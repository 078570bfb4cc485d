import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AdmissionHandler, allowed, WebhookServer, type WebhookServerOptions } from '../src/webhook/index.js';
import { ManualClock } from './fixtures/core-manual-clock.js';
import { waitFor } from './fixtures/core-wait.js';
import { type CertDir, createCertDir, createTestCA, issueServingPair, type TestCA } from './fixtures/webhook-certs.js';
import { admissionReview, listeningPort, sendToWebhook } from './fixtures/webhook-client.js';
import {
  type HeldConnection,
  idleConnection,
  rawRequest,
  seriesValue,
  slowBody,
  statusOf,
} from './fixtures/webhook-raw.js';

// Admission must not be starved by clients that are slow on purpose: slow bodies must not hold the concurrency slots,
// idle connections must not lock new ones out, and nothing is read without a bound. Deadlines run on a manual clock
// (or are small and only ever waited for), and the server's Node timeouts are set far out of reach, so every outcome
// here is decided by the mechanism under test, not by how fast the machine is.

const silent = pino({ level: 'silent' });
/** Far beyond any test here: only the deadline under test may end a connection. */
const NEVER_MS = 10 * 60_000;
const REQUESTS = 'controller_runtime_webhook_requests_total';
const EVICTIONS = 'controller_kit_webhook_evictions_total';
const RECEIVING = 'controller_kit_webhook_receiving_requests';
const RECEIVING_BYTES = 'controller_kit_webhook_receiving_bytes';

interface Running {
  readonly server: WebhookServer;
  readonly port: number;
  readonly registry: Registry;
  readonly handlerCalls: () => number;
}

describe('WebhookServer against slow and idle clients', () => {
  let ca: TestCA;
  let certDir: CertDir;
  const cleanups: Array<() => Promise<void>> = [];
  const held: HeldConnection[] = [];

  beforeAll(async () => {
    ca = await createTestCA();
    certDir = await createCertDir();
    await certDir.write(await issueServingPair(ca));
  });

  afterEach(async () => {
    for (const connection of held.splice(0)) connection.socket.destroy();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  afterAll(async () => {
    await certDir?.remove();
  });

  /** A server of the test's own with `/count` (allows) and any `extra` handlers; stopped after the test. */
  async function startServer(
    options: WebhookServerOptions,
    extra: Record<string, AdmissionHandler> = {},
  ): Promise<Running> {
    const registry = new Registry();
    let calls = 0;
    const server = new WebhookServer({
      host: '127.0.0.1',
      port: 0,
      certDir: certDir.path,
      logger: silent,
      registry,
      requestTimeoutMs: NEVER_MS,
      headersTimeoutMs: NEVER_MS,
      ...options,
    });
    server.register('/count', () => {
      calls += 1;
      return allowed();
    });
    for (const [path, handler] of Object.entries(extra)) server.register(path, handler);
    const stop = new AbortController();
    const running = server.start(stop.signal);
    cleanups.push(async () => {
      stop.abort();
      await running;
    });
    return { server, port: await listeningPort(server), registry, handlerCalls: () => calls };
  }

  const review = (port: number, body: unknown = admissionReview()) =>
    sendToWebhook({ port, path: '/count', caPem: ca.certPem, body: JSON.stringify(body) });

  it('answers a review with 200 while 20 slow bodies arrive, and cuts the slow ones off at the body deadline', async () => {
    const clock = new ManualClock();
    const { port, registry, handlerCalls } = await startServer({ clock, bodyTimeoutMs: 2_000 });
    expect(new WebhookServer({}).limits.maxConcurrentRequests).toBe(16);
    // More slow bodies than the default 16 slots, as in the report: 1 KiB of a declared 1 MiB, then a byte a while.
    const slow = await Promise.all(
      Array.from({ length: 20 }, () =>
        slowBody(port, ca.certPem, {
          path: '/count',
          declaredBytes: 1024 * 1024,
          initialBytes: 1024,
          trickleEveryMs: 50,
        }),
      ),
    );
    held.push(...slow);
    await waitFor('all 20 slow bodies being received', async () => (await seriesValue(registry, RECEIVING)) === 20);

    const answer = await review(port);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ response: { allowed: true } });
    expect(handlerCalls()).toBe(1);
    expect(await seriesValue(registry, REQUESTS, { webhook: '/count', code: '429' })).toBe(0);
    // The manual clock has not moved: every slow body is still being received, none holds a slot.
    expect(slow.filter((connection) => connection.isClosed())).toHaveLength(0);

    clock.advance(2_000);
    // Each closes only because the server closed it: these clients never do. The server counts what it answered;
    // a client may miss its 408 only if the connection was reset before it read it (the linger makes that rare).
    const texts = await Promise.all(slow.map((connection) => connection.closed));
    expect(await seriesValue(registry, REQUESTS, { webhook: '/count', code: '408' })).toBe(20);
    for (const text of texts) {
      expect([0, 408]).toContain(statusOf(text));
      if (text) expect(text).toContain('the request body did not arrive within 2000 ms');
    }
    expect(await seriesValue(registry, RECEIVING)).toBe(0);
    expect(await seriesValue(registry, RECEIVING_BYTES)).toBe(0);
    expect(handlerCalls()).toBe(1);
  });

  it('cuts a trickling body off at a real-timer deadline with 408', async () => {
    const { port, registry, handlerCalls } = await startServer({ bodyTimeoutMs: 200 });
    const slow = await slowBody(port, ca.certPem, {
      path: '/count',
      declaredBytes: 1024 * 1024,
      initialBytes: 1024,
      trickleEveryMs: 20,
    });
    held.push(slow);
    // Only the body deadline can end it: the trickle keeps the socket busy and Node's own deadlines are out of reach.
    expect([0, 408]).toContain(statusOf(await slow.closed));
    expect(await seriesValue(registry, REQUESTS, { webhook: '/count', code: '408' })).toBe(1);
    expect(handlerCalls()).toBe(0);
    expect((await review(port)).status).toBe(200);
  });

  it('answers a review while 256 idle connections are open, closing the one that waited longest', async () => {
    const { server, port, registry } = await startServer({});
    expect(server.limits.maxConnections).toBe(256);
    // One after another, so that the server accepted them in this order and the first one has waited longest.
    for (let index = 0; index < 256; index += 1) held.push(await idleConnection(port, ca.certPem));

    const answer = await review(port);
    expect(answer.status).toBe(200);
    await held[0]?.closed;
    expect(await seriesValue(registry, EVICTIONS, { reason: 'connections' })).toBe(1);
    expect(held.slice(1).filter((connection) => connection.isClosed())).toHaveLength(0);
  });

  it('never evicts a connection whose review is in a handler', async () => {
    const releases: Array<() => void> = [];
    const { port, registry } = await startServer(
      { maxConnections: 4, maxConcurrentRequests: 2 },
      { '/block': () => new Promise((resolve) => releases.push(() => resolve(allowed()))) },
    );
    // The blocked review's connection is the oldest of all; it holds a slot, so the next oldest goes instead.
    const blocked = sendToWebhook({ port, path: '/block', caPem: ca.certPem, body: JSON.stringify(admissionReview()) });
    await waitFor('the blocked review in its handler', () => releases.length === 1);
    for (let index = 0; index < 3; index += 1) held.push(await idleConnection(port, ca.certPem));

    expect((await review(port)).status).toBe(200);
    await held[0]?.closed;
    expect(held.slice(1).filter((connection) => connection.isClosed())).toHaveLength(0);
    for (const release of releases) release();
    await expect(blocked).resolves.toMatchObject({ status: 200, body: { response: { allowed: true } } });
    expect(await seriesValue(registry, EVICTIONS, { reason: 'connections' })).toBe(1);
  });

  it('evicts the body that has been arriving longest when the body byte budget is full', async () => {
    const clock = new ManualClock();
    const { port, registry } = await startServer({
      clock,
      maxRequestBytes: 64 * 1024,
      maxBufferedRequestBytes: 128 * 1024,
    });
    const stalled: HeldConnection[] = [];
    for (let index = 1; index <= 2; index += 1) {
      const connection = await slowBody(port, ca.certPem, {
        path: '/count',
        declaredBytes: 64 * 1024,
        initialBytes: 60 * 1024,
      });
      stalled.push(connection);
      held.push(connection);
      await waitFor(
        `stalled body ${index} received`,
        async () => (await seriesValue(registry, RECEIVING_BYTES)) === index * 60 * 1024,
      );
    }

    // 120 KiB held; this review's 16 KiB do not fit beside them, so the older stalled body makes room.
    const padded = admissionReview({
      object: {
        apiVersion: 'webhook-test.tally.dev/v1',
        kind: 'Widget',
        metadata: { name: 'w1', annotations: { pad: 'x'.repeat(16 * 1024) } },
        spec: { size: 1 },
      },
    });
    expect((await review(port, padded)).status).toBe(200);
    const first = await stalled[0]?.closed;
    expect(statusOf(first ?? '')).toBe(503);
    expect(first).toContain('it had waited longest, so it was dropped');
    expect(stalled[1]?.isClosed()).toBe(false);
    expect(await seriesValue(registry, EVICTIONS, { reason: 'body_bytes' })).toBe(1);
    expect(await seriesValue(registry, REQUESTS, { webhook: '/count', code: '503' })).toBe(1);
    expect(await seriesValue(registry, RECEIVING_BYTES)).toBe(60 * 1024);

    clock.advance(5_000);
    expect(statusOf((await stalled[1]?.closed) ?? '')).toBe(408);
    expect(await seriesValue(registry, RECEIVING_BYTES)).toBe(0);
  });

  it('refuses a body over the size bound without reading all of it', async () => {
    const { port, registry, handlerCalls } = await startServer({ maxRequestBytes: 64 * 1024 });
    const total = 64 * 1024 * 1024;
    // The client really sends the whole body at full speed; the server answers from the declared length and reads
    // at most a bounded linger's worth of the rest before it closes the connection.
    const answer = await rawRequest(
      port,
      ca.certPem,
      `POST /count HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${total}\r\n\r\n`,
      { bodyBytes: total },
    );
    expect(statusOf(answer.text)).toBe(413);
    expect(answer.text).toContain('request body exceeds 65536 bytes');
    expect(answer.sentBodyBytes).toBeLessThan(total / 2);
    expect(handlerCalls()).toBe(0);
    expect(await seriesValue(registry, REQUESTS, { webhook: '/count', code: '413' })).toBe(1);
  });

  it('answers a request target that is not a URL path with 400 and keeps serving', async () => {
    const { port } = await startServer({});
    // `new URL` throws on this target; thrown in the request listener it used to take the whole process down.
    const answer = await rawRequest(port, ca.certPem, 'POST http://[ HTTP/1.1\r\nHost: localhost\r\n\r\n', {
      bodyBytes: 0,
    });
    expect(statusOf(answer.text)).toBe(400);
    expect(answer.text).toContain('the request target http://[ is not a URL path');
    const long = await sendToWebhook({
      port,
      path: `/${'a'.repeat(4_000)}`,
      caPem: ca.certPem,
      body: JSON.stringify(admissionReview()),
    });
    expect(long.status).toBe(404);
    expect((long.body as { message: string }).message.length).toBeLessThanOrEqual(200);
    expect((await review(port)).status).toBe(200);
  });

  it('refuses bounds that cannot work, naming the options', () => {
    expect(() => new WebhookServer({ maxConnections: 16 })).toThrow(
      'webhook server option maxConnections=16 must be above maxConcurrentRequests=16',
    );
    expect(() => new WebhookServer({ maxRequestBytes: 1024, maxBufferedRequestBytes: 1000 })).toThrow(
      'webhook server option maxBufferedRequestBytes=1000 must be at least maxRequestBytes=1024',
    );
    expect(() => new WebhookServer({ bodyTimeoutMs: 0 })).toThrow('webhook server option bodyTimeoutMs=0');
    expect(new WebhookServer({ maxRequestBytes: 1024 }).limits).toMatchObject({
      bodyTimeoutMs: 5_000,
      maxBufferedRequestBytes: 4 * 1024,
    });
  });
});
