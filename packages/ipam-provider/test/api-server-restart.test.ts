import { tallyCRDDirectory } from '@tally-ipam/api-types';
import type { Client } from '@tally-ipam/controller-kit';
import { addressEntryKey } from '@tally-ipam/ledger';
import { type ControlPlane, startControlPlane } from '@tally-ipam/testenv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADDRESS_RESOURCE } from '../src/index.js';
import {
  createClaim,
  createPool,
  getHolding,
  holdingsOfNamespace,
  newNamespace,
  startProvider,
  testClient,
  waitForAddress,
} from './support.js';

// A private control plane: its kube-apiserver is killed and restarted (etcd kept) in the middle of allocating, with
// the watch cache on (the default), so the reflectors meet what a real restart serves: 429/503 while storage
// initializes, and a watch cache that starts at a newer resourceVersion than the one they resume from (410).
let plane: ControlPlane;
let client: Client;

beforeAll(async () => {
  plane = await startControlPlane({
    crds: [tallyCRDDirectory()],
    capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'],
    ignoreTestKubeconfig: true,
  });
  client = testClient(plane.kubeConfig());
}, 240_000);

afterAll(async () => {
  client?.close();
  await plane?.stop();
});

/** Who holds which address (holdings and IPAddresses), for the failure message of a claim left without one. */
async function holdings(namespace: string): Promise<string> {
  const holdings = (await holdingsOfNamespace(client, namespace)).map(
    (holding) =>
      `entry ${holding.spec.address} → ${holding.spec.claimRef.name} (${holding.spec.claimRef.uid})` +
      (holding.spec.releasedAt === undefined ? '' : ` released ${holding.spec.releasedAt}`),
  );
  const addresses = (await client.listAll(ADDRESS_RESOURCE, { namespace })).items.map(
    (address) => `IPAddress ${address.metadata.name} = ${address.spec.address}`,
  );
  return [...holdings.sort(), ...addresses.sort()].join('\n');
}

describe('kube-apiserver restarted while two providers allocate', () => {
  it('every claim is served once, with one holding per address, after the API server comes back', async () => {
    const ns = (await newNamespace('restart', plane.kubeConfig())).name;
    const first = await startProvider({ concurrency: 4 }, 'restart-a', plane.kubeConfig());
    const second = await startProvider({ concurrency: 4 }, 'restart-b', plane.kubeConfig());
    try {
      await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.70.0.1-10.70.0.40'], prefix: 24 });
      const names = Array.from({ length: 40 }, (_, index) => `m-${index}`);
      await Promise.all(
        names.slice(0, 20).map((name) => createClaim(client, ns, name, { kind: 'TallyIPPool', name: 'pool' })),
      );
      await plane.restartAPIServer();
      const readyAt = Date.now();
      await Promise.all(
        names.slice(20).map((name) => createClaim(client, ns, name, { kind: 'TallyIPPool', name: 'pool' })),
      );
      // What is asserted is the outcome; the deadline only bounds a hung run (informers reconnect with backoff and
      // failed reconciles retry with backoff, on a loaded machine). The time is printed for the README's figures.
      const addresses = await Promise.all(
        names.map(async (name) => {
          const address = await waitForAddress(client, ns, name, 240_000).catch(async (error: unknown) => {
            throw new Error(`${String(error)}\n${await holdings(ns)}`);
          });
          return { address, boundAfterMs: Date.now() - readyAt };
        }),
      );
      const newClaimsBoundMs = Math.max(...addresses.slice(20).map(({ boundAfterMs }) => boundAfterMs));
      console.info(`[api-server-restart] API server ready → all 20 new claims bound: ${newClaimsBoundMs} ms`);
      const texts = addresses.map(({ address }) => address.spec.address);
      expect(new Set(texts).size).toBe(names.length);
      const listed = (await client.listAll(ADDRESS_RESOURCE, { namespace: ns })).items;
      expect(listed.length).toBe(names.length);
      for (const address of listed) {
        const holding = await getHolding(client, addressEntryKey(address.spec.address));
        expect(holding.spec.claimRef.name).toBe(address.metadata.name);
      }
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
  }, 360_000);
});
