import type { KubeConfig } from '@kubernetes/client-node';
import { tallyCRDDirectory } from '@tally-ipam/api-types';
import { Client, isNotFound } from '@tally-ipam/controller-kit';
import { type ControlPlane, startControlPlane } from '@tally-ipam/testenv';
import { afterAll, beforeAll } from 'vitest';
import { AddressLedgers } from '../src/index.js';

/**
 * testenv's `waitFor`, with its default deadline: a bound for a hang. The package's files run in parallel, each on its
 * own control plane, which is what makes a shorter deadline one a busy machine reaches: nothing awaited here takes
 * longer than the writes and watch events of a few objects, however long those are delayed.
 */
export { waitFor } from '@tally-ipam/testenv';

/**
 * A control plane of the test file's own (etcd and kube-apiserver with the Tally CRDs), started before the file's tests
 * and stopped after them; returns its kubeconfig. The ledger writers and views under test hold entries for claims and
 * pools that do not exist, and some tests count the API server's requests: nothing else may write its ledgers.
 */
export function usePrivateControlPlane(): () => KubeConfig {
  let plane: ControlPlane | undefined;
  beforeAll(async () => {
    plane = await startControlPlane({ ignoreTestKubeconfig: true, crds: [tallyCRDDirectory()], capiCRDs: [] });
  }, 180_000);
  afterAll(async () => {
    await plane?.stop();
  });
  return () => {
    if (!plane) throw new Error('the private control plane has not started: use it inside tests and hooks only');
    return plane.kubeConfig();
  };
}

export function testClient(kubeConfig: KubeConfig): Client {
  return new Client(kubeConfig, { fieldManager: 'tally-ipam-tests' });
}

/**
 * Ledger writers on the file's control plane, each with a client of its own (two writers are two replicas); `clients`
 * in the order the writers were made, every one closed after the file's tests.
 */
export function useLedgerWriters(kubeConfig: () => KubeConfig): {
  readonly writer: () => AddressLedgers;
  readonly clients: readonly Client[];
} {
  const clients: Client[] = [];
  afterAll(() => {
    for (const client of clients) client.close();
  });
  return {
    clients,
    writer: () => {
      const client = testClient(kubeConfig());
      clients.push(client);
      return new AddressLedgers({ client, now: Date.now });
    },
  };
}

/** The result of `read`, or undefined when the API server answers NotFound. */
export async function getOrUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}
