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
import { type CertDir, createCertDir, createTestCA, issueServingPair, type TestCA } from './fixtures/webhook-certs.js';
import { admissionReview, listeningPort, sendToWebhook } from './fixtures/webhook-client.js';
import { eventually } from './fixtures/webhook-poll.js';
import {
  MAX_WIDGET_SIZE,
  PROTECTED_ANNOTATION,
  WIDGET_GROUP,
  WIDGET_PLURAL,
  WIDGET_VERSION,
  type Widget,
  widgetSchema,
} from './fixtures/webhook-widget.js';

const WEBHOOK_NAME = 'validation.widget.webhook-test.tally.dev';
const WEBHOOK_PATH = '/validate-webhook-test-tally-dev-v1-widget';
const CRD_FIXTURE = fileURLToPath(new URL('./fixtures/webhook-widgets.crd.yaml', import.meta.url));

/** The texts of a `Warning` response header (`299 - "text"`, several joined by ", "), unescaped. */
function parseWarningHeader(header: string | undefined): string[] {
  if (!header) return [];
  return [...header.matchAll(/\d{3} \S+ "((?:[^"\\]|\\.)*)"/g)].map((match) =>
    (match[1] ?? '').replace(/\\(.)/g, '$1'),
  );
}

function widget(name: string, spec: Record<string, unknown>, annotations?: Record<string, string>): object {
  return {
    apiVersion: `${WIDGET_GROUP}/${WIDGET_VERSION}`,
    kind: 'Widget',
    metadata: { name, ...(annotations ? { annotations } : {}) },
    spec,
  };
}

/** The rules under test: a size limit on create, a warning on repaint, protected widgets cannot be deleted. */
function widgetWebhook(seen: AdmissionRequest[]) {
  return validatingHandler<Widget>({
    parse: widgetSchema,
    create: (object, request) => {
      seen.push(request);
      if (object.spec.color === 'explode') {
        throw new Error(`widget inventory lookup failed for ${object.metadata.name}: connection reset`);
      }
      return object.spec.size > MAX_WIDGET_SIZE
        ? denied(`spec.size ${object.spec.size} exceeds the limit of ${MAX_WIDGET_SIZE}`)
        : allowed();
    },
    update: (object, oldObject, request) => {
      seen.push(request);
      const oldColor = oldObject.spec.color ?? 'grey';
      const newColor = object.spec.color ?? 'grey';
      return oldColor === newColor
        ? allowed()
        : allowed([
            `spec.color changed from ${oldColor} to ${newColor}; repainting "takes" a while`,
            // The API server would drop this one for its newline; the server sends it on one line.
            `repaint queue:\n\t${object.metadata.name}`,
          ]);
    },
    delete: (oldObject, request) => {
      seen.push(request);
      return oldObject.metadata.annotations?.[PROTECTED_ANNOTATION] === 'true'
        ? denied(
            `widget ${oldObject.metadata.name} is protected: remove the ${PROTECTED_ANNOTATION} annotation first`,
            {
              code: 400,
              reason: 'BadRequest',
            },
          )
        : allowed();
    },
  });
}

