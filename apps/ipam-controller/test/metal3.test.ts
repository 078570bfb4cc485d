import { asKubeApiError, Client, type ResourceKind } from '@tally-ipam/controller-kit';
import {
  IPPOOL_WEBHOOK_NAME,
  IPPOOL_WEBHOOK_PATH,
  METAL3_ADDRESS_RESOURCE,
  METAL3_CLAIM_RESOURCE,
  METAL3_POOL_RESOURCE,
  metal3WebhookConfiguration,
} from '@tally-ipam/metal3-ipam';
import { createServingCertDir, type ServingCertDir } from '@tally-ipam/testenv';
import { createTestNamespace, type TestNamespace, testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, servingPort, startControllerWithWebhooks } from './controller-process.js';
import { eventually } from './support.js';

const WEBHOOK_CONFIGURATIONS: ResourceKind = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingWebhookConfiguration',
  plural: 'validatingwebhookconfigurations',
  namespaced: false,
};

/**
 * `--enable-metal3-ipam` through the built executable: an IPClaim served and the IPPool update webhook answered by the
 * app's webhook server, as the flag's wiring ships.
 */
describe('tally-ipam-controller --enable-metal3-ipam', () => {
  let namespace: TestNamespace;
  let client: Client;
  let controller: ControllerProcess;
  let certs: ServingCertDir | undefined;
  let webhookPort = 0;
  let configurationName = '';

  beforeAll(async () => {
    const env = testEnv();
    client = new Client(env.kubeConfig, { fieldManager: 'metal3-flag-test' });
    namespace = await createTestNamespace(env.kubeConfig, 'metal3-flag');
    certs = await createServingCertDir('metal3-flag-webhook');
    ({ controller, webhookPort } = await startControllerWithWebhooks(
      [
        '--kubeconfig',
        env.kubeconfigPath,
        '--namespace',
        namespace.name,
        '--enable-metal3-ipam',
        '--metrics-bind-address=127.0.0.1:0',
        '--health-probe-bind-address=127.0.0.1:0',
      ],
      certs.path,
    ));
    await servingPort(controller, 'metrics');
  });

  afterAll(async () => {
    if (configurationName) await client?.delete(WEBHOOK_CONFIGURATIONS, { name: configurationName }).catch(() => {});
    if (controller && controller.child.exitCode === null) await controller.stop('SIGKILL');
    await namespace?.delete();
    await certs?.remove();
  });

  it('serves a Metal3 IPClaim from a Metal3 IPPool with a Metal3-named IPAddress', async () => {
    await client.create(METAL3_POOL_RESOURCE, {
      apiVersion: 'ipam.metal3.io/v1alpha1',
      kind: 'IPPool',
      metadata: { name: 'provisioning', namespace: namespace.name },
      spec: {
        namePrefix: 'prov',
        pools: [{ start: '10.210.0.10', end: '10.210.0.20' }],
        prefix: 24,
        gateway: '10.210.0.1',
      },
    });
    await client.create(METAL3_CLAIM_RESOURCE, {
      apiVersion: 'ipam.metal3.io/v1alpha1',
      kind: 'IPClaim',
      metadata: { name: 'node-0', namespace: namespace.name },
      spec: { pool: { name: 'provisioning' } },
    });
    const address = await eventually('the IPAddress of node-0', () =>
      client.get(METAL3_ADDRESS_RESOURCE, { namespace: namespace.name, name: 'prov-10-210-0-10' }),
    );
    expect(address.spec).toMatchObject({ address: '10.210.0.10', prefix: 24, gateway: '10.210.0.1' });
    const claim = await eventually('node-0 pointing at it', async () => {
      const current = await client.get(METAL3_CLAIM_RESOURCE, { namespace: namespace.name, name: 'node-0' });
      if (current.status?.address?.name !== 'prov-10-210-0-10') throw new Error('no status.address yet');
      return current;
    });
    expect(claim.status?.errorMessage).toBeUndefined();
  });

  it('answers the IPPool update webhook: shrinking a pool under its IPAddress is refused, naming field and value', async () => {
    const serving = JSON.parse(
      await controller.waitForLine((line) => line.includes('"msg":"serving webhooks"'), 'the webhook server'),
    ) as { paths?: string[] };
    expect(serving.paths).toContain(IPPOOL_WEBHOOK_PATH);
    configurationName = `metal3-flag-webhook-${namespace.name}`;
    const configuration = metal3WebhookConfiguration({
      name: configurationName,
      client: { baseUrl: `https://127.0.0.1:${webhookPort}`, caBundlePem: certs?.caPem ?? '' },
      enabledExpression: "'true' == 'true'",
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace.name } },
    });
    await client.create(WEBHOOK_CONFIGURATIONS, { ...configuration, metadata: { name: configurationName } });
    // prov-10-210-0-10 (the first test's) is in use: a range without it is refused once the configuration is loaded.
    const message = await eventually('the webhook configuration in effect', async () => {
      const pool = await client.get(METAL3_POOL_RESOURCE, { namespace: namespace.name, name: 'provisioning' });
      const spec = { ...(pool.spec as object), pools: [{ start: '10.210.0.11', end: '10.210.0.20' }] };
      const outcome = await client.update(METAL3_POOL_RESOURCE, { ...pool, spec }, { dryRun: 'All' }).then(
        () => undefined,
        (error: unknown) => error,
      );
      const refusal = asKubeApiError(outcome)?.serverMessage ?? '';
      if (!refusal.includes(IPPOOL_WEBHOOK_NAME)) throw new Error(`not refused by the webhook yet: ${refusal}`);
      return refusal;
    });
    expect(message).toContain(
      'spec.pools: 10.210.0.10 no longer holds this address, in use by IPAddress prov-10-210-0-10',
    );
  });
});
