/**
 * The install variant without cert-manager: a components file's cert-manager objects (`Issuer`, `Certificate`) and
 * CA-injection annotations replaced by what cert-manager would have produced — the serving certificate Secret the
 * Deployment mounts (named as the Certificate's `secretName`) and its CA as `caBundle` on every webhook configuration
 * and CRD conversion webhook that asked for injection. The default install stays cert-manager's; this variant is for
 * clusters without it (e.g. a kind cluster that cannot pull cert-manager's images), with certificates from the user.
 */
import { isRecord, type Manifest } from './kustomize.js';

/** The annotation cert-manager's CA injector reads: `<namespace>/<Certificate name>`. */
export const INJECT_CA_FROM_ANNOTATION = 'cert-manager.io/inject-ca-from';
const CERT_MANAGER_GROUP = 'cert-manager.io';
const CERT_MANAGER_KINDS: ReadonlySet<string> = new Set(['Issuer', 'ClusterIssuer', 'Certificate']);
const WEBHOOK_CONFIGURATION_KINDS: ReadonlySet<string> = new Set([
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
]);

/** A cert-manager `Certificate` of the components: what a serving certificate must be issued for. */
export interface ServingCertificateRequest {
  readonly namespace: string;
  /** The Certificate's name, as the injection annotations name it. */
  readonly certificateName: string;
  /** The Secret the Deployment mounts; the variant creates it under this name. */
  readonly secretName: string;
  readonly dnsNames: readonly string[];
}

/** A serving certificate for a request, PEM-encoded, and the CA that signed it. */
export interface IssuedServingCertificate {
  readonly certPem: string;
  readonly keyPem: string;
  readonly caPem: string;
}

function isCertManager(manifest: Manifest): boolean {
  return manifest.apiVersion.startsWith(`${CERT_MANAGER_GROUP}/`) && CERT_MANAGER_KINDS.has(manifest.kind);
}

function certificateKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

function describe(manifest: Manifest): string {
  const namespace = manifest.metadata.namespace;
  return `${manifest.kind} ${namespace ? `${namespace}/` : ''}${manifest.metadata.name}`;
}

/** Every cert-manager `Certificate` of the components; throws naming one without a namespace, secret or DNS name. */
export function servingCertificateRequests(manifests: readonly Manifest[]): ServingCertificateRequest[] {
  return manifests
    .filter((manifest) => isCertManager(manifest) && manifest.kind === 'Certificate')
    .map((certificate) => {
      const spec = isRecord(certificate.spec) ? certificate.spec : {};
      const namespace = certificate.metadata.namespace;
      const secretName = spec.secretName;
      const dnsNames = Array.isArray(spec.dnsNames) ? spec.dnsNames.filter((n) => typeof n === 'string') : [];
      if (!namespace) throw new Error(`${describe(certificate)}: metadata.namespace is not set`);
      if (typeof secretName !== 'string' || secretName === '') {
        throw new Error(`${describe(certificate)}: spec.secretName is not set`);
      }
      if (dnsNames.length === 0) throw new Error(`${describe(certificate)}: spec.dnsNames is empty`);
      return { namespace, certificateName: certificate.metadata.name, secretName, dnsNames };
    });
}

function withoutInjectionAnnotation(manifest: Manifest): Manifest {
  const { [INJECT_CA_FROM_ANNOTATION]: _injected, ...annotations } = manifest.metadata.annotations ?? {};
  const { annotations: _all, ...metadata } = manifest.metadata;
  return {
    ...manifest,
    metadata: Object.keys(annotations).length > 0 ? { ...metadata, annotations } : metadata,
  };
}

function setWebhookCaBundles(manifest: Manifest, caBundle: string): Manifest {
  const webhooks = Array.isArray(manifest.webhooks) ? manifest.webhooks : [];
  return {
    ...manifest,
    webhooks: webhooks.map((webhook, index) => {
      if (!isRecord(webhook) || !isRecord(webhook.clientConfig)) {
        throw new Error(`${describe(manifest)}: webhooks[${index}] has no clientConfig`);
      }
      return { ...webhook, clientConfig: { ...webhook.clientConfig, caBundle } };
    }),
  };
}