describe('validating webhook called by the real API server', () => {
  let kc: KubeConfig;
  let objects: CustomObjectsApi;
  let namespace: TestNamespace;
  let ca: TestCA;
  let certDir: CertDir;
  let port: number;
  let configurationName: string;
  const seen: AdmissionRequest[] = [];
  const registry = new Registry();
  const stop = new AbortController();
  let running: Promise<void> | undefined;

  const create = (body: object, dryRun?: 'All') =>
    objects.createNamespacedCustomObject({
      group: WIDGET_GROUP,
      version: WIDGET_VERSION,
      namespace: namespace.name,
      plural: WIDGET_PLURAL,
      body,
      ...(dryRun ? { dryRun } : {}),
    });
  const read = async (name: string): Promise<Widget> =>
    widgetSchema.parse(
      await objects.getNamespacedCustomObject({
        group: WIDGET_GROUP,
        version: WIDGET_VERSION,
        namespace: namespace.name,
        plural: WIDGET_PLURAL,
        name,
      }),
    );
  const remove = (name: string) =>
    objects.deleteNamespacedCustomObject({
      group: WIDGET_GROUP,
      version: WIDGET_VERSION,
      namespace: namespace.name,
      plural: WIDGET_PLURAL,
      name,
    });
  /** The API server's error for `action`, which must fail. */
  const refusal = async (action: Promise<unknown>) => {
    const error = await action.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    const apiError = asKubeApiError(error);
    if (!apiError) throw new Error(`expected the API server to refuse the request, got ${String(error)}`);
    return apiError;
  };

  beforeAll(async () => {
    kc = testEnv().kubeConfig;
    objects = kc.makeApiClient(CustomObjectsApi);
    await installCRDs(kc, [CRD_FIXTURE]);
    namespace = await createTestNamespace(kc, 'webhook');

    ca = await createTestCA();
    certDir = await createCertDir();
    await certDir.write(await issueServingPair(ca));
    const server = new WebhookServer({
      host: '127.0.0.1',
      port: 0,
      certDir: certDir.path,
      registry,
      logger: pino({ level: 'silent' }),
    });
    server.register(WEBHOOK_PATH, widgetWebhook(seen));
    running = server.start(stop.signal);
    port = await listeningPort(server);

    configurationName = `tally-webhook-test-${namespace.name}`;
    const configuration = validatingWebhookConfiguration({
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
              operations: ['CREATE', 'UPDATE', 'DELETE'],
            },
          ],
          // The control plane is shared: only this test's namespace is routed to this server.
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace.name } },
          timeoutSeconds: 10,
        },
      ],
    });
    await kc.makeApiClient(AdmissionregistrationV1Api).createValidatingWebhookConfiguration({ body: configuration });

    // The API server picks new configurations up asynchronously; a dry-run create persists nothing while we wait.
    await eventually('webhook configuration in effect', async () => {
      const error = await refusal(create(widget('probe', { size: MAX_WIDGET_SIZE + 1 }), 'All'));
      if (!error.serverMessage.includes(WEBHOOK_NAME)) throw error;
    });
  });

  afterAll(async () => {
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

  it('refuses a create that breaks the rule, with the handler message', async () => {
    const error = await refusal(create(widget('too-big', { size: 12 })));
    expect(error.statusCode).toBe(403);
    expect(error.reason).toBe('Forbidden');
    expect(error.serverMessage).toBe(
      `admission webhook "${WEBHOOK_NAME}" denied the request: spec.size 12 exceeds the limit of ${MAX_WIDGET_SIZE}`,
    );
    expect(asKubeApiError(await read('too-big').catch((caught: unknown) => caught))?.statusCode).toBe(404);
  });

  it('hands the handler the typed request the API server sent', async () => {
    await create(widget('typed', { size: 3, color: 'red' }));
    const request = seen.find((entry) => entry.operation === 'CREATE' && entry.name === 'typed');
    expect(request).toMatchObject({
      operation: 'CREATE',
      namespace: namespace.name,
      name: 'typed',
      dryRun: false,
      kind: { group: WIDGET_GROUP, version: WIDGET_VERSION, kind: 'Widget' },
      resource: { group: WIDGET_GROUP, version: WIDGET_VERSION, resource: WIDGET_PLURAL },
      userInfo: { username: 'tally-testenv-admin' },
      object: { spec: { size: 3, color: 'red' } },
    });
    expect(request?.oldObject).toBeUndefined();
    expect(seen.some((entry) => entry.name === 'probe' && entry.dryRun)).toBe(true);
  });

  it('returns the handler warnings of an allowed update to the client', async () => {
    await create(widget('repaint', { size: 2, color: 'red' }));
    const current = await read('repaint');
    const answer = await objects.replaceNamespacedCustomObjectWithHttpInfo({
      group: WIDGET_GROUP,
      version: WIDGET_VERSION,
      namespace: namespace.name,
      plural: WIDGET_PLURAL,
      name: 'repaint',
      body: { ...current, spec: { ...current.spec, color: 'blue' } },
    });
    expect(answer.httpStatusCode).toBe(200);
    expect(parseWarningHeader(answer.headers.warning)).toEqual([
      'spec.color changed from red to blue; repainting "takes" a while',
      'repaint queue: repaint',
    ]);
    expect((await read('repaint')).spec.color).toBe('blue');
  });

  it('lets the delete handler refuse a protected widget and allow it once unprotected', async () => {
    await create(widget('keeper', { size: 1 }, { [PROTECTED_ANNOTATION]: 'true' }));
    const error = await refusal(remove('keeper'));
    expect(error.statusCode).toBe(400);
    expect(error.serverMessage).toBe(
      `admission webhook "${WEBHOOK_NAME}" denied the request: widget keeper is protected: remove the ${PROTECTED_ANNOTATION} annotation first`,
    );
    expect((await read('keeper')).metadata.name).toBe('keeper');

    const current = await read('keeper');
    await objects.replaceNamespacedCustomObject({
      group: WIDGET_GROUP,
      version: WIDGET_VERSION,
      namespace: namespace.name,
      plural: WIDGET_PLURAL,
      name: 'keeper',
      body: { ...current, metadata: { ...current.metadata, annotations: {} } },
    });
    await remove('keeper');
    expect(asKubeApiError(await read('keeper').catch((caught: unknown) => caught))?.statusCode).toBe(404);
    expect(seen.filter((entry) => entry.operation === 'DELETE' && entry.name === 'keeper')).toHaveLength(2);
  });

  it('turns a handler that throws into a denial carrying the error message', async () => {
    const error = await refusal(create(widget('boom', { size: 1, color: 'explode' })));
    expect(error.statusCode).toBe(500);
    expect(error.serverMessage).toBe(
      `admission webhook "${WEBHOOK_NAME}" denied the request: widget inventory lookup failed for boom: connection reset`,
    );
  });

  it('denies an object its schema rejects, naming the field path and value', async () => {
    const error = await refusal(create(widget('odd', { size: 'big', color: 7 })));
    expect(error.statusCode).toBe(422);
    expect(error.serverMessage).toContain(
      `admission webhook "${WEBHOOK_NAME}" denied the request: Widget.${WIDGET_GROUP} "odd" is invalid:`,
    );
    expect(error.serverMessage).toContain('spec.size: Invalid value: "big"');
    expect(error.serverMessage).toContain('spec.color: Invalid value: 7');
  });

  it('answers a malformed AdmissionReview posted directly with 400', async () => {
    const review = admissionReview({ operation: 'MERGE' });
    const answer = await sendToWebhook({ port, path: WEBHOOK_PATH, caPem: ca.certPem, body: JSON.stringify(review) });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      kind: 'Status',
      code: 400,
      message: expect.stringContaining('request.operation: Invalid value: "MERGE"'),
    });
  });

  it('records the API server calls in the controller-runtime webhook series', async () => {
    const requests = await registry.getSingleMetric('controller_runtime_webhook_requests_total')?.get();
    const served = requests?.values.find(
      (value) => value.labels.webhook === WEBHOOK_PATH && value.labels.code === '200',
    );
    expect(served?.value).toBeGreaterThanOrEqual(seen.length);
    const inFlight = await registry.getSingleMetric('controller_runtime_webhook_requests_in_flight')?.get();
    expect(inFlight?.values.find((value) => value.labels.webhook === WEBHOOK_PATH)?.value).toBe(0);
  });
});
