import { Client } from '@tally-ipam/controller-kit';
import { METAL3_ADDRESS_RESOURCE, METAL3_CLAIM_RESOURCE, METAL3_POOL_RESOURCE } from '@tally-ipam/metal3-ipam';
import { createTestNamespace, type TestNamespace, testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, servingPort, startController } from './controller-process.js';
import { eventually } from './support.js';

/** `--enable-metal3-ipam` through the built executable: an IPClaim served, as the flag's wiring ships. */
describe('tally-ipam-controller --enable-metal3-ipam', () => {
  let namespace: TestNamespace;
  let client: Client;
  let controller: ControllerProcess;

  beforeAll(async () => {
    const env = testEnv();
    client = new Client(env.kubeConfig, { fieldManager: 'metal3-flag-test' });
    namespace = await createTestNamespace(env.kubeConfig, 'metal3-flag');
    controller = startController([
      '--kubeconfig',
      env.kubeconfigPath,
      '--namespace',
      namespace.name,
      '--enable-metal3-ipam',
      '--metrics-bind-address=127.0.0.1:0',
      '--health-probe-bind-address=127.0.0.1:0',
      '--webhook-port=0',
    ]);
    await servingPort(controller, 'metrics');
  });

  afterAll(async () => {
    if (controller && controller.child.exitCode === null) await controller.stop('SIGKILL');
    await namespace?.delete();
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
});
