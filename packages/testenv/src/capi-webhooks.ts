import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { capiCoreConfigDir } from './capi.js';
import { kubeRequest } from './kube-request.js';
import {
  deleteWebhookConfiguration,
  expectSuccess,
  loopbackWebhookConfiguration,
  parseWebhookConfigurations,
  registerLoopbackWebhooks,
  type ShippedWebhook,
  type ShippedWebhookConfiguration,
  type WebhookEndpoint,
} from './webhook-configurations.js';

export type { WebhookEndpoint } from './webhook-configurations.js';

/** The field manager of the webhook configurations and CRD conversion patches made for the Cluster API manager. */
export const CAPI_WEBHOOK_FIELD_MANAGER = 'tally-testenv-capi-manager';

/**
 * kustomize's `namePrefix: capi-` (config/default) gives the deployed configurations these names; using them means a
 * test sees what a `clusterctl init` cluster has.
 */
export const CAPI_WEBHOOK_CONFIGURATION_NAMES = {
  mutating: 'capi-mutating-webhook-configuration',
  validating: 'capi-validating-webhook-configuration',
} as const;

const conversionPatchSchema = z.object({
  metadata: z.object({ name: z.string().min(1) }).loose(),
  spec: z.object({
    conversion: z.object({
      strategy: z.literal('Webhook'),
      webhook: z
        .object({
          conversionReviewVersions: z.array(z.string()).min(1),
          clientConfig: z.object({ service: z.object({ path: z.string().startsWith('/') }).loose() }).loose(),
        })
        .loose(),
    }),
  }),
});

/** One admission webhook of Cluster API's `config/webhook/manifests.yaml`. */
export type CapiWebhook = ShippedWebhook;

/** A webhook configuration of Cluster API, under its deployed name (`capi-…`). */
export type CapiWebhookConfiguration = ShippedWebhookConfiguration;

/** A CRD whose conversion Cluster API serves (from `config/crd/patches/webhook_in_*.yaml`). */
export interface CapiConversion {
  readonly crdName: string;
  readonly conversionReviewVersions: readonly string[];
  /** Always `/convert` upstream. */
  readonly path: string;
}

/**
 * The webhook configurations of a Cluster API release (`<core config>/webhook/manifests.yaml`; default
 * `clusterApiVersion()`).
 */
export async function readCapiWebhookConfigurations(version?: string): Promise<CapiWebhookConfiguration[]> {
  const file = join(await capiCoreConfigDir(version), 'webhook', 'manifests.yaml');
  const configurations = parseWebhookConfigurations(await readFile(file, 'utf8'), file).map((configuration) => ({
    ...configuration,
    name:
      configuration.kind === 'MutatingWebhookConfiguration'
        ? CAPI_WEBHOOK_CONFIGURATION_NAMES.mutating
        : CAPI_WEBHOOK_CONFIGURATION_NAMES.validating,
  }));
  if (configurations.length !== 2) {
    throw new Error(
      `expected one mutating and one validating webhook configuration in ${file}, found ${configurations.length}`,
    );
  }
  return configurations;
}

/** The CRDs a Cluster API release's kustomization switches to webhook conversion (default `clusterApiVersion()`). */
export async function readCapiConversions(version?: string): Promise<CapiConversion[]> {
  const dir = join(await capiCoreConfigDir(version), 'crd', 'patches');
  const files = (await readdir(dir)).filter((name) => /^webhook_in_.*\.yaml$/.test(name)).sort();
  const conversions: CapiConversion[] = [];
  for (const name of files) {
    const file = join(dir, name);
    const parsed = conversionPatchSchema.safeParse(parseAllDocuments(await readFile(file, 'utf8'))[0]?.toJS());
    if (!parsed.success) {
      throw new Error(`${file} is not a CRD conversion patch: ${z.prettifyError(parsed.error)}`);
    }
    conversions.push({
      crdName: parsed.data.metadata.name,
      conversionReviewVersions: parsed.data.spec.conversion.webhook.conversionReviewVersions,
      path: parsed.data.spec.conversion.webhook.clientConfig.service.path,
    });
  }
  if (conversions.length === 0) throw new Error(`no webhook_in_*.yaml conversion patches in ${dir}`);
  return conversions;
}

