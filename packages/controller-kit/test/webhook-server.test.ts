import { connect } from 'node:tls';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdmissionRequest, allowed, denied, validatingHandler, WebhookServer } from '../src/webhook/index.js';
import { webhookMetrics } from '../src/webhook/metrics.js';
import { type CertDir, createCertDir, createTestCA, issueServingPair, type TestCA } from './fixtures/webhook-certs.js';
import { admissionReview, listeningPort, sendToWebhook } from './fixtures/webhook-client.js';
import { MAX_WIDGET_SIZE, widgetSchema } from './fixtures/webhook-widget.js';

const silent = pino({ level: 'silent' });

interface Gate {
  readonly entered: Promise<void>;
  release(): void;
}

function gate(): Gate & { enter(): Promise<void> } {
  let markEntered!: () => void;
  let release!: () => void;
  const entered = new Promise<void>((resolve) => {
    markEntered = resolve;
  });
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    entered,
    release,
    enter: async () => {
      markEntered();
      await released;
    },
  };
}

async function seriesValue(registry: Registry, name: string, labels: Record<string, string>): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`metric ${name} is not registered`);
  const { values } = await metric.get();
  const match = values.find((value) => Object.entries(labels).every(([key, v]) => value.labels[key] === v));
  return match?.value ?? 0;
}

