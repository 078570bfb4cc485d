import type { StoredCluster } from '@tally-ipam/api-types';
import { describe, expect, it } from 'vitest';
import { ADDRESS_RESOURCE, CLAIM_FINALIZER, CLAIM_RESOURCE, CLUSTER_RESOURCE } from '../src/index.js';
import {
  createClaim,
  createCluster,
  createPool,
  getOrUndefined,
  holdingsOfNamespace,
  useTestFile,
  waitForAddress,
  waitForGone,
  waitForProviderToSee,
} from './support.js';

const PAUSED_ANNOTATION = 'cluster.x-k8s.io/paused';

// One worker: claims are reconciled in the order their events arrive, so a claim served after a deletion proves
// that the deletion was looked at first.
const { client, namespace, running } = useTestFile({
  provider: { concurrency: 1 },
  providerName: 'pause-cluster-provider',
});

/**
 * Deletes the allocated claim `held` while its Cluster is paused (by `pause`), checks the deletion waits — finalizer,
 * IPAddress and ledger entry all stay — then unpauses (by `unpause`) and checks the release completes.
 */
async function deletionWaitsForCluster(
  ns: string,
  pause: Record<string, unknown>,
  unpause: Record<string, unknown>,
  isPaused: (cluster: StoredCluster) => boolean,
): Promise<void> {
  await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.91.0.0/24'], prefix: 24 });
  await createCluster(client, ns, 'workload');
  await createClaim(client, ns, 'held', { kind: 'TallyIPPool', name: 'pool' }, { clusterName: 'workload' });
  const address = await waitForAddress(client, ns, 'held');
  const holdingsBefore = await holdingsOfNamespace(client, ns);
  expect(holdingsBefore).toHaveLength(1);

  await client.mergePatch(CLUSTER_RESOURCE, { namespace: ns, name: 'workload' }, pause);
  // The provider reads the Cluster from its cache, a watch of its own: a deletion reconciled before the pause reached
  // it would be released.
  await waitForProviderToSee(running(), CLUSTER_RESOURCE, `${ns}/workload`, isPaused);
  await client.delete(CLAIM_RESOURCE, { namespace: ns, name: 'held' });
  // A claim of no Cluster, in the same pool, created after the deletion: once it has its address, the deletion has
  // been reconciled and left alone.
  await createClaim(client, ns, 'witness', { kind: 'TallyIPPool', name: 'pool' });
  await waitForAddress(client, ns, 'witness');
  const held = await client.get(CLAIM_RESOURCE, { namespace: ns, name: 'held' });
  expect(held.metadata.deletionTimestamp).toBeDefined();
  expect(held.metadata.finalizers).toContain(CLAIM_FINALIZER);
  const stillThere = await client.get(ADDRESS_RESOURCE, { namespace: ns, name: 'held' });
  expect(stillThere.spec.address).toBe(address.spec.address);
  expect((await holdingsOfNamespace(client, ns)).map((holding) => holding.metadata.name)).toContain(
    holdingsBefore[0]?.metadata.name,
  );

  await client.mergePatch(CLUSTER_RESOURCE, { namespace: ns, name: 'workload' }, unpause);
  await waitForGone('claim held released', () => client.get(CLAIM_RESOURCE, { namespace: ns, name: 'held' }));
  expect(await getOrUndefined(() => client.get(ADDRESS_RESOURCE, { namespace: ns, name: 'held' }))).toBeUndefined();
}

describe("a claim's deletion under a paused Cluster (not pool)", () => {
  it('waits while Cluster.spec.paused is true and releases the address once it is false', async () => {
    const ns = await namespace('pause-cluster-spec');
    await deletionWaitsForCluster(
      ns,
      { spec: { paused: true } },
      { spec: { paused: false } },
      (cluster) => cluster.spec?.paused === true,
    );
  });

  it('waits while the Cluster has the paused annotation and releases the address once it is removed', async () => {
    const ns = await namespace('pause-cluster-annotation');
    await deletionWaitsForCluster(
      ns,
      { metadata: { annotations: { [PAUSED_ANNOTATION]: '' } } },
      { metadata: { annotations: { [PAUSED_ANNOTATION]: null } } },
      (cluster) => cluster.metadata.annotations?.[PAUSED_ANNOTATION] !== undefined,
    );
  });
});