/** The configuration with every `clientConfig.service` replaced by a loopback `url` and the CA, under its `capi-` name. */
export function rewriteWebhookConfiguration(
  configuration: CapiWebhookConfiguration,
  endpoint: WebhookEndpoint,
): Record<string, unknown> {
  return loopbackWebhookConfiguration(configuration, endpoint);
}

/**
 * The Service Cluster API's components name in every CRD's conversion (`config/crd/patches/webhook_in_*.yaml`, after
 * kustomize's `namespace: capi-system` and `namePrefix: capi-`).
 */
export const CAPI_WEBHOOK_SERVICE = { namespace: 'capi-system', name: 'capi-webhook-service' } as const;

/** The DNS name the API server verifies the webhook certificate against when it calls through the Service. */
export const CAPI_WEBHOOK_SERVICE_DNS_NAME = `${CAPI_WEBHOOK_SERVICE.name}.${CAPI_WEBHOOK_SERVICE.namespace}.svc`;

/** The API path of `CAPI_WEBHOOK_SERVICE`. */
export function capiWebhookServicePath(): string {
  const { namespace, name } = CAPI_WEBHOOK_SERVICE;
  return `/api/v1/namespaces/${namespace}/services/${name}`;
}

/**
 * The spec that makes `capi-system/capi-webhook-service` reach the manager on this machine: an ExternalName Service
 * for `localhost`, which the API server resolves to `https://localhost:<port of the reference>` (Endpoints and
 * EndpointSlices may not hold loopback addresses, so a selector-less Service with endpoints cannot do it).
 */
export function capiWebhookServiceSpec(endpoint: WebhookEndpoint): {
  type: 'ExternalName';
  externalName: 'localhost';
  ports: [{ name: 'webhook-server'; port: number; protocol: 'TCP' }];
} {
  return {
    type: 'ExternalName',
    externalName: 'localhost',
    ports: [{ name: 'webhook-server', port: endpoint.port, protocol: 'TCP' }],
  };
}

/** Creates `capi-system` if needed and server-side applies the Service of `capiWebhookServiceSpec`. */
export async function applyCapiWebhookService(kc: KubeConfig, endpoint: WebhookEndpoint): Promise<void> {
  const { namespace, name } = CAPI_WEBHOOK_SERVICE;
  await expectSuccess(
    `creating namespace ${namespace}`,
    kubeRequest(kc, {
      method: 'POST',
      path: '/api/v1/namespaces',
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }),
      contentType: 'application/json',
    }),
    [409],
  );
  await expectSuccess(
    `applying Service ${namespace}/${name}`,
    kubeRequest(kc, {
      method: 'PATCH',
      path: `${capiWebhookServicePath()}?fieldManager=${CAPI_WEBHOOK_FIELD_MANAGER}&force=true`,
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name, namespace },
        spec: capiWebhookServiceSpec(endpoint),
      }),
      contentType: 'application/apply-patch+yaml',
    }),
  );
}

/** The `clientConfig` of a converted CRD: the Service with the manager's port, and the CA. */
export function capiConversionClientConfig(
  conversion: CapiConversion,
  endpoint: WebhookEndpoint,
): { service: { namespace: string; name: string; path: string; port: number }; caBundle: string } {
  return {
    // The port is the manager's; clusterctl's components leave it out, so its merge patch keeps it.
    service: { ...CAPI_WEBHOOK_SERVICE, path: conversion.path, port: endpoint.port },
    caBundle: Buffer.from(endpoint.caPem, 'utf8').toString('base64'),
  };
}

/**
 * Switches one CRD to webhook conversion by the manager (a JSON merge patch: `url` is removed, everything else of
 * the CRD is kept). Returns false when the CRD is not installed.
 */
