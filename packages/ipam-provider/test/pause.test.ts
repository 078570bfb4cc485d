import { describe, expect, it } from 'vitest';
import { ADDRESS_RESOURCE, CLAIM_FINALIZER, CLAIM_RESOURCE, CLUSTER_RESOURCE, POOL_RESOURCES } from '../src/index.js';
import {
  createClaim,
  createCluster,
  createPool,
  getOrUndefined,
  useTestFile,
  waitForAddress,
  waitForGone,
  waitForProviderToSee,
} from './support.js';

const { client, namespace, running } = useTestFile({ provider: {} });
const PAUSED = 'cluster.x-k8s.io/paused';

const hasPausedAnnotation = (object: { metadata: { annotations?: Record<string, string> | undefined } }): boolean =>
  object.metadata.annotations?.[PAUSED] !== undefined;

/**
 * Proof that a paused claim is left alone: a second, unpaused claim created after it in the same pool is served
 * (so the provider has seen the paused one — events are handled in order), while the paused one has no finalizer,
 * status or IPAddress.
 */
async function expectSkipped(ns: string, pausedClaim: string, pool: string): Promise<void> {
  await createClaim(client, ns, `${pausedClaim}-witness`, { kind: 'TallyIPPool', name: pool });
  await waitForAddress(client, ns, `${pausedClaim}-witness`);
  const claim = await client.get(CLAIM_RESOURCE, { namespace: ns, name: pausedClaim });
  expect(claim.metadata.finalizers ?? []).toEqual([]);
  expect(claim.status).toBeUndefined();
  expect(
    await getOrUndefined(() => client.get(ADDRESS_RESOURCE, { namespace: ns, name: pausedClaim })),
  ).toBeUndefined();
}

