import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import {
  type CapiConversion,
  type CapiWebhookConfiguration,
  capiConversionClientConfig,
  capiWebhookServiceSpec,
} from './capi-webhooks.js';
import { loopbackClientConfig, loopbackWebhookConfiguration, type WebhookEndpoint } from './webhook-configurations.js';

// The webhook keeper's comparisons: pure functions of an object as the API server returns it and testenv's settings.

/*
 * Only what the keeper compares; everything else of an object is passed through untouched. The schemas stay private
 * and the parsed shapes are spelled out as interfaces, so the declarations testenv ships do not expose zod's types
 * (zod is a dependency of testenv, not a peer its users install).
 */

/** A webhook configuration as the keeper reads it. */
export interface WebhookConfigurationView {
  readonly metadata: { readonly name: string; readonly resourceVersion: string };
  readonly webhooks?: readonly { readonly name: string; readonly clientConfig: unknown }[] | null;
}

/** The webhook Service as the keeper reads it. */
export interface ServiceView {
  readonly metadata: {
    readonly name: string;
    readonly resourceVersion: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly spec: {
    readonly type?: string;
    readonly externalName?: string;
    readonly ports?: readonly { readonly name?: string; readonly port: number; readonly protocol?: string }[];
  };
}

/** A CRD as the keeper reads it: its conversion settings. */
export interface CrdView {
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly conversion?: {
      readonly strategy?: string;
      readonly webhook?: { readonly clientConfig?: Readonly<Record<string, unknown>> };
    };
  };
}

const webhookConfigurationSchema = z
  .object({
    metadata: z.object({ name: z.string(), resourceVersion: z.string() }).loose(),
    webhooks: z.array(z.object({ name: z.string(), clientConfig: z.unknown() }).loose()).nullish(),
  })
  .loose();
const desiredWebhooksSchema = z.object({ webhooks: z.array(z.object({ name: z.string() }).loose()) }).loose();

const serviceSchema = z
  .object({
    metadata: z
      .object({
        name: z.string(),
        resourceVersion: z.string(),
        labels: z.record(z.string(), z.string()).optional(),
        annotations: z.record(z.string(), z.string()).optional(),
      })
      .loose(),
    spec: z
      .object({
        type: z.string().optional(),
        externalName: z.string().optional(),
        ports: z
          .array(z.object({ name: z.string().optional(), port: z.number(), protocol: z.string().optional() }).loose())
          .optional(),
      })
      .loose(),
  })
  .loose();

const crdSchema = z
  .object({
    metadata: z.object({ name: z.string() }).loose(),
    spec: z
      .object({
        conversion: z
          .object({
            strategy: z.string().optional(),
            webhook: z
              .object({ clientConfig: z.record(z.string(), z.unknown()).optional() })
              .loose()
              .optional(),
          })
          .loose()
          .optional(),
      })
      .loose(),
  })
  .loose();

/** A webhook configuration from the API server, the fields the keeper compares checked (the rest kept). */
export function parseWebhookConfiguration(value: unknown): WebhookConfigurationView {
  return webhookConfigurationSchema.parse(value);
}

/** The webhook Service from the API server, the fields the keeper compares checked (the rest kept). */
export function parseService(value: unknown): ServiceView {
  return serviceSchema.parse(value);
}

/** A CRD from the API server, its conversion checked (the rest kept). */
export function parseCrd(value: unknown): CrdView {
  return crdSchema.parse(value);
}

/** A short account of a clientConfig for the repair log: where it pointed and whether it carried a CA. */
function describeClientConfig(config: unknown): string {
  const parsed = z
    .object({
      url: z.string().optional(),
      service: z.object({ namespace: z.string(), name: z.string(), port: z.number().optional() }).loose().optional(),
      caBundle: z.string().optional(),
    })
    .loose()
    .safeParse(config);
  if (!parsed.success) return 'an unreadable clientConfig';
  const { url, service, caBundle } = parsed.data;
  const target = url ?? (service ? `service ${service.namespace}/${service.name}:${service.port ?? 443}` : 'nothing');
  return `${target}, ${caBundle ? 'a caBundle' : 'no caBundle'}`;
}

/** The webhooks of `current` with each of ours pointed at the manager (and any missing one added), or undefined. */
export function repairedWebhooks(
  current: WebhookConfigurationView,
  configuration: CapiWebhookConfiguration,
  endpoint: WebhookEndpoint,
): { webhooks: unknown[]; found: string; changed: number } | undefined {
  const desired = desiredWebhooksSchema.parse(loopbackWebhookConfiguration(configuration, endpoint)).webhooks;
  const paths = new Map(configuration.webhooks.map((w) => [w.name, w.path]));
  const webhooks: unknown[] = [];
  let found = '';
  let changed = 0;
  for (const webhook of current.webhooks ?? []) {
    const path = paths.get(webhook.name);
    const clientConfig = path === undefined ? undefined : loopbackClientConfig(endpoint, path);
    if (clientConfig === undefined || isDeepStrictEqual(webhook.clientConfig, clientConfig)) {
      webhooks.push(webhook);
      continue;
    }
    found ||= describeClientConfig(webhook.clientConfig);
    changed++;
    webhooks.push({ ...webhook, clientConfig });
  }
  const present = new Set((current.webhooks ?? []).map((w) => w.name));
  const missing = desired.filter((w) => !present.has(w.name));
  if (changed === 0 && missing.length === 0) return undefined;
  if (missing.length > 0) found ||= `${missing.length} webhooks missing`;
  return { webhooks: [...webhooks, ...missing], found, changed: changed + missing.length };
}

/** What differs from testenv's ExternalName Service, for the log, or undefined. */
export function serviceDrift(current: ServiceView, endpoint: WebhookEndpoint): string | undefined {
  const desired = capiWebhookServiceSpec(endpoint);
  const { type, externalName, ports } = current.spec;
  const portsNow = (ports ?? []).map((p) => ({ name: p.name, port: p.port, protocol: p.protocol }));
  if (type === desired.type && externalName === desired.externalName && isDeepStrictEqual(portsNow, desired.ports)) {
    return undefined;
  }
  return `type ${type ?? 'ClusterIP'}, ports ${portsNow.map((p) => p.port).join(',') || 'none'}`;
}

/** Where the CRD's conversion points instead of the manager, for the log, or undefined. */
export function conversionDrift(
  current: CrdView,
  conversion: CapiConversion,
  endpoint: WebhookEndpoint,
): string | undefined {
  const { strategy, webhook } = current.spec.conversion ?? {};
  const desired = capiConversionClientConfig(conversion, endpoint);
  if (strategy === 'Webhook' && isDeepStrictEqual(webhook?.clientConfig, desired)) return undefined;
  return strategy === 'Webhook' ? describeClientConfig(webhook?.clientConfig) : `strategy ${strategy ?? 'None'}`;
}
