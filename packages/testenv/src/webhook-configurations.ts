import type { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { kubeRequest } from './kube-request.js';

/** Where the API server reaches a webhook server on this machine: its port on loopback, trusted through `caBundle`. */
export interface WebhookEndpoint {
  readonly port: number;
  readonly caPem: string;
}

export type WebhookConfigurationKind = 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration';

/** One admission webhook of a shipped configuration. */
export interface ShippedWebhook {
  readonly name: string;
  /** The path its server serves it at (`clientConfig.service.path`), e.g. `/validate-…-v1beta2-ipaddressclaim`. */
  readonly path: string;
}

/** A webhook configuration as a provider ships it: `clientConfig` names the in-cluster Service. */
export interface ShippedWebhookConfiguration {
  readonly kind: WebhookConfigurationKind;
  readonly name: string;
  readonly webhooks: readonly ShippedWebhook[];
  /** The manifest as shipped, every field kept. */
  readonly manifest: Readonly<Record<string, unknown>>;
}

const webhookSchema = z
  .object({
    name: z.string().min(1),
    clientConfig: z
      .object({ service: z.object({ path: z.string().startsWith('/') }).loose() })
      .loose()
      .transform((c) => c.service.path),
  })
  .loose();

const webhookConfigurationSchema = z
  .object({
    apiVersion: z.literal('admissionregistration.k8s.io/v1'),
    kind: z.enum(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']),
    metadata: z.object({ name: z.string().min(1) }).loose(),
    webhooks: z.array(webhookSchema).min(1),
  })
  .loose();

/**
 * The webhook configurations of a multi-document manifest file (`source` names it in errors). Documents of other
 * kinds (e.g. the webhook Service next to them) are left out; a webhook configuration whose webhooks do not each
 * name a Service path is an error.
 */
export function parseWebhookConfigurations(yamlText: string, source: string): ShippedWebhookConfiguration[] {
  const configurations: ShippedWebhookConfiguration[] = [];
  for (const [index, document] of parseAllDocuments(yamlText).entries()) {
    if (document.errors.length > 0) {
      throw new Error(`${source} (document ${index + 1}) is not valid YAML: ${document.errors[0]?.message ?? ''}`);
    }
    const value: unknown = document.toJS();
    const kind = z.object({ kind: z.string() }).loose().safeParse(value);
    if (!kind.success || !kind.data.kind.endsWith('WebhookConfiguration')) continue;
    const parsed = webhookConfigurationSchema.safeParse(value);
    if (!parsed.success) {
      throw new Error(
        `${source} (document ${index + 1}) is not a webhook configuration: ${z.prettifyError(parsed.error)}`,
      );
    }
    configurations.push({
      kind: parsed.data.kind,
      name: parsed.data.metadata.name,
      webhooks: parsed.data.webhooks.map((w) => ({ name: w.name, path: w.clientConfig })),
      manifest: value as Record<string, unknown>,
    });
  }
  return configurations;
}

/** `url: https://127.0.0.1:<port><path>` and the CA (a `[]byte` in Go, so base64 in JSON). */
export function loopbackClientConfig(endpoint: WebhookEndpoint, path: string): { url: string; caBundle: string } {
  return {
    url: `https://127.0.0.1:${endpoint.port}${path}`,
    caBundle: Buffer.from(endpoint.caPem, 'utf8').toString('base64'),
  };
}

/**
 * The shipped configuration pointed at a webhook server on this machine: every `clientConfig` becomes a loopback
 * `url` with the shipped path plus the CA; rules, failurePolicy, sideEffects, selectors and the rest stay as shipped.
 * Metadata is reduced to `name` (default: the shipped one), dropping e.g. cert-manager's CA injection annotation,
 * which would overwrite the `caBundle` wherever cert-manager runs.
 */
export function loopbackWebhookConfiguration(
  configuration: ShippedWebhookConfiguration,
  endpoint: WebhookEndpoint,
  name: string = configuration.name,
): Record<string, unknown> {
  const manifest = structuredClone(configuration.manifest) as Record<string, unknown> & {
    webhooks: Array<Record<string, unknown>>;
  };
  manifest.metadata = { name };
  manifest.webhooks = manifest.webhooks.map((webhook, index) => {
    const path = configuration.webhooks[index]?.path;
    if (path === undefined) throw new Error(`webhook ${index} of ${configuration.name} has no path`);
    return { ...webhook, clientConfig: loopbackClientConfig(endpoint, path) };
  });
  return manifest;
}

export function webhookConfigurationPath(kind: WebhookConfigurationKind, name: string): string {
  const plural =
    kind === 'MutatingWebhookConfiguration' ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations';
  return `/apis/admissionregistration.k8s.io/v1/${plural}/${encodeURIComponent(name)}`;
}

/** Throws, naming `what` and the response, unless the status is 2xx or one of `allowed`. */
export async function expectSuccess(
  what: string,
  response: Promise<{ status: number; body: string }>,
  allowed: readonly number[] = [],
): Promise<void> {
  const { status, body } = await response;
  if ((status < 200 || status >= 300) && !allowed.includes(status)) {
    throw new Error(`${what} failed with HTTP ${status}: ${body.slice(0, 1_000)}`);
  }
}

export interface RegisterWebhooksOptions {
  /** Field manager of the server-side apply. */
  readonly fieldManager: string;
  /** The name to register it under; defaults to the shipped one. */
  readonly name?: string;
}

/**
 * Server-side applies `loopbackWebhookConfiguration(configuration, endpoint)` (forcing ownership, so a rerun against
 * the same cluster takes it over). Returns the registered name. The API server picks a configuration up
 * asynchronously: callers wait until a request actually reaches the webhook.
 */
export async function registerLoopbackWebhooks(
  kc: KubeConfig,
  configuration: ShippedWebhookConfiguration,
  endpoint: WebhookEndpoint,
  options: RegisterWebhooksOptions,
): Promise<string> {
  const name = options.name ?? configuration.name;
  const query = `fieldManager=${encodeURIComponent(options.fieldManager)}&force=true`;
  await expectSuccess(
    `applying ${configuration.kind} ${name}`,
    kubeRequest(kc, {
      method: 'PATCH',
      path: `${webhookConfigurationPath(configuration.kind, name)}?${query}`,
      body: JSON.stringify(loopbackWebhookConfiguration(configuration, endpoint, name)),
      contentType: 'application/apply-patch+yaml',
    }),
  );
  return name;
}

/** Deletes a webhook configuration; one that is already gone is fine. */
export async function deleteWebhookConfiguration(
  kc: KubeConfig,
  kind: WebhookConfigurationKind,
  name: string,
): Promise<void> {
  await expectSuccess(
    `deleting ${kind} ${name}`,
    kubeRequest(kc, { method: 'DELETE', path: webhookConfigurationPath(kind, name) }),
    [404],
  );
}

/** The texts of a `Warning` response header (`299 - "text"`, several joined by ", "). */
export function warningTexts(header: string | undefined): string[] {
  if (!header) return [];
  return [...header.matchAll(/\d{3} \S+ "((?:[^"\\]|\\.)*)"/g)].map((match) =>
    (match[1] ?? '').replace(/\\(.)/g, '$1'),
  );
}
