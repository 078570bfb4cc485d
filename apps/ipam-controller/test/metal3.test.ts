import { asKubeApiError } from '@tally-ipam/controller-kit';
import {
  IPPOOL_WEBHOOK_NAME,
  IPPOOL_WEBHOOK_PATH,
  METAL3_ADDRESS_RESOURCE,
  METAL3_CLAIM_RESOURCE,
  METAL3_POOL_RESOURCE,
  metal3WebhookConfiguration,
} from '@tally-ipam/metal3-ipam';
import { describe, expect, it } from 'vitest';
import { useFlaggedController } from './flagged-controller.js';
import { eventually } from './support.js';

/**
 * `--enable-metal3-ipam` through the built executable: an IPClaim served and the IPPool update webhook answered by the
 * app's webhook server, as the flag's wiring ships.
 */
describe('tally-ipam-controller --enable-metal3-ipam', () => {
  const file = useFlaggedController('metal3-flag', '--enable-metal3-ipam');

  it('serves a Metal3 IPClaim from a Metal3 IPPool with a Metal3-named IPAddress', async () => {
    const { client, namespace } = file();
    await client.create(METAL3_POOL_RESOURCE, {
      apiVersion: 'ipam.metal3.io/v1alpha1',
      kind: 'IPPool',
      metadata: { name: 'provisioning', namespace: namespace },
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
      metadata: { name: 'node-0', namespace: namespace },
      spec: { pool: { name: 'provisioning' } },
    });
    const address = await eventually('the IPAddress of node-0', () =>
      client.get(METAL3_ADDRESS_RESOURCE, { namespace: namespace, name: 'prov-10-210-0-10' }),
    );
    expect(address.spec).toMatchObject({ address: '10.210.0.10', prefix: 24, gateway: '10.210.0.1' });
    const claim = await eventually('node-0 pointing at it', async () => {
      const current = await client.get(METAL3_CLAIM_RESOURCE, { namespace: namespace, name: 'node-0' });
      if (current.status?.address?.name !== 'prov-10-210-0-10') throw new Error('no status.address yet');
      return current;
    });
    expect(claim.status?.errorMessage).toBeUndefined();
  });

  it('answers the IPPool update webhook: shrinking a pool under its IPAddress is refused, naming field and value', async () => {
    const { client, namespace } = file();
    expect(await file().servedWebhookPaths()).toContain(IPPOOL_WEBHOOK_PATH);
    await file().registerWebhooks(metal3WebhookConfiguration);
    // prov-10-210-0-10 (the first test's) is in use: a range without it is refused once the configuration is loaded.
    const message = await eventually('the webhook configuration in effect', async () => {
      const pool = await client.get(METAL3_POOL_RESOURCE, { namespace: namespace, name: 'provisioning' });
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
