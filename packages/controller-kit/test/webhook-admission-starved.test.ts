import { fileURLToPath } from 'node:url';
import { AdmissionregistrationV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { installCRDs } from '@tally-ipam/testenv';
import { createTestNamespace, type TestNamespace, testEnv } from '@tally-ipam/testenv/vitest';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asKubeApiError } from '../src/client/index.js';
import {
  type AdmissionRequest,
  allowed,
  denied,
  validatingHandler,
  validatingWebhookConfiguration,
  WebhookServer,
} from '../src/webhook/index.js';
import { ManualClock } from './fixtures/core-manual-clock.js';
import { waitFor } from './fixtures/core-wait.js';
import { type CertDir, createCertDir, createTestCA, issueServingPair, type TestCA } from './fixtures/webhook-certs.js';
import { listeningPort } from './fixtures/webhook-client.js';
import { eventually } from './fixtures/webhook-poll.js';
import { type HeldConnection, seriesValue, slowBody, statusOf } from './fixtures/webhook-raw.js';
import {
  MAX_WIDGET_SIZE,
  WIDGET_GROUP,
  WIDGET_PLURAL,
  WIDGET_VERSION,
  type Widget,
  widgetSchema,
} from './fixtures/webhook-widget.js';

// The tester's report end to end: with more slow-body connections than the server has concurrency slots, a create
// through the real kube-apiserver must still reach the webhook and succeed (with `failurePolicy: Fail` it failed
// with "context deadline exceeded"). The body deadline runs on a manual clock, so the slow clients are certainly
// still there while the create goes through.

const WEBHOOK_NAME = 'starved.widget.webhook-test.tally.dev';
const WEBHOOK_PATH = '/validate-webhook-test-tally-dev-v1-widget-starved';
const CRD_FIXTURE = fileURLToPath(new URL('./fixtures/webhook-widgets.crd.yaml', import.meta.url));
const NEVER_MS = 10 * 60_000;
const BODY_TIMEOUT_MS = 2_000;

describe('a validating webhook called by the real API server while slow clients hold connections', () => {
  let kc: KubeConfig;
  let objects: CustomObjectsApi;
  let namespace: TestNamespace;
  let ca: TestCA;
  let certDir: CertDir;
  let port: number;
  let configurationName: string | undefined;
  const seen: AdmissionRequest[] = [];
  const registry = new Registry();
  const clock = new ManualClock();
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  const slow: HeldConnection[] = [];

  const create = (name: string, size: number, dryRun?: 'All') =>
    objects.createNamespacedCustomObject({
      group: WIDGET_GROUP,
      version: WIDGET_VERSION,
      namespace: namespace.name,
      plural: WIDGET_PLURAL,
      body: { apiVersion: `${WIDGET_GROUP}/${WIDGET_VERSION}`, kind: 'Widget', metadata: { name }, spec: { size } },
      ...(dryRun ? { dryRun } : {}),
    });

  beforeAll(async () => {
    kc = testEnv().kubeConfig;
    objects = kc.makeApiClient(CustomObjectsApi);
    await installCRDs(kc, [CRD_FIXTURE]);
    namespace = await createTestNamespace(kc, 'webhook-starved');
    ca = await createTestCA();
    certDir = await createCertDir();
    await certDir.write(await issueServingPair(ca));
    const server = new WebhookServer({
      host: '127.0.0.1',
      port: 0,
      certDir: certDir.path,
      registry,
      logger: pino({ level: 'silent' }),
      clock,
      bodyTimeoutMs: BODY_TIMEOUT_MS,
      // Only the body deadline (on the manual clock) may end the slow clients.
      requestTimeoutMs: NEVER_MS,
      headersTimeoutMs: NEVER_MS,
    });
    server.register(
      WEBHOOK_PATH,
      validatingHandler<Widget>({
        parse: widgetSchema,
        create: (widget, request) => {
          seen.push(request);
          return widget.spec.size > MAX_WIDGET_SIZE ? denied(`spec.size ${widget.spec.size} is too big`) : allowed();
        },
      }),
    );
    running = server.start(stop.signal);
    port = await listeningPort(server);

    configurationName = `tally-webhook-starved-${namespace.name}`;
    await kc.makeApiClient(AdmissionregistrationV1Api).createValidatingWebhookConfiguration({
      body: validatingWebhookConfiguration({
        name: configurationName,
        client: { baseUrl: `https://127.0.0.1:${port}`, caBundlePem: ca.certPem },
        webhooks: [
          {
            name: WEBHOOK_NAME,
            path: WEBHOOK_PATH,
            rules: [
              {
                apiGroups: [WIDGET_GROUP],
                apiVersions: [WIDGET_VERSION],
                resources: [WIDGET_PLURAL],
                operations: ['CREATE'],
              },
            ],
            // The control plane is shared: only this test's namespace is routed to this server.
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace.name } },
            timeoutSeconds: 10,
          },
        ],
      }),
    });
    await eventually('webhook configuration in effect', async () => {
      const error = await create('probe', MAX_WIDGET_SIZE + 1, 'All').then(
        () => undefined,
        (caught: unknown) => caught,
      );
      if (!asKubeApiError(error)?.serverMessage.includes(WEBHOOK_NAME))
        throw new Error('the webhook is not called yet');
    });
  });

  afterAll(async () => {
    for (const connection of slow) connection.socket.destroy();
    if (configurationName) {
      await kc
        .makeApiClient(AdmissionregistrationV1Api)
        .deleteValidatingWebhookConfiguration({ name: configurationName })
        .catch((error: unknown) => {
          if (asKubeApiError(error)?.statusCode !== 404) throw error;
        });
    }
    stop.abort();
    await running;
    await certDir?.remove();
    await namespace?.delete();
  });

  it('admits a real create while 20 slow bodies are arriving, then cuts the slow ones off', async () => {
    const receivingBefore = await seriesValue(registry, 'controller_kit_webhook_receiving_requests');
    for (let index = 0; index < 20; index += 1) {
      slow.push(
        await slowBody(port, ca.certPem, {
          path: WEBHOOK_PATH,
          declaredBytes: 1024 * 1024,
          initialBytes: 1024,
          trickleEveryMs: 50,
        }),
      );
    }
    await waitFor(
      'all 20 slow bodies being received',
      async () => (await seriesValue(registry, 'controller_kit_webhook_receiving_requests')) === receivingBefore + 20,
    );

    await create('real', 3);
    const stored = await objects.getNamespacedCustomObject({
      group: WIDGET_GROUP,
      version: WIDGET_VERSION,
      namespace: namespace.name,
      plural: WIDGET_PLURAL,
      name: 'real',
    });
    expect(widgetSchema.parse(stored).spec.size).toBe(3);
    expect(seen.some((request) => request.name === 'real' && !request.dryRun)).toBe(true);
    expect(
      await seriesValue(registry, 'controller_runtime_webhook_requests_total', { webhook: WEBHOOK_PATH, code: '429' }),
    ).toBe(0);
    expect(slow.filter((connection) => connection.isClosed())).toHaveLength(0);

    clock.advance(BODY_TIMEOUT_MS);
    // Closed by the server (these clients never close); a client may miss its 408 only to a reset, so the server's
    // count is what is asserted exactly.
    const texts = await Promise.all(slow.map((connection) => connection.closed));
    for (const text of texts) expect([0, 408]).toContain(statusOf(text));
    expect(
      await seriesValue(registry, 'controller_runtime_webhook_requests_total', { webhook: WEBHOOK_PATH, code: '408' }),
    ).toBe(20);
  });
});
