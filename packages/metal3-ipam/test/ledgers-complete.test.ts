/**
 * No IPClaim gets a new address before the ledgers hold every allocation of the cluster (`ledgersComplete`: the
 * provider's migration from lock objects), while the claim's finalizer is already there.
 */
import { METAL3_IP_CLAIM_FINALIZER } from '@tally-ipam/api-types';
import type { Client } from '@tally-ipam/controller-kit/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METAL3_ADDRESS_RESOURCE, METAL3_CLAIM_RESOURCE } from '../src/index.js';
import {
  createClaim,
  createPool,
  type RunningMetal3,
  startMetal3,
  TestNamespaces,
  testClient,
  waitFor,
  waitForAddress,
} from './support.js';

const namespaces = new TestNamespaces();
let client: Client;
let process: RunningMetal3 | undefined;

beforeAll(() => {
  client = testClient();
});

afterAll(async () => {
  await process?.stop();
  await namespaces.deleteAll();
  client?.close();
});

describe('ledgersComplete', () => {
  it('holds back every new allocation until it resolves', async () => {
    const namespace = await namespaces.create('metal3-gate');
    let open: (value: unknown) => void = () => undefined;
    const gate = new Promise((resolve) => {
      open = resolve;
    });
    process = await startMetal3({ namespace, ledgersComplete: () => gate });
    await createPool(client, namespace, 'pool', {
      namePrefix: 'pool',
      pools: [{ start: '10.67.0.10', end: '10.67.0.20' }],
    });
    await createClaim(client, namespace, 'waits', 'pool');
    await waitFor('the claim finalized', async () => {
      const claim = await client.get(METAL3_CLAIM_RESOURCE, { namespace, name: 'waits' });
      return claim.metadata.finalizers?.includes(METAL3_IP_CLAIM_FINALIZER);
    });
    expect((await client.list(METAL3_ADDRESS_RESOURCE, { namespace })).items).toHaveLength(0);
    expect((await client.get(METAL3_CLAIM_RESOURCE, { namespace, name: 'waits' })).status).toBeUndefined();

    open(undefined);
    expect((await waitForAddress(client, namespace, 'waits')).spec.address).toBe('10.67.0.10');
  });
});