describe('WebhookServer over HTTPS', () => {
  let ca: TestCA;
  let certDir: CertDir;
  let server: WebhookServer;
  let port: number;
  const registry = new Registry();
  const stop = new AbortController();
  let running: Promise<void>;
  const slowGate = gate();
  const logLines: Record<string, unknown>[] = [];
  const capturing = pino({ level: 'info' }, { write: (line: string) => logLines.push(JSON.parse(line)) });
  const logsFor = (uid: string) => logLines.filter((line) => line.uid === uid);

  beforeAll(async () => {
    ca = await createTestCA();
    certDir = await createCertDir();
    await certDir.write(await issueServingPair(ca));
    server = new WebhookServer({ host: '127.0.0.1', port: 0, certDir: certDir.path, registry, logger: capturing });
    server.register(
      '/validate-widget',
      validatingHandler({
        parse: widgetSchema,
        create: (widget) =>
          widget.spec.size > MAX_WIDGET_SIZE
            ? denied(`spec.size ${widget.spec.size} exceeds the limit of ${MAX_WIDGET_SIZE}`)
            : allowed(widget.spec.color ? [] : ['spec.color is not set; widgets default to grey']),
      }),
    );
    server.register('/explode', () => {
      throw new Error('pool lookup failed: etcd is on fire');
    });
    server.register('/echo', (request: AdmissionRequest) =>
      allowed([`${request.operation} ${request.namespace}/${request.name} by ${request.userInfo.username}`]),
    );
    server.register('/slow', async () => {
      await slowGate.enter();
      return allowed();
    });
    running = server.start(stop.signal);
    port = await listeningPort(server);
  });

  afterAll(async () => {
    stop.abort();
    await running;
    await certDir.remove();
  });

  const post = (path: string, body: unknown, extra: { contentType?: string; method?: string } = {}) =>
    sendToWebhook({
      port,
      path,
      caPem: ca.certPem,
      body: typeof body === 'string' ? body : JSON.stringify(body),
      ...extra,
    });

  it('answers a review with the same uid and the handler warnings', async () => {
    const answer = await post('/validate-widget', admissionReview());
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: {
        uid: 'b0e1c2d3-0000-4000-8000-000000000001',
        allowed: true,
        warnings: ['spec.color is not set; widgets default to grey'],
      },
    });
  });

  it('logs one line per review with the webhook, the request and the outcome', async () => {
    await post('/validate-widget', admissionReview({ uid: 'log-allowed', namespace: 'team-a', name: 'w3' }));
    expect(logsFor('log-allowed')).toEqual([
      expect.objectContaining({
        level: 30,
        component: 'webhook-server',
        webhook: '/validate-widget',
        operation: 'CREATE',
        kind: 'Widget.webhook-test.tally.dev',
        namespace: 'team-a',
        name: 'w3',
        dryRun: false,
        allowed: true,
        durationMs: expect.any(Number),
        msg: 'admission request allowed',
      }),
    ]);
    await post('/explode', admissionReview({ uid: 'log-thrown' }));
    expect(logsFor('log-thrown')).toEqual([
      expect.objectContaining({
        level: 50,
        err: expect.objectContaining({ message: 'pool lookup failed: etcd is on fire' }),
        msg: 'admission handler failed; denying the request',
      }),
      expect.objectContaining({ level: 30, allowed: false, code: 500, msg: 'admission request denied' }),
    ]);
  });

  it('passes the typed request to the handler', async () => {
    const answer = await post('/echo', admissionReview({ operation: 'UPDATE', name: 'w9', namespace: 'team-a' }));
    expect(answer.body).toMatchObject({ response: { allowed: true, warnings: ['UPDATE team-a/w9 by tester'] } });
  });

  it('returns a denial with code, reason and message', async () => {
    const review = admissionReview({
      object: { apiVersion: 'webhook-test.tally.dev/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 12 } },
    });
    const answer = await post('/validate-widget', review);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      response: {
        allowed: false,
        status: { code: 403, reason: 'Forbidden', message: 'spec.size 12 exceeds the limit of 10' },
      },
    });
  });

  it('denies with 500 and the error message when the handler throws, and keeps serving', async () => {
    const answer = await post('/explode', admissionReview());
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      response: {
        uid: 'b0e1c2d3-0000-4000-8000-000000000001',
        allowed: false,
        status: { code: 500, reason: 'InternalError', message: 'pool lookup failed: etcd is on fire' },
      },
    });
    expect((await post('/validate-widget', admissionReview())).status).toBe(200);
  });

  it('rejects a body that is not JSON with 400', async () => {
    const answer = await post('/validate-widget', '{"apiVersion": ');
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ kind: 'Status', code: 400, reason: 'BadRequest' });
    expect(JSON.stringify(answer.body)).toContain('request body is not valid JSON');
  });

  it('rejects a review without a uid with 400 naming the field', async () => {
    const review = admissionReview();
    delete (review.request as Record<string, unknown>).uid;
    const answer = await post('/validate-widget', review);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      message: expect.stringContaining(
        'not an admission.k8s.io/v1 AdmissionReview request: request.uid: Required value',
      ),
    });
  });

  it('rejects another AdmissionReview version and an unknown operation with 400', async () => {
    const v1beta1 = await post('/validate-widget', { ...admissionReview(), apiVersion: 'admission.k8s.io/v1beta1' });
    expect(v1beta1.status).toBe(400);
    expect(v1beta1.body).toMatchObject({
      message: expect.stringContaining('apiVersion: Invalid value: "admission.k8s.io/v1beta1"'),
    });
    const patch = await post('/validate-widget', admissionReview({ operation: 'PATCH' }));
    expect(patch.status).toBe(400);
    expect(patch.body).toMatchObject({ message: expect.stringContaining('request.operation: Invalid value: "PATCH"') });
  });

  it('rejects a wrong content type, a GET and an unknown path', async () => {
    const text = await post('/validate-widget', admissionReview(), { contentType: 'text/plain' });
    expect(text.status).toBe(400);
    expect(text.body).toMatchObject({ message: 'contentType=text/plain, expected application/json' });
    expect((await post('/validate-widget', '', { method: 'GET' })).status).toBe(405);
    const unknown = await post('/validate-gadget', admissionReview());
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ message: 'no webhook is registered at /validate-gadget' });
  });

  it('counts requests by path and HTTP code, and tracks in-flight requests', async () => {
    const labels = { webhook: '/slow' };
    const before200 = await seriesValue(registry, 'controller_runtime_webhook_requests_total', {
      ...labels,
      code: '200',
    });
    const answer = post('/slow', admissionReview());
    await slowGate.entered;
    expect(await seriesValue(registry, 'controller_runtime_webhook_requests_in_flight', labels)).toBe(1);
    slowGate.release();
    expect((await answer).status).toBe(200);
    expect(await seriesValue(registry, 'controller_runtime_webhook_requests_in_flight', labels)).toBe(0);
    expect(await seriesValue(registry, 'controller_runtime_webhook_requests_total', { ...labels, code: '200' })).toBe(
      before200 + 1,
    );

    const before400 = await seriesValue(registry, 'controller_runtime_webhook_requests_total', {
      webhook: '/validate-widget',
      code: '400',
    });
    await post('/validate-widget', 'not json');
    expect(
      await seriesValue(registry, 'controller_runtime_webhook_requests_total', {
        webhook: '/validate-widget',
        code: '400',
      }),
    ).toBe(before400 + 1);
    const histogram = await registry.getSingleMetric('controller_runtime_webhook_latency_seconds')?.get();
    const slowCount = histogram?.values.find(
      (value) =>
        value.labels.webhook === '/slow' &&
        (value as { metricName?: string }).metricName === 'controller_runtime_webhook_latency_seconds_count',
    );
    expect(slowCount?.value).toBe(before200 + 1);
  });

  it('reuses the series when a second server shares the registry', () => {
    expect(() => webhookMetrics(registry)).not.toThrow();
    expect(webhookMetrics(registry).requests).toBe(
      registry.getSingleMetric('controller_runtime_webhook_requests_total'),
    );
  });

  it('refuses a path registered twice and a path without a leading slash', () => {
    expect(() => server.register('/echo', () => allowed())).toThrow('a webhook is already registered at /echo');
    expect(() => server.register('echo', () => allowed())).toThrow('must start with "/"');
  });

  it('reports ready through the started checker', async () => {
    await expect(server.startedChecker()()).resolves.toBeUndefined();
    const idle = new WebhookServer({ port: 0, certDir: certDir.path, logger: silent });
    await expect(idle.startedChecker()()).rejects.toThrow('the webhook server has not started yet or is stopping');
  });
});

