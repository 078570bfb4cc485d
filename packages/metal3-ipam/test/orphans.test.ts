/**
 * Ledger entries of IPClaims that vanished without their controller (force-deleted while no process ran, the
 * source side of `clusterctl move`): dropped by the next process after the safety age, while an entry whose claim
 * lives, or whose address an IPAddress of the pool still carries, stays.
 */
import { METAL3_IP_ADDRESS_FINALIZER } from '@tally-ipam/api-types';
import type { Client } from '@tally-ipam/controller-kit/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METAL3_ADDRESS_RESOURCE, METAL3_CLAIM_RESOURCE } from '../src/index.js';
import {
  createClaim,
  createPool,
  ledgerEntries,
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

async function forceDelete(
  resource: typeof METAL3_CLAIM_RESOURCE | typeof METAL3_ADDRESS_RESOURCE,
  namespace: string,
  name: string,
): Promise<void> {
  const object = await client.get(resource, { namespace, name });
  await client.mergePatch(
    resource,
    { namespace, name },
    { metadata: { resourceVersion: object.metadata.resourceVersion, finalizers: null } },
  );
  await client.delete(resource, { namespace, name });
}

describe('orphaned Metal3 ledger entries', () => {
  it('are dropped once the claim is gone, no IPAddress carries the address and the safety age is past', async () => {
    const namespace = await namespaces.create('metal3-orphans');
    await createPool(client, namespace, 'pool', {
      namePrefix: 'pool',
      pools: [{ start: '10.66.0.10', end: '10.66.0.20' }],
    });
    process = await startMetal3({ namespace });
    for (const name of ['vanished', 'moved-away', 'alive']) await createClaim(client, namespace, name, 'pool');
    const vanished = await waitForAddress(client, namespace, 'vanished');
    const movedAway = await waitForAddress(client, namespace, 'moved-away');
    const alive = await waitForAddress(client, namespace, 'alive');
    await process.stop();
    process = undefined;

    // With no controller running: one claim and its IPAddress force-deleted; one claim force-deleted but its
    // IPAddress left (its address stays held: the IPAddress is the source of truth).
    await forceDelete(METAL3_CLAIM_RESOURCE, namespace, 'vanished');
    await forceDelete(METAL3_ADDRESS_RESOURCE, namespace, vanished.metadata.name);
    await forceDelete(METAL3_CLAIM_RESOURCE, namespace, 'moved-away');
    const held = async (address: string | undefined): Promise<boolean> =>
      (await ledgerEntries(client)).some((entry) => entry.address === address);
    expect(await held(vanished.spec.address)).toBe(true);

    process = await startMetal3({ namespace, orphanSafetyAgeMs: 2_000 });
    await waitFor('the entry of the vanished claim dropped', async () => !(await held(vanished.spec.address)));
    // Past the same safety age, the entry of a living claim and the one an IPAddress still carries stay.
    expect(await held(movedAway.spec.address)).toBe(true);
    expect(await held(alive.spec.address)).toBe(true);
    const remaining = await client.get(METAL3_ADDRESS_RESOURCE, { namespace, name: movedAway.metadata.name });
    expect(remaining.metadata.finalizers).toEqual([METAL3_IP_ADDRESS_FINALIZER]);
  });
});
