import { connect as tcpConnect } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowed, WebhookServer } from '../src/webhook/index.js';
import { waitFor } from './fixtures/core-wait.js';
import { type CertDir, createCertDir, createTestCA, issueServingPair, type TestCA } from './fixtures/webhook-certs.js';
import { admissionReview, listeningPort, sendToWebhook } from './fixtures/webhook-client.js';
import { rawRequest, statusOf } from './fixtures/webhook-raw.js';

const silent = pino({ level: 'silent' });
/**
 * Hang guard for tests that wait for a server to cut a connection. The servers those tests use have no deadline
 * under it but the one each test sets short (`strict`: headers and request; `handshake`: the TLS handshake, its
 * request and idle deadlines set far above the guard), so a cut within it came from that bound, however long a loaded
 * machine took to make it.
 */
const CUT_GUARD_MS = 120_000;
const MAX_BYTES = 64 * 1024;

describe('WebhookServer against hostile requests', () => {
  let ca: TestCA;
  let certDir: CertDir;
  let port: number;
  /** Short header and request deadlines, for clients that never finish a request (their one way to end). */
  let strictPort: number;
  /** A short TLS handshake deadline, for a client that never starts one. */
  let handshakePort: number;
  const stop = new AbortController();
  const running: Promise<void>[] = [];
  let handlerCalls = 0;

  beforeAll(async () => {
    ca = await createTestCA();
    certDir = await createCertDir();
    await certDir.write(await issueServingPair(ca));
    /** Starts a server on this file's certificate with `options`, `/count` and `register`'s paths; returns its port. */
    const serve = async (
      options: Partial<ConstructorParameters<typeof WebhookServer>[0]>,
      register: (server: WebhookServer) => void = () => undefined,
    ): Promise<number> => {
      const server = new WebhookServer({
        host: '127.0.0.1',
        port: 0,
        certDir: certDir.path,
        logger: silent,
        ...options,
      });
      server.register('/count', () => {
        handlerCalls += 1;
        return allowed();
      });
      register(server);
      running.push(server.start(stop.signal));
      return listeningPort(server);
    };
    // The server of every request that is sent whole: the connection deadlines are the defaults (seconds), which a
    // client that sends its request at once meets on any machine; only the handler deadline is short, for a handler
    // that never answers.
    port = await serve({ maxRequestBytes: MAX_BYTES, handlerTimeoutMs: 300, maxConcurrentRequests: 2 }, (server) => {
      server.register('/never', () => new Promise(() => undefined));
      server.register('/throw-unprintable', () => {
        throw Object.create(null, {
          toString: {
            value: () => {
              throw new Error('no');
            },
          },
        });
      });
      server.register('/throw-huge', () => {
        throw new Error(`pool ${'x'.repeat(1_000_000)} is broken`);
      });
    });
    strictPort = await serve({ requestTimeoutMs: 1_000, headersTimeoutMs: 500 });
    handshakePort = await serve({
      handshakeTimeoutMs: 500,
      requestTimeoutMs: 2 * CUT_GUARD_MS,
      headersTimeoutMs: 2 * CUT_GUARD_MS,
    });
  });

  afterAll(async () => {
    stop.abort();
    await Promise.all(running);
    await certDir?.remove();
  });

  const post = (path: string, body: string) => sendToWebhook({ port, path, caPem: ca.certPem, body });

  it(
    'answers 413 to a declared oversize body before reading any of it, and closes the connection',
    async () => {
      const answer = await rawRequest(
        port,
        ca.certPem,
        `POST /count HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n`,
        { bodyBytes: 0 },
      );
      expect(statusOf(answer.text)).toBe(413);
      expect(answer.text).toContain(`request body exceeds ${MAX_BYTES} bytes`);
      expect(handlerCalls).toBe(0);
    },
    CUT_GUARD_MS,
  );

  it(
    'cuts a chunked body off once it passes the limit instead of reading all of it',
    async () => {
      const total = 64 * 1024 * 1024;
      const answer = await rawRequest(
        port,
        ca.certPem,
        `POST /count HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${total.toString(16)}\r\n`,
        { bodyBytes: total },
      );
      // One chunk with no declared length up front: the server must count as it reads. The client could hand at most
      // the limit plus what the loopback socket buffers hold before the connection was closed.
      expect(statusOf(answer.text)).toBe(413);
      if (process.env.MEASURE) console.log('sentBodyBytes', answer.sentBodyBytes);
      expect(answer.sentBodyBytes).toBeLessThan(total / 2);
      expect(handlerCalls).toBe(0);
    },
    CUT_GUARD_MS,
  );

  it(
    'closes a connection whose request headers never finish (slowloris)',
    async () => {
      const answer = await rawRequest(strictPort, ca.certPem, 'POST /count HTTP/1.1\r\nHost: localhost\r\n', {
        bodyBytes: 0,
      });
      expect([0, 408]).toContain(statusOf(answer.text));
      expect(handlerCalls).toBe(0);
    },
    CUT_GUARD_MS,
  );

  it(
    'cuts off a body that stops arriving',
    async () => {
      const answer = await rawRequest(
        strictPort,
        ca.certPem,
        'POST /count HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n',
        { bodyBytes: 1000, stallAfter: 10 },
      );
      expect(answer.sentBodyBytes).toBe(10);
      expect([0, 408]).toContain(statusOf(answer.text));
      expect(handlerCalls).toBe(0);
    },
    CUT_GUARD_MS,
  );

  it(
    'closes a connection that never starts its TLS handshake',
    async () => {
      const closed = await new Promise<boolean>((resolve, reject) => {
        const socket = tcpConnect({ host: '127.0.0.1', port: handshakePort });
        socket.on('error', reject);
        socket.on('close', () => resolve(true));
      });
      expect(closed).toBe(true);
    },
    CUT_GUARD_MS,
  );

  it(
    'denies with 500 when the handler never answers',
    async () => {
      const answer = await post('/never', JSON.stringify(admissionReview()));
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        response: {
          allowed: false,
          status: { code: 500, reason: 'InternalError', message: 'the admission handler did not answer within 300 ms' },
        },
      });
    },
    CUT_GUARD_MS,
  );

  it('refuses requests beyond the concurrency bound with 429 and serves again once they finish', async () => {
    // A server of its own, with the default handler deadline: on the one above (300 ms, for the test of a handler
    // that never answers) a blocked review gives its slot back 300 ms after it started, so the third request had to
    // arrive within that time, which a loaded machine does not promise.
    const bounded = new WebhookServer({
      host: '127.0.0.1',
      port: 0,
      certDir: certDir.path,
      logger: silent,
      maxConcurrentRequests: 2,
    });
    const held: Array<() => void> = [];
    bounded.register('/block', () => new Promise((resolve) => held.push(() => resolve(allowed()))));
    bounded.register('/count', () => allowed());
    const stopBounded = new AbortController();
    const runningBounded = bounded.start(stopBounded.signal);
    try {
      const boundedPort = await listeningPort(bounded);
      const postBounded = (path: string) =>
        sendToWebhook({ port: boundedPort, path, caPem: ca.certPem, body: JSON.stringify(admissionReview()) });
      const first = postBounded('/block');
      const second = postBounded('/block');
      await waitFor('both blocking reviews in their handler', () => held.length === 2);
      const third = await postBounded('/count');
      expect(third.status).toBe(429);
      expect(third.body).toMatchObject({ kind: 'Status', code: 429, reason: 'TooManyRequests' });
      for (const release of held.splice(0)) release();
      await expect(first).resolves.toMatchObject({ status: 200, body: { response: { allowed: true } } });
      await expect(second).resolves.toMatchObject({ status: 200, body: { response: { allowed: true } } });
      expect((await postBounded('/count')).status).toBe(200);
    } finally {
      for (const release of held.splice(0)) release();
      stopBounded.abort();
      await runningBounded;
    }
  });

  it('turns a thrown value that cannot be printed into a clean denial', async () => {
    const answer = await post('/throw-unprintable', JSON.stringify(admissionReview()));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ response: { allowed: false, status: { code: 500 } } });
  });

  it('cuts a huge error message to a short one with an ellipsis', async () => {
    const answer = await post('/throw-huge', JSON.stringify(admissionReview()));
    const message = (answer.body as { response: { status: { message: string } } }).response.status.message;
    expect(message.length).toBe(1024);
    expect(message.endsWith('…')).toBe(true);
  });

  it('answers malformed and deeply nested JSON with 400 or a denial, never a crash', async () => {
    expect((await post('/count', '{"apiVersion":')).status).toBe(400);
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    expect((await post('/count', deep)).status).toBe(400);
    expect((await post('/count', JSON.stringify(admissionReview()))).status).toBe(200);
  });
});
