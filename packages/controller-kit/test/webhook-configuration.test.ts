import { AdmissionregistrationV1Api } from '@kubernetes/client-node';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { describe, expect, it } from 'vitest';
import { CERT_MANAGER_INJECT_CA_FROM } from '../src/webhook/configuration.js';
import { type ValidatingWebhookSpec, validatingWebhookConfiguration } from '../src/webhook/index.js';
import { createTestCA } from './fixtures/webhook-certs.js';

const poolWebhook: ValidatingWebhookSpec = {
  name: 'validation.tallyippool.ipam.tally.dev',
  path: '/validate-ipam-tally-dev-v1alpha1-tallyippool',
  rules: [
    {
      apiGroups: ['ipam.tally.dev'],
      apiVersions: ['v1alpha1'],
      resources: ['tallyippools'],
      operations: ['CREATE', 'UPDATE', 'DELETE'],
    },
  ],
};

describe('validatingWebhookConfiguration', () => {
  it('builds the in-cluster form with the cert-manager CA injection annotation', () => {
    const configuration = validatingWebhookConfiguration({
      name: 'tally-ipam-validating-webhook-configuration',
      labels: { 'cluster.x-k8s.io/provider': 'ipam-tally' },
      client: {
        service: { namespace: 'tally-ipam-system', name: 'tally-ipam-webhook-service' },
        certificate: { namespace: 'tally-ipam-system', name: 'tally-ipam-serving-cert' },
      },
      webhooks: [poolWebhook],
    });
    expect(configuration).toEqual({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: {
        name: 'tally-ipam-validating-webhook-configuration',
        labels: { 'cluster.x-k8s.io/provider': 'ipam-tally' },
        annotations: { [CERT_MANAGER_INJECT_CA_FROM]: 'tally-ipam-system/tally-ipam-serving-cert' },
      },
      webhooks: [
        {
          name: 'validation.tallyippool.ipam.tally.dev',
          clientConfig: {
            service: {
              namespace: 'tally-ipam-system',
              name: 'tally-ipam-webhook-service',
              path: '/validate-ipam-tally-dev-v1alpha1-tallyippool',
              port: 443,
            },
          },
          rules: [
            {
              apiGroups: ['ipam.tally.dev'],
              apiVersions: ['v1alpha1'],
              resources: ['tallyippools'],
              operations: ['CREATE', 'UPDATE', 'DELETE'],
              scope: '*',
            },
          ],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          failurePolicy: 'Fail',
          matchPolicy: 'Equivalent',
          timeoutSeconds: 10,
        },
      ],
    });
  });

  it('builds the url form with a base64 caBundle and no annotation', async () => {
    const ca = await createTestCA();
    const configuration = validatingWebhookConfiguration({
      name: 'tally-local',
      client: { baseUrl: 'https://127.0.0.1:9443', caBundlePem: ca.certPem },
      webhooks: [{ ...poolWebhook, timeoutSeconds: 5, objectSelector: { matchLabels: { team: 'a' } } }],
    });
    expect(configuration.metadata).toEqual({ name: 'tally-local' });
    const [webhook] = configuration.webhooks ?? [];
    expect(webhook?.clientConfig).toEqual({
      url: 'https://127.0.0.1:9443/validate-ipam-tally-dev-v1alpha1-tallyippool',
      caBundle: Buffer.from(ca.certPem).toString('base64'),
    });
    expect(webhook?.timeoutSeconds).toBe(5);
    expect(webhook?.objectSelector).toEqual({ matchLabels: { team: 'a' } });
  });

  it('rejects names, paths, timeouts and URLs the API server would refuse, saying which', () => {
    const url = { baseUrl: 'https://127.0.0.1:9443', caBundlePem: '-----BEGIN CERTIFICATE-----\n...' };
    const build = (spec: Partial<ValidatingWebhookSpec>, client: typeof url = url) =>
      validatingWebhookConfiguration({ name: 'x', client, webhooks: [{ ...poolWebhook, ...spec }] });
    expect(() => build({ name: 'pool.tally' })).toThrow('webhook name "pool.tally" must be fully qualified');
    expect(() => build({ path: 'validate' })).toThrow('path "validate" must start with "/"');
    expect(() => build({ timeoutSeconds: 31 })).toThrow('timeoutSeconds must be an integer from 1 to 30, got 31');
    expect(() => build({ rules: [] })).toThrow('at least one rule is needed');
    expect(() => build({}, { ...url, baseUrl: 'http://127.0.0.1:9443' })).toThrow('must use https');
    expect(() => build({}, { ...url, baseUrl: 'https://127.0.0.1:9443/hooks' })).toThrow(
      'paths come from each webhook',
    );
    expect(() => build({}, { ...url, caBundlePem: 'not a pem' })).toThrow('must hold at least one PEM certificate');
    expect(() =>
      validatingWebhookConfiguration({ name: 'x', client: url, webhooks: [poolWebhook, poolWebhook] }),
    ).toThrow('is used twice in x');
  });

  it('produces objects the API server accepts in both modes (dry run)', async () => {
    const admission = testEnv().kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    const ca = await createTestCA();
    for (const configuration of [
      validatingWebhookConfiguration({
        name: 'tally-webhook-dry-run-service',
        client: {
          service: { namespace: 'tally-ipam-system', name: 'tally-ipam-webhook-service', port: 9443 },
          certificate: { namespace: 'tally-ipam-system', name: 'tally-ipam-serving-cert' },
        },
        webhooks: [poolWebhook],
      }),
      validatingWebhookConfiguration({
        name: 'tally-webhook-dry-run-url',
        client: { baseUrl: 'https://127.0.0.1:9443', caBundlePem: ca.certPem },
        webhooks: [poolWebhook],
      }),
    ]) {
      const created = await admission.createValidatingWebhookConfiguration({ body: configuration, dryRun: 'All' });
      expect(created.webhooks?.[0]).toMatchObject({
        name: poolWebhook.name,
        sideEffects: 'None',
        failurePolicy: 'Fail',
        matchPolicy: 'Equivalent',
        admissionReviewVersions: ['v1'],
        timeoutSeconds: 10,
      });
      expect(created.webhooks?.[0]?.clientConfig).toEqual(configuration.webhooks?.[0]?.clientConfig);
      expect(created.metadata?.annotations).toEqual(configuration.metadata?.annotations);
    }
  });
});
