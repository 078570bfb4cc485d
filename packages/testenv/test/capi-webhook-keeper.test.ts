import { isDeepStrictEqual as isEqual } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { startCapiManager } from '../src/capi-manager.js';
import {
  CAPI_WEBHOOK_CONFIGURATION_NAMES,
  CAPI_WEBHOOK_SERVICE,
  capiWebhookServicePath,
  readCapiConversions,
  readCapiWebhookConfigurations,
} from '../src/capi-webhooks.js';
import type { ControlPlane } from '../src/control-plane.js';
import { startExternalControlPlane } from '../src/external.js';
import { kubeRequest } from '../src/kube-request.js';
import { testEnv, withTestNamespace } from '../src/vitest.js';
import { eventually, waitFor } from '../src/wait.js';
import { expectSuccess, webhookConfigurationPath } from '../src/webhook-configurations.js';

/** A bound against hangs only: on a shared 2-core machine a watch event or a reloaded configuration can take long. */
const WAIT = { timeoutMs: 120_000, intervalMs: 200 } as const;
const CRD = 'ipaddressclaims.ipam.cluster.x-k8s.io';
const CRD_PATH = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}`;
const CA_INJECTION = { 'cert-manager.io/inject-ca-from': 'capi-system/capi-serving-cert' };

const configurationSchema = z.object({
  metadata: z.object({ annotations: z.record(z.string(), z.string()).optional() }),
  webhooks: z.array(z.object({ name: z.string(), clientConfig: z.record(z.string(), z.unknown()) })),
});
const serviceSchema = z.object({
  metadata: z.object({ resourceVersion: z.string() }),
  spec: z.object({
    type: z.string(),
    externalName: z.string().optional(),
    ports: z.array(z.object({ port: z.number(), name: z.string().optional(), protocol: z.string() })),
  }),
});
const crdSchema = z.object({
  spec: z.object({
    conversion: z.object({
      strategy: z.string(),
      webhook: z.object({ clientConfig: z.record(z.string(), z.unknown()) }).optional(),
    }),
  }),
});

async function read<T>(kc: KubeConfig, path: string, schema: z.ZodType<T>): Promise<T> {
  const response = await kubeRequest(kc, { method: 'GET', path });
  if (response.status !== 200) throw new Error(`GET ${path}: HTTP ${response.status} ${response.body.slice(0, 300)}`);
  return schema.parse(JSON.parse(response.body));
}

async function write<T>(
  kc: KubeConfig,
  method: 'PATCH' | 'POST' | 'PUT',
  path: string,
  body: unknown,
  schema: z.ZodType<T>,
): Promise<T> {
  const response = await kubeRequest(kc, {
    method,
    path,
    body: JSON.stringify(body),
    contentType: method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
  });
  await expectSuccess(`${method} ${path}`, Promise.resolve(response));
  return schema.parse(JSON.parse(response.body));
}

it("keeps Cluster API's webhooks reachable: webhook configurations, Service and CRD conversion written over the way clusterctl does are written back, a deleted configuration is made again, and webhook-backed writes succeed", async () => {
  const plane = await startExternalControlPlane(testEnv().kubeconfigPath);
  // The suite's control plane is local; only the manager needs to think so.
  const local: ControlPlane = { ...plane, external: false };
  const progress: string[] = [];
  const manager = await startCapiManager(local, { verbosity: 1, onProgress: (line) => progress.push(line) });
  const kc = plane.kubeConfig();
  const hint = `${manager.logPath} (the keeper's lines start with [tally-testenv])`;
  const keeperLines = (): string[] => progress.filter((line) => line.startsWith('webhook keeper:'));
  try {
    const configurations = await readCapiWebhookConfigurations();
    const paths = configurations.map((c) => webhookConfigurationPath(c.kind, c.name));
    const registered = await Promise.all(paths.map((path) => read(kc, path, configurationSchema)));
    const service = await read(kc, capiWebhookServicePath(), serviceSchema);
    const crd = await read(kc, CRD_PATH, crdSchema);
    const conversion = (await readCapiConversions()).find((c) => c.crdName === CRD);
    if (!conversion) throw new Error(`no conversion for ${CRD}`);

    // clusterctl's update: a JSON merge patch of the whole shipped object, so each `webhooks` list is replaced and
    // every webhook names the Service (no port: 443) with no caBundle; cert-manager's annotation comes along.
    for (const [index, configuration] of configurations.entries()) {
      const overwritten = await write(
        kc,
        'PATCH',
        paths[index] ?? '',
        {
          metadata: { annotations: CA_INJECTION },
          webhooks: z
            .array(z.record(z.string(), z.unknown()))
            .parse(configuration.manifest.webhooks)
            .map((shipped, i) => ({
              ...shipped,
              clientConfig: { service: { ...CAPI_WEBHOOK_SERVICE, path: configuration.webhooks[i]?.path } },
            })),
        },
        configurationSchema,
      );
      expect(overwritten.webhooks[0]?.clientConfig).toEqual({
        service: { ...CAPI_WEBHOOK_SERVICE, path: configuration.webhooks[0]?.path, port: 443 },
      });
    }
    // The Service as Cluster API ships it, replacing testenv's ExternalName one.
    const clusterIP = await eventually(
      'replacing the Service with a ClusterIP one',
      async () =>
        write(
          kc,
          'PUT',
          capiWebhookServicePath(),
          {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: {
              ...CAPI_WEBHOOK_SERVICE,
              resourceVersion: (await read(kc, capiWebhookServicePath(), serviceSchema)).metadata.resourceVersion,
            },
            spec: {
              type: 'ClusterIP',
              ports: [{ port: 443, targetPort: 'webhook-server', protocol: 'TCP' }],
              selector: { 'cluster.x-k8s.io/provider': 'cluster-api' },
            },
          },
          serviceSchema,
        ),
      WAIT,
    );
    expect(clusterIP.spec.type).toBe('ClusterIP');
    // clusterctl's conversion settings merged into the CRD: the Service, no port and no caBundle (what a CRD that
    // clusterctl creates, rather than patches, ends up with).
    const patched = await write(
      kc,
      'PATCH',
      CRD_PATH,
      {
        spec: {
          conversion: {
            strategy: 'Webhook',
            webhook: {
              conversionReviewVersions: conversion.conversionReviewVersions,
              clientConfig: { service: { ...CAPI_WEBHOOK_SERVICE, path: '/convert', port: null }, caBundle: null },
            },
          },
        },
      },
      crdSchema,
    );
    expect(patched.spec.conversion.webhook?.clientConfig).toEqual({
      service: { ...CAPI_WEBHOOK_SERVICE, path: '/convert', port: 443 },
    });

    for (const [index, path] of paths.entries()) {
      const restored = await waitFor(
        `the keeper to point ${path} back at the manager`,
        async () => {
          const now = await read(kc, path, configurationSchema);
          return isEqual(now.webhooks, registered[index]?.webhooks) ? now : undefined;
        },
        { ...WAIT, describe: keeperLines, hint },
      );
      // Only the clientConfigs are the keeper's: the annotation someone else set stays.
      expect(restored.metadata.annotations).toMatchObject(CA_INJECTION);
    }
    const serviceNow = await waitFor(
      'the keeper to make the Service an ExternalName one again',
      async () => {
        const now = await read(kc, capiWebhookServicePath(), serviceSchema);
        return now.spec.type === 'ExternalName' ? now : undefined;
      },
      { ...WAIT, describe: keeperLines, hint },
    );
    expect(serviceNow.spec).toEqual(service.spec);
    await waitFor(
      `the keeper to point ${CRD}'s conversion back at the manager`,
      async () => isEqual((await read(kc, CRD_PATH, crdSchema)).spec, crd.spec),
      { ...WAIT, describe: keeperLines, hint },
    );
    for (const name of [...Object.values(CAPI_WEBHOOK_CONFIGURATION_NAMES), CAPI_WEBHOOK_SERVICE.name, CRD]) {
      expect(keeperLines().some((line) => line.includes(name))).toBe(true);
    }

    // Deleted (`clusterctl delete` deletes the webhook configurations): registered again.
    await expectSuccess(
      'deleting the validating webhook configuration',
      kubeRequest(kc, { method: 'DELETE', path: paths[1] ?? '' }),
    );
    await waitFor(
      'the keeper to register the validating webhook configuration again',
      async () => isEqual((await read(kc, paths[1] ?? '', configurationSchema)).webhooks, registered[1]?.webhooks),
      { ...WAIT, describe: keeperLines, hint },
    );

    // A v1beta1 create goes through /convert (v1beta2 is stored) and both admission webhooks; the API server picks
    // the repaired configurations up asynchronously, so it may fail at first.
    const ns = await withTestNamespace(kc, 'webhook-keeper');
    const created = await eventually(
      'a v1beta1 IPAddressClaim create through the webhooks',
      async () =>
        write(
          kc,
          'POST',
          `/apis/ipam.cluster.x-k8s.io/v1beta1/namespaces/${ns.name}/ipaddressclaims`,
          {
            apiVersion: 'ipam.cluster.x-k8s.io/v1beta1',
            kind: 'IPAddressClaim',
            metadata: { name: 'kept', namespace: ns.name },
            spec: { poolRef: { apiGroup: 'ipam.tally.dev', kind: 'Probe', name: 'probe' } },
          },
          z.object({ apiVersion: z.string() }),
        ),
      { ...WAIT, hint },
    );
    expect(created.apiVersion).toBe('ipam.cluster.x-k8s.io/v1beta1');
  } finally {
    await manager.stop();
  }
  // stop() stopped the keeper before unregistering: nothing was put back.
  for (const path of (await readCapiWebhookConfigurations()).map((c) => webhookConfigurationPath(c.kind, c.name))) {
    expect((await kubeRequest(kc, { method: 'GET', path })).status).toBe(404);
  }
  expect((await kubeRequest(kc, { method: 'GET', path: capiWebhookServicePath() })).status).toBe(404);
  expect((await read(kc, CRD_PATH, crdSchema)).spec.conversion.strategy).toBe('None');
});