describe('WebhookServer lifecycle', () => {
  it('fails to start with the path when the certificate is missing', async () => {
    const empty = await createCertDir();
    try {
      const server = new WebhookServer({ host: '127.0.0.1', port: 0, certDir: empty.path, logger: silent });
      await expect(server.start(new AbortController().signal)).rejects.toThrow(
        `cannot read the webhook serving certificate ${empty.path}/tls.crt`,
      );
      expect(server.started).toBe(false);
    } finally {
      await empty.remove();
    }
  });

  it('fails to start with the address when the port is taken', async () => {
    const ca = await createTestCA();
    const dir = await createCertDir();
    await dir.write(await issueServingPair(ca));
    const first = new WebhookServer({ host: '127.0.0.1', port: 0, certDir: dir.path, logger: silent });
    const stopFirst = new AbortController();
    const running = first.start(stopFirst.signal);
    try {
      const port = await listeningPort(first);
      const second = new WebhookServer({ host: '127.0.0.1', port, certDir: dir.path, logger: silent });
      await expect(second.start(new AbortController().signal)).rejects.toThrow(
        `the webhook server cannot listen on 127.0.0.1:${port}`,
      );
    } finally {
      stopFirst.abort();
      await running;
      await dir.remove();
    }
  });

  it('finishes in-flight requests on stop, then refuses connections', async () => {
    const ca = await createTestCA();
    const dir = await createCertDir();
    await dir.write(await issueServingPair(ca));
    const inFlight = gate();
    const server = new WebhookServer({ host: '127.0.0.1', port: 0, certDir: dir.path, logger: silent });
    server.register('/slow', async () => {
      await inFlight.enter();
      return allowed(['finished after stop was requested']);
    });
    const stop = new AbortController();
    let stopped = false;
    const running = server.start(stop.signal).then(() => {
      stopped = true;
    });
    try {
      const port = await listeningPort(server);
      const answer = sendToWebhook({ port, path: '/slow', caPem: ca.certPem, body: JSON.stringify(admissionReview()) });
      await inFlight.entered;
      stop.abort();
      expect(server.started).toBe(false);
      expect(stopped).toBe(false);
      inFlight.release();
      await expect(answer).resolves.toMatchObject({
        status: 200,
        body: { response: { allowed: true, warnings: ['finished after stop was requested'] } },
      });
      await running;
      expect(stopped).toBe(true);
      await expect(
        sendToWebhook({ port, path: '/slow', caPem: ca.certPem, body: JSON.stringify(admissionReview()) }),
      ).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      stop.abort();
      inFlight.release();
      await running;
      await dir.remove();
    }
  });

  it('refuses clients below the configured minimum TLS version', async () => {
    const ca = await createTestCA();
    const dir = await createCertDir();
    await dir.write(await issueServingPair(ca));
    const server = new WebhookServer({
      host: '127.0.0.1',
      port: 0,
      certDir: dir.path,
      tlsMinVersion: 'TLSv1.3',
      logger: silent,
    });
    const stop = new AbortController();
    const running = server.start(stop.signal);
    try {
      const port = await listeningPort(server);
      const handshake = (maxVersion: 'TLSv1.2' | 'TLSv1.3') =>
        new Promise<string | null>((resolve, reject) => {
          const socket = connect(
            { host: '127.0.0.1', port, ca: ca.certPem, servername: 'localhost', maxVersion },
            () => {
              const protocol = socket.getProtocol();
              socket.end();
              resolve(protocol);
            },
          );
          socket.on('error', reject);
        });
      await expect(handshake('TLSv1.3')).resolves.toBe('TLSv1.3');
      await expect(handshake('TLSv1.2')).rejects.toThrow(/protocol version|alert/i);
    } finally {
      stop.abort();
      await running;
      await dir.remove();
    }
  });
});