describe('pausing', () => {
  it('skips claims of a Cluster with spec.paused, and allocates once it is unpaused', async () => {
    const ns = await namespace('pause-spec');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.20.0.0/24'], prefix: 24 });
    await createCluster(client, ns, 'paused', true);
    await createClaim(client, ns, 'a', { kind: 'TallyIPPool', name: 'pool' }, { clusterName: 'paused' });
    await expectSkipped(ns, 'a', 'pool');
    await client.mergePatch(CLUSTER_RESOURCE, { namespace: ns, name: 'paused' }, { spec: { paused: false } });
    await waitForAddress(client, ns, 'a');
  });

  it('skips claims of a Cluster with the paused annotation (found through the cluster-name label), then resumes', async () => {
    const ns = await namespace('pause-annotation');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.21.0.0/24'], prefix: 24 });
    await createCluster(client, ns, 'c');
    await client.mergePatch(
      CLUSTER_RESOURCE,
      { namespace: ns, name: 'c' },
      { metadata: { annotations: { [PAUSED]: '' } } },
    );
    // The provider reads the Cluster from its cache: a claim reconciled before the annotation reached it would be served.
    await waitForProviderToSee(running(), CLUSTER_RESOURCE, `${ns}/c`, hasPausedAnnotation);
    await createClaim(
      client,
      ns,
      'a',
      { kind: 'TallyIPPool', name: 'pool' },
      {
        labels: { 'cluster.x-k8s.io/cluster-name': 'c' },
      },
    );
    await expectSkipped(ns, 'a', 'pool');
    await client.mergePatch(
      CLUSTER_RESOURCE,
      { namespace: ns, name: 'c' },
      { metadata: { annotations: { [PAUSED]: null } } },
    );
    await waitForAddress(client, ns, 'a');
  });

  it('skips a claim whose Cluster does not exist yet, and allocates when the Cluster is created', async () => {
    const ns = await namespace('pause-missing');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.22.0.0/24'], prefix: 24 });
    await createClaim(client, ns, 'a', { kind: 'TallyIPPool', name: 'pool' }, { clusterName: 'later' });
    await expectSkipped(ns, 'a', 'pool');
    await createCluster(client, ns, 'later');
    await waitForAddress(client, ns, 'a');
  });

  it('skips a claim with the paused annotation, and resumes when it is removed', async () => {
    const ns = await namespace('pause-claim');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.23.0.0/24'], prefix: 24 });
    await createClaim(client, ns, 'a', { kind: 'TallyIPPool', name: 'pool' }, { annotations: { [PAUSED]: 'true' } });
    await expectSkipped(ns, 'a', 'pool');
    await client.mergePatch(
      CLAIM_RESOURCE,
      { namespace: ns, name: 'a' },
      { metadata: { annotations: { [PAUSED]: null } } },
    );
    await waitForAddress(client, ns, 'a');
  });

  it('skips claims of a paused pool (allocation and deletion), and resumes when the pool is unpaused', async () => {
    const ns = await namespace('pause-pool');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.24.0.0/24'], prefix: 24 });
    await createPool(client, 'TallyIPPool', 'witness', ns, { addresses: ['10.24.1.0/24'], prefix: 24 });
    await createClaim(client, ns, 'held', { kind: 'TallyIPPool', name: 'pool' });
    await waitForAddress(client, ns, 'held');
    await client.mergePatch(
      POOL_RESOURCES.TallyIPPool,
      { namespace: ns, name: 'pool' },
      {
        metadata: { annotations: { [PAUSED]: '' } },
      },
    );
    // The pool comes from the provider's cache: a deletion reconciled before the pause reached it would be released.
    await waitForProviderToSee(running(), POOL_RESOURCES.TallyIPPool, `${ns}/pool`, hasPausedAnnotation);
    await createClaim(client, ns, 'a', { kind: 'TallyIPPool', name: 'pool' });
    await client.delete(CLAIM_RESOURCE, { namespace: ns, name: 'held' });
    await expectSkipped(ns, 'a', 'witness');
    // The deleted claim is held by its finalizer while the pool is paused.
    const held = await client.get(CLAIM_RESOURCE, { namespace: ns, name: 'held' });
    expect(held.metadata.finalizers).toContain(CLAIM_FINALIZER);
    expect(held.metadata.deletionTimestamp).toBeDefined();
    expect(await client.get(ADDRESS_RESOURCE, { namespace: ns, name: 'held' })).toBeDefined();

    await client.mergePatch(
      POOL_RESOURCES.TallyIPPool,
      { namespace: ns, name: 'pool' },
      {
        metadata: { annotations: { [PAUSED]: null } },
      },
    );
    await waitForAddress(client, ns, 'a');
    await waitForGone('deleted claim held', () => client.get(CLAIM_RESOURCE, { namespace: ns, name: 'held' }));
  });
  it('a pool labelled with a paused Cluster (clusterctl move) pauses with it: claims and pool status wait', async () => {
    const ns = await namespace('pause-pool-cluster');
    await createCluster(client, ns, 'moving', true);
    // A pool whose Cluster the provider has not seen yet is not paused: it would get its finalizer and status.
    await waitForProviderToSee(running(), CLUSTER_RESOURCE, `${ns}/moving`, (cluster) => cluster.spec?.paused === true);
    await createPool(
      client,
      'TallyIPPool',
      'pool',
      ns,
      { addresses: ['10.25.0.0/24'], prefix: 24 },
      {
        labels: { 'cluster.x-k8s.io/cluster-name': 'moving' },
      },
    );
    await createPool(client, 'TallyIPPool', 'witness', ns, { addresses: ['10.25.1.0/24'], prefix: 24 });
    await createClaim(client, ns, 'a', { kind: 'TallyIPPool', name: 'pool' });
    await expectSkipped(ns, 'a', 'witness');
    const pool = await client.get(POOL_RESOURCES.TallyIPPool, { namespace: ns, name: 'pool' });
    expect(pool.metadata.finalizers ?? []).toEqual([]);
    expect(pool.status).toBeUndefined();

    await client.mergePatch(CLUSTER_RESOURCE, { namespace: ns, name: 'moving' }, { spec: { paused: false } });
    await waitForAddress(client, ns, 'a');
  });
});