function setConversionCaBundle(manifest: Manifest, caBundle: string): Manifest {
  const spec = isRecord(manifest.spec) ? manifest.spec : {};
  const conversion = isRecord(spec.conversion) ? spec.conversion : undefined;
  const webhook = conversion && isRecord(conversion.webhook) ? conversion.webhook : undefined;
  // A CRD annotated without a conversion webhook (e.g. only one version served) has nothing to inject into.
  if (conversion?.strategy !== 'Webhook' || !webhook) return manifest;
  if (!isRecord(webhook.clientConfig)) {
    throw new Error(`${describe(manifest)}: spec.conversion.webhook has no clientConfig`);
  }
  return {
    ...manifest,
    spec: {
      ...spec,
      conversion: { ...conversion, webhook: { ...webhook, clientConfig: { ...webhook.clientConfig, caBundle } } },
    },
  };
}

/**
 * The components without cert-manager: `Issuer`/`Certificate` objects dropped, one `kubernetes.io/tls` Secret per
 * Certificate (its `secretName`, with `tls.crt`, `tls.key` and `ca.crt`) placed before the first Deployment (the
 * order kustomize gives Secrets, so the Pod finds its volume at once), and every
 * object that carried `cert-manager.io/inject-ca-from` given the named Certificate's CA as `caBundle` (each webhook of
 * a webhook configuration; a CRD's conversion webhook) with the annotation removed. `issued` holds a certificate per
 * request of `servingCertificateRequests`, keyed `<namespace>/<Certificate name>`. Pure: the input is not changed.
 * Throws naming the object when an annotation names a Certificate the components do not contain, or one not issued.
 */
export function withServingCertificateSecrets(
  manifests: readonly Manifest[],
  issued: ReadonlyMap<string, IssuedServingCertificate>,
): Manifest[] {
  const requests = new Map(
    servingCertificateRequests(manifests).map((request) => [
      certificateKey(request.namespace, request.certificateName),
      request,
    ]),
  );
  for (const key of requests.keys()) {
    if (!issued.has(key)) throw new Error(`no serving certificate was issued for Certificate ${key}`);
  }
  const result: Manifest[] = [];
  const secrets: Manifest[] = [];
  for (const manifest of manifests) {
    if (isCertManager(manifest)) {
      if (manifest.kind !== 'Certificate') continue;
      const key = certificateKey(manifest.metadata.namespace ?? '', manifest.metadata.name);
      const request = requests.get(key);
      const certificate = issued.get(key);
      if (!request || !certificate) throw new Error(`no serving certificate was issued for Certificate ${key}`);
      const labels = manifest.metadata.labels;
      secrets.push({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: request.secretName, namespace: request.namespace, ...(labels ? { labels } : {}) },
        type: 'kubernetes.io/tls',
        data: {
          'tls.crt': Buffer.from(certificate.certPem).toString('base64'),
          'tls.key': Buffer.from(certificate.keyPem).toString('base64'),
          'ca.crt': Buffer.from(certificate.caPem).toString('base64'),
        },
      });
      continue;
    }
    const injectFrom = manifest.metadata.annotations?.[INJECT_CA_FROM_ANNOTATION];
    if (injectFrom === undefined) {
      result.push(manifest);
      continue;
    }
    if (!requests.has(injectFrom)) {
      throw new Error(
        `${describe(manifest)}: ${INJECT_CA_FROM_ANNOTATION}=${injectFrom} names no Certificate of the components ` +
          `(they have ${[...requests.keys()].join(', ') || 'none'})`,
      );
    }
    const caBundle = Buffer.from(issued.get(injectFrom)?.caPem ?? '').toString('base64');
    const stripped = withoutInjectionAnnotation(manifest);
    if (WEBHOOK_CONFIGURATION_KINDS.has(manifest.kind)) result.push(setWebhookCaBundles(stripped, caBundle));
    else if (manifest.kind === 'CustomResourceDefinition') result.push(setConversionCaBundle(stripped, caBundle));
    else throw new Error(`${describe(manifest)}: ${INJECT_CA_FROM_ANNOTATION} on a kind cert-manager does not inject`);
  }
  const firstDeployment = result.findIndex((manifest) => manifest.kind === 'Deployment');
  result.splice(firstDeployment >= 0 ? firstDeployment : result.length, 0, ...secrets);
  return result;
}
