import { X509Certificate } from 'node:crypto';
import { AdmissionregistrationV1Api, ApiextensionsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { type ControlPlane, startControlPlane } from '@tally-ipam/testenv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultManifests } from '../src/components.js';
import { applyManifests, issueServingCertificates } from '../src/install.js';
import { at, type Manifest, only } from '../src/kustomize.js';
import { defineProvider } from '../src/provider.js';
import {
  INJECT_CA_FROM_ANNOTATION,
  type IssuedServingCertificate,
  servingCertificateRequests,
  withServingCertificateSecrets,
} from '../src/serving-cert-secret.js';

// The apps' own config/ directories (read as files, as the release does; no app code is imported).
/**
 * Tally's shipped validating webhooks: one per pool kind (four), Metal3's IPPool and the in-cluster provider's two IP
 * pool and two prefix pool kinds, the last five behind their clusterctl switches.
 */
const TALLY_WEBHOOKS = 9;

const TALLY = defineProvider({
  appDir: new URL('../../../apps/ipam-controller/', import.meta.url),
  providerName: 'ipam-tally',
  imageName: 'ipam-controller',
  variablePrefix: 'TALLY_IPAM_',
});
const SIM = defineProvider({
  appDir: new URL('../../../apps/sim-infra-controller/', import.meta.url),
  providerName: 'infrastructure-sim',
  imageName: 'sim-infra-controller',
  variablePrefix: 'SIM_INFRA_',
});

const FAKE: IssuedServingCertificate = { certPem: 'CERT\n', keyPem: 'KEY\n', caPem: 'CA\n' };
const base64 = (text: string): string => Buffer.from(text).toString('base64');

/** A CRD served at two versions with a conversion webhook, as Cluster API's CRDs are. */
function convertedCrd(annotations: Record<string, string> | undefined): Manifest {
  const version = (name: string, storage: boolean) => ({
    name,
    served: true,
    storage,
    schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.tally.dev', ...(annotations ? { annotations } : {}) },
    spec: {
      group: 'example.tally.dev',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [version('v1alpha1', false), version('v1beta1', true)],
      conversion: {
        strategy: 'Webhook',
        webhook: {
          conversionReviewVersions: ['v1'],
          clientConfig: {
            service: { namespace: 'tally-system', name: 'tally-ipam-webhook-service', path: '/convert' },
          },
        },
      },
    },
  };
}

describe('servingCertificateRequests', () => {
  it("names each app's Certificate, its Secret and the webhook Service's DNS names", () => {
    expect(servingCertificateRequests(defaultManifests(TALLY))).toEqual([
      {
        namespace: 'tally-system',
        certificateName: 'tally-ipam-serving-cert',
        secretName: 'tally-ipam-webhook-service-cert',
        dnsNames: [
          'tally-ipam-webhook-service.tally-system.svc',
          'tally-ipam-webhook-service.tally-system.svc.cluster.local',
        ],
      },
    ]);
    expect(servingCertificateRequests(defaultManifests(SIM)).map((r) => r.secretName)).toEqual([
      'sim-infra-webhook-service-cert',
    ]);
  });

  it('refuses a Certificate without a secretName, naming it', () => {
    const manifests = defaultManifests(TALLY).map((m) =>
      m.kind === 'Certificate' ? { ...m, spec: { ...(m.spec as object), secretName: '' } } : m,
    );
    expect(() => servingCertificateRequests(manifests)).toThrow(
      'Certificate tally-system/tally-ipam-serving-cert: spec.secretName is not set',
    );
  });
});

describe('withServingCertificateSecrets', () => {
  const issued = new Map([['tally-system/tally-ipam-serving-cert', FAKE]]);

  it('drops Issuer and Certificate, adds the TLS Secret before the Deployment, and sets caBundle on every webhook', () => {
    const input = defaultManifests(TALLY);
    const before = structuredClone(input);
    const output = withServingCertificateSecrets(input, issued);
    expect(input).toEqual(before);
    expect(output.filter((m) => m.apiVersion.startsWith('cert-manager.io/'))).toEqual([]);
    expect(output.filter((m) => m.metadata.annotations?.[INJECT_CA_FROM_ANNOTATION] !== undefined)).toEqual([]);
    const secret = only(output, 'Secret', 'tally-ipam-webhook-service-cert');
    expect(secret).toMatchObject({
      metadata: { namespace: 'tally-system', labels: { 'cluster.x-k8s.io/provider': 'ipam-tally' } },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': base64('CERT\n'), 'tls.key': base64('KEY\n'), 'ca.crt': base64('CA\n') },
    });
    expect(output.indexOf(secret)).toBe(output.findIndex((m) => m.kind === 'Deployment') - 1);
    const configuration = only(output, 'ValidatingWebhookConfiguration');
    const webhooks = at(configuration, 'webhooks') as unknown[];
    expect(webhooks).toHaveLength(TALLY_WEBHOOKS);
    for (const webhook of webhooks) {
      expect(at(webhook, 'clientConfig', 'caBundle')).toBe(base64('CA\n'));
      expect(at(webhook, 'clientConfig', 'service', 'name')).toBe('tally-ipam-webhook-service');
    }
    // Everything else is as rendered: only the cert-manager objects are gone, one Secret is new.
    expect(output).toHaveLength(input.length - 2 + 1);
  });

  it("sets a CRD conversion webhook's caBundle and leaves CRDs without the annotation alone", () => {
    const annotated = convertedCrd({ [INJECT_CA_FROM_ANNOTATION]: 'tally-system/tally-ipam-serving-cert', keep: 'me' });
    const plain = convertedCrd(undefined);
    const output = withServingCertificateSecrets([...defaultManifests(TALLY), annotated], issued);
    const crd = output.at(-1);
    expect(crd?.metadata.annotations).toEqual({ keep: 'me' });
    expect(at(crd, 'spec', 'conversion', 'webhook', 'clientConfig', 'caBundle')).toBe(base64('CA\n'));
    expect(withServingCertificateSecrets([plain], new Map())).toEqual([plain]);
  });

  it('refuses an annotation naming a Certificate the components lack, and a Certificate not issued', () => {
    const stray = convertedCrd({ [INJECT_CA_FROM_ANNOTATION]: 'elsewhere/other-cert' });
    expect(() => withServingCertificateSecrets([...defaultManifests(TALLY), stray], issued)).toThrow(
      'CustomResourceDefinition widgets.example.tally.dev: cert-manager.io/inject-ca-from=elsewhere/other-cert names ' +
        'no Certificate of the components (they have tally-system/tally-ipam-serving-cert)',
    );
    expect(() => withServingCertificateSecrets(defaultManifests(TALLY), new Map())).toThrow(
      'no serving certificate was issued for Certificate tally-system/tally-ipam-serving-cert',
    );
  });
});

describe('the variant applied to a real API server', () => {
  // The package's only control plane, for this one test (its other files are pure): the components install
  // cluster-wide webhook configurations whose Services do not exist, which on a shared one would fail every write of
  // the kinds they cover (Tally's pools and Sim's objects) for the other files.
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane({ onProgress: (line) => process.stderr.write(`[serving-cert-secret] ${line}\n`) });
  }, 600_000);
  afterAll(async () => {
    await plane?.stop();
  });

  it("installs Tally's and Sim's components with the Secrets and caBundles of certificates for their Services", async () => {
    const kc = plane.kubeConfig();
    const simManifests = defaultManifests(SIM);
    const simIssued = await issueServingCertificates(servingCertificateRequests(simManifests));
    await applyManifests(kc, withServingCertificateSecrets(simManifests, simIssued), 'serving-cert-secret-test');
    const annotated = convertedCrd({ [INJECT_CA_FROM_ANNOTATION]: 'tally-system/tally-ipam-serving-cert' });
    const tallyManifests = defaultManifests(TALLY);
    const tallyIssued = await issueServingCertificates(servingCertificateRequests(tallyManifests));
    const variant = withServingCertificateSecrets([...tallyManifests, annotated], tallyIssued);
    await applyManifests(kc, variant, 'serving-cert-secret-test');
    const ca = tallyIssued.get('tally-system/tally-ipam-serving-cert')?.caPem ?? '';

    const secret = await kc
      .makeApiClient(CoreV1Api)
      .readNamespacedSecret({ namespace: 'tally-system', name: 'tally-ipam-webhook-service-cert' });
    expect(secret.type).toBe('kubernetes.io/tls');
    const served = new X509Certificate(Buffer.from(secret.data?.['tls.crt'] ?? '', 'base64'));
    expect(served.subjectAltName).toBe(
      'DNS:tally-ipam-webhook-service.tally-system.svc, DNS:tally-ipam-webhook-service.tally-system.svc.cluster.local',
    );
    expect(served.verify(new X509Certificate(ca).publicKey)).toBe(true);

    const configuration = await kc
      .makeApiClient(AdmissionregistrationV1Api)
      .readValidatingWebhookConfiguration({ name: 'tally-ipam-validating-webhook-configuration' });
    expect(configuration.metadata?.annotations?.[INJECT_CA_FROM_ANNOTATION]).toBeUndefined();
    expect(configuration.webhooks?.map((w) => Buffer.from(w.clientConfig.caBundle ?? '', 'base64').toString())).toEqual(
      Array(TALLY_WEBHOOKS).fill(ca),
    );
    const crd = await kc
      .makeApiClient(ApiextensionsV1Api)
      .readCustomResourceDefinition({ name: 'widgets.example.tally.dev' });
    expect(Buffer.from(crd.spec.conversion?.webhook?.clientConfig?.caBundle ?? '', 'base64').toString()).toBe(ca);

    const sim = await kc
      .makeApiClient(CoreV1Api)
      .readNamespacedSecret({ namespace: 'sim-system', name: 'sim-infra-webhook-service-cert' });
    expect(Object.keys(sim.data ?? {}).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
  });
});