export async function patchCapiConversion(
  kc: KubeConfig,
  conversion: CapiConversion,
  endpoint: WebhookEndpoint,
): Promise<boolean> {
  const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(conversion.crdName)}`;
  const response = await kubeRequest(kc, {
    method: 'PATCH',
    path: `${path}?fieldManager=${CAPI_WEBHOOK_FIELD_MANAGER}`,
    body: JSON.stringify({
      spec: {
        conversion: {
          strategy: 'Webhook',
          webhook: {
            conversionReviewVersions: conversion.conversionReviewVersions,
            clientConfig: { url: null, ...capiConversionClientConfig(conversion, endpoint) },
          },
        },
      },
    }),
    contentType: 'application/merge-patch+json',
  });
  if (response.status === 404) return false;
  await expectSuccess(`switching CRD ${conversion.crdName} to webhook conversion`, Promise.resolve(response));
  return true;
}

/** What `registerCapiWebhooks` registered: the desired state the webhook keeper holds the cluster to. */
export interface RegisteredCapiWebhooks {
  readonly configurations: readonly CapiWebhookConfiguration[];
  /** The conversions of the CRDs that exist (and were patched). */
  readonly conversions: readonly CapiConversion[];
}

/**
 * Registers Cluster API's admission webhooks and CRD conversions with the API server, pointing at `endpoint`: the two
 * webhook configurations are server-side applied, and each CRD of `conversions` that exists gets
 * `spec.conversion.strategy: Webhook` with the manager's `/convert`. Returns what it registered.
 *
 * The conversions name the Service Cluster API's own components name (`CAPI_WEBHOOK_SERVICE`), never a `url`:
 * `clusterctl init` updates existing CRDs with a JSON merge patch, which keeps any field it does not mention, so a
 * `url` left here plus clusterctl's `service` made the CRDs invalid ("exactly one of url or service is required").
 */
export async function registerCapiWebhooks(
  kc: KubeConfig,
  endpoint: WebhookEndpoint,
  version?: string,
): Promise<RegisteredCapiWebhooks> {
  const [configurations, conversions] = await Promise.all([
    readCapiWebhookConfigurations(version),
    readCapiConversions(version),
  ]);
  for (const configuration of configurations) {
    await registerLoopbackWebhooks(kc, configuration, endpoint, { fieldManager: CAPI_WEBHOOK_FIELD_MANAGER });
  }
  await applyCapiWebhookService(kc, endpoint);
  const patched: CapiConversion[] = [];
  for (const conversion of conversions) {
    // A CRD that is not installed (a caller that installed only some groups) has nothing to convert.
    if (await patchCapiConversion(kc, conversion, endpoint)) patched.push(conversion);
  }
  return { configurations, conversions: patched };
}

/**
 * Undoes `registerCapiWebhooks`: deletes the two webhook configurations and sets the CRDs back to conversion
 * strategy `None`, so the API server stops calling a manager that is going away.
 */
export async function unregisterCapiWebhooks(kc: KubeConfig, crdNames: readonly string[]): Promise<void> {
  await deleteWebhookConfiguration(kc, 'MutatingWebhookConfiguration', CAPI_WEBHOOK_CONFIGURATION_NAMES.mutating);
  await deleteWebhookConfiguration(kc, 'ValidatingWebhookConfiguration', CAPI_WEBHOOK_CONFIGURATION_NAMES.validating);
  for (const name of crdNames) {
    await expectSuccess(
      `setting CRD ${name} back to conversion strategy None`,
      kubeRequest(kc, {
        method: 'PATCH',
        path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(name)}?fieldManager=${CAPI_WEBHOOK_FIELD_MANAGER}`,
        body: JSON.stringify({ spec: { conversion: { strategy: 'None', webhook: null } } }),
        contentType: 'application/merge-patch+json',
      }),
      [404],
    );
  }
  // Only the Service this module made: after `clusterctl init` the name may hold Cluster API's own.
  const service = await kubeRequest(kc, { method: 'GET', path: capiWebhookServicePath() });
  if (service.status === 200 && serviceSchema.parse(JSON.parse(service.body)).spec.type === 'ExternalName') {
    await expectSuccess(
      `deleting Service ${CAPI_WEBHOOK_SERVICE.namespace}/${CAPI_WEBHOOK_SERVICE.name}`,
      kubeRequest(kc, { method: 'DELETE', path: capiWebhookServicePath() }),
      [404],
    );
  }
}

const serviceSchema = z.object({ spec: z.object({ type: z.string().optional() }).loose() }).loose();
