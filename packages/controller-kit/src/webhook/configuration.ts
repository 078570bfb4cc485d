import type {
  V1LabelSelector,
  V1MatchCondition,
  V1ValidatingWebhook,
  V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import type { AdmissionOperation } from './admission-review.js';

/** Which requests a webhook sees: `apiGroups` uses `""` for the core group; `*` is a wildcard everywhere. */
export interface WebhookRule {
  readonly apiGroups: readonly string[];
  readonly apiVersions: readonly string[];
  readonly resources: readonly string[];
  readonly operations: readonly (AdmissionOperation | '*')[];
  readonly scope?: 'Cluster' | 'Namespaced' | '*';
}

export interface ValidatingWebhookSpec {
  /** Fully qualified (at least three dot-separated segments), e.g. `validation.tallyippool.ipam.tally.dev`. */
  readonly name: string;
  /** The path the handler is registered at on the `WebhookServer`. */
  readonly path: string;
  readonly rules: readonly WebhookRule[];
  readonly namespaceSelector?: V1LabelSelector;
  readonly objectSelector?: V1LabelSelector;
  readonly matchConditions?: readonly V1MatchCondition[];
  /** 1–30 s; defaults to 10 s (the API's default). */
  readonly timeoutSeconds?: number;
  /** Defaults to `Fail`: a rule that cannot be checked must not be silently skipped. */
  readonly failurePolicy?: 'Fail' | 'Ignore';
  /**
   * Defaults to `None`. `NoneOnDryRun` for a handler that records something (an Event) outside the object under
   * review, and never for a request with `dryRun`: both are the values dry-run requests are sent for.
   */
  readonly sideEffects?: 'None' | 'NoneOnDryRun';
}

/**
 * In-cluster: the API server calls the webhook Service; cert-manager's CA injector fills every `caBundle` from the
 * Certificate named in the `cert-manager.io/inject-ca-from` annotation (how CAPI providers ship their webhooks).
 */
export interface ServiceClientMode {
  readonly service: { readonly namespace: string; readonly name: string; readonly port?: number };
  readonly certificate: { readonly namespace: string; readonly name: string };
}

/** Out of cluster (local runs, tests): the API server calls `baseUrl` + path and trusts `caBundlePem`. */
export interface UrlClientMode {
  /** `https://host:port`, no path: each webhook's `path` is appended. */
  readonly baseUrl: string;
  /** PEM of the CA that signed the serving certificate. */
  readonly caBundlePem: string;
}

export interface ValidatingWebhookConfigurationOptions {
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly client: ServiceClientMode | UrlClientMode;
  readonly webhooks: readonly ValidatingWebhookSpec[];
}

export const CERT_MANAGER_INJECT_CA_FROM = 'cert-manager.io/inject-ca-from';

function checkSpec(spec: ValidatingWebhookSpec): void {
  if (spec.name.split('.').filter((segment) => segment.length > 0).length < 3) {
    throw new Error(`webhook name "${spec.name}" must be fully qualified (e.g. validation.pool.ipam.tally.dev)`);
  }
  if (!spec.path.startsWith('/')) throw new Error(`webhook ${spec.name}: path "${spec.path}" must start with "/"`);
  const timeout = spec.timeoutSeconds;
  if (timeout !== undefined && (!Number.isInteger(timeout) || timeout < 1 || timeout > 30)) {
    throw new Error(`webhook ${spec.name}: timeoutSeconds must be an integer from 1 to 30, got ${timeout}`);
  }
  if (spec.rules.length === 0) throw new Error(`webhook ${spec.name}: at least one rule is needed`);
}

function clientConfig(client: ServiceClientMode | UrlClientMode, path: string): V1ValidatingWebhook['clientConfig'] {
  if ('service' in client) {
    const { namespace, name, port } = client.service;
    return { service: { namespace, name, path, port: port ?? 443 } };
  }
  // caBundle is a []byte in Go, so it travels base64-encoded in JSON.
  return { url: `${client.baseUrl}${path}`, caBundle: Buffer.from(client.caBundlePem, 'utf8').toString('base64') };
}

function checkClient(client: ServiceClientMode | UrlClientMode): void {
  if ('service' in client) return;
  const url = new URL(client.baseUrl);
  if (url.protocol !== 'https:') throw new Error(`webhook baseUrl ${client.baseUrl} must use https`);
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || client.baseUrl.endsWith('/')) {
    throw new Error(`webhook baseUrl ${client.baseUrl} must be scheme://host:port only; paths come from each webhook`);
  }
  if (!client.caBundlePem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new Error('webhook caBundlePem must hold at least one PEM certificate');
  }
}

/**
 * Builds an `admissionregistration.k8s.io/v1` ValidatingWebhookConfiguration with the house defaults:
 * `sideEffects: None` (unless the spec says `NoneOnDryRun`), `admissionReviewVersions: ["v1"]`, `failurePolicy: Fail`,
 * `matchPolicy: Equivalent` (requests through other versions of the resource are checked too), 10 s timeout.
 */
export function validatingWebhookConfiguration(
  options: ValidatingWebhookConfigurationOptions,
): V1ValidatingWebhookConfiguration {
  checkClient(options.client);
  const names = new Set<string>();
  const webhooks = options.webhooks.map((spec): V1ValidatingWebhook => {
    checkSpec(spec);
    if (names.has(spec.name)) throw new Error(`webhook name "${spec.name}" is used twice in ${options.name}`);
    names.add(spec.name);
    return {
      name: spec.name,
      clientConfig: clientConfig(options.client, spec.path),
      rules: spec.rules.map((rule) => ({
        apiGroups: [...rule.apiGroups],
        apiVersions: [...rule.apiVersions],
        resources: [...rule.resources],
        operations: [...rule.operations],
        scope: rule.scope ?? '*',
      })),
      ...(spec.namespaceSelector ? { namespaceSelector: spec.namespaceSelector } : {}),
      ...(spec.objectSelector ? { objectSelector: spec.objectSelector } : {}),
      ...(spec.matchConditions ? { matchConditions: [...spec.matchConditions] } : {}),
      sideEffects: spec.sideEffects ?? 'None',
      admissionReviewVersions: ['v1'],
      failurePolicy: spec.failurePolicy ?? 'Fail',
      matchPolicy: 'Equivalent',
      timeoutSeconds: spec.timeoutSeconds ?? 10,
    };
  });
  const annotations =
    'service' in options.client
      ? {
          [CERT_MANAGER_INJECT_CA_FROM]: `${options.client.certificate.namespace}/${options.client.certificate.name}`,
        }
      : undefined;
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: {
      name: options.name,
      ...(options.labels ? { labels: { ...options.labels } } : {}),
      ...(annotations ? { annotations } : {}),
    },
    webhooks,
  };
}
