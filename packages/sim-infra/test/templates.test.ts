import { AdmissionregistrationV1Api } from '@kubernetes/client-node';
import { asKubeApiError, Client } from '@tally-ipam/controller-kit/client';
import { createLogger } from '@tally-ipam/controller-kit/manager';
import { validatingWebhookConfiguration, WebhookServer } from '@tally-ipam/controller-kit/webhook';
import { createServingCertDir, type ServingCertDir } from '@tally-ipam/testenv';
import { testEnv, withTestNamespace } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  registerSimWebhooks,
  SIM_CLUSTER_TEMPLATE_RESOURCE,
  SIM_GROUP,
  SIM_MACHINE_POOL_TEMPLATE_RESOURCE,
  SIM_MACHINE_TEMPLATE_RESOURCE,
  simValidatingWebhookSpecs,
} from '../src/index.js';
import { eventually } from './support.js';

const kubeConfig = testEnv().kubeConfig;
const client = new Client(kubeConfig, { fieldManager: 'sim-template-tests' });
const admission = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
const stop = new AbortController();
let certs: ServingCertDir;
let serving: Promise<void>;

beforeAll(async () => {
  certs = await createServingCertDir('sim-infra-webhook');
  const server = new WebhookServer({
    host: '127.0.0.1',
    port: 0,
    certDir: certs.path,
    logger: createLogger({ name: 'sim-webhooks', level: 'error' }),
  });
  registerSimWebhooks(server);
  serving = server.start(stop.signal);
  const address = await eventually('webhook server listening', async () => server.address());
  baseUrl = `https://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  stop.abort();
  await serving;
  await certs?.remove();
  client.close();
});

let baseUrl = '';

async function withWebhooks(namespace: string): Promise<() => Promise<void>> {
  const name = `sim-templates-${namespace}`;
  await admission.createValidatingWebhookConfiguration({
    body: validatingWebhookConfiguration({
      name,
      client: { baseUrl, caBundlePem: certs.caPem },
      // The control plane is shared: only this test's namespace goes through the webhook.
      webhooks: simValidatingWebhookSpecs({
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
      }),
    }),
  });
  return async () => {
    await admission.deleteValidatingWebhookConfiguration({ name });
  };
}

function machineTemplate(namespace: string, name: string, pool: string, annotations?: Record<string, string>) {
  return {
    apiVersion: `${SIM_GROUP}/v1alpha1`,
    kind: 'SimMachineTemplate',
    metadata: { name, namespace, ...(annotations ? { annotations } : {}) },
    spec: {
      template: {
        metadata: { labels: { role: 'worker' } },
        spec: {
          network: {
            devices: [
              {
                name: 'eth0',
                addressesFromPools: [{ apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: pool }],
              },
            ],
          },
        },
      },
    },
  };
}

async function refusal(write: Promise<unknown>): Promise<string | undefined> {
  try {
    await write;
    return undefined;
  } catch (error) {
    const apiError = asKubeApiError(error);
    if (!apiError) throw error;
    return `${apiError.statusCode} ${apiError.serverMessage}`;
  }
}

describe('template immutability (the SSA dry-run rule)', () => {
  it('refuses spec.template.spec changes except in a topology dry run; metadata may change', async () => {
    const ns = await withTestNamespace(undefined, 'sim-templates');
    const removeWebhooks = await withWebhooks(ns.name);
    try {
      await client.create(SIM_MACHINE_TEMPLATE_RESOURCE, machineTemplate(ns.name, 'workers', 'pool-a'));
      const changedSpec = machineTemplate(ns.name, 'workers', 'pool-b');

      // The API server picks a new configuration up asynchronously: wait until the rule is in force.
      const message = await eventually('the webhook to refuse a spec change', () =>
        refusal(client.apply(SIM_MACHINE_TEMPLATE_RESOURCE, changedSpec, { dryRun: 'All' })),
      );
      expect(message).toContain('422');
      expect(message).toContain(
        'SimMachineTemplate.infrastructure.cluster.x-k8s.io "workers" is invalid: spec.template.spec: Forbidden: SimMachineTemplate spec.template.spec is immutable',
      );
      expect(await refusal(client.apply(SIM_MACHINE_TEMPLATE_RESOURCE, changedSpec))).toContain('is immutable');

      // CAPI's topology controller: server-side apply, dryRun=All, and the dry-run annotation on the object.
      const topologyDryRun = machineTemplate(ns.name, 'workers', 'pool-b', { 'topology.cluster.x-k8s.io/dry-run': '' });
      expect(
        await refusal(client.apply(SIM_MACHINE_TEMPLATE_RESOURCE, topologyDryRun, { dryRun: 'All' })),
      ).toBeUndefined();
      // The annotation alone is not enough: a real write with it is still refused.
      expect(await refusal(client.apply(SIM_MACHINE_TEMPLATE_RESOURCE, topologyDryRun))).toContain('is immutable');

      const relabelled = machineTemplate(ns.name, 'workers', 'pool-a');
      relabelled.spec.template.metadata.labels = { role: 'infra' };
      expect(await refusal(client.apply(SIM_MACHINE_TEMPLATE_RESOURCE, relabelled))).toBeUndefined();
      const stored = await client.get(SIM_MACHINE_TEMPLATE_RESOURCE, { namespace: ns.name, name: 'workers' });
      expect(stored.spec.template.metadata?.labels).toEqual({ role: 'infra' });
      expect(stored.spec.template.spec.network?.devices[0]?.addressesFromPools?.[0]?.name).toBe('pool-a');

      // The same rule guards SimClusterTemplates.
      const clusterTemplate = (host: string) => ({
        apiVersion: `${SIM_GROUP}/v1alpha1`,
        kind: 'SimClusterTemplate',
        metadata: { name: 'clusters', namespace: ns.name },
        spec: { template: { spec: { controlPlaneEndpoint: { host, port: 6443 } } } },
      });
      await client.create(SIM_CLUSTER_TEMPLATE_RESOURCE, clusterTemplate('a.example.com'));
      expect(await refusal(client.apply(SIM_CLUSTER_TEMPLATE_RESOURCE, clusterTemplate('b.example.com')))).toContain(
        'SimClusterTemplate spec.template.spec is immutable',
      );

      // And SimMachinePoolTemplates.
      const poolTemplate = (pool: string) => ({
        apiVersion: `${SIM_GROUP}/v1alpha1`,
        kind: 'SimMachinePoolTemplate',
        metadata: { name: 'pools', namespace: ns.name },
        spec: {
          template: {
            spec: {
              template: {
                network: {
                  devices: [
                    { addressesFromPools: [{ apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: pool }] },
                  ],
                },
              },
            },
          },
        },
      });
      await client.create(SIM_MACHINE_POOL_TEMPLATE_RESOURCE, poolTemplate('pool-a'));
      expect(await refusal(client.apply(SIM_MACHINE_POOL_TEMPLATE_RESOURCE, poolTemplate('pool-b')))).toContain(
        'SimMachinePoolTemplate spec.template.spec is immutable',
      );
    } finally {
      await removeWebhooks();
    }
  });

  it('has no providerID in a SimMachineTemplate (every machine cloned from it gets its own): the field is pruned', async () => {
    const ns = await withTestNamespace(undefined, 'sim-templates-schema');
    const withProviderID = machineTemplate(ns.name, 'bad', 'pool-a');
    (withProviderID.spec.template.spec as Record<string, unknown>).providerID = 'sim://x/y';
    const created = await client.create(SIM_MACHINE_TEMPLATE_RESOURCE, withProviderID);
    // Pruned by the structural schema: the field does not exist in a template.
    expect(created.spec.template.spec).not.toHaveProperty('providerID');
  });
});
