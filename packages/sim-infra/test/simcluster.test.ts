import { inspectIP } from '@tally-ipam/api-types';
import { asKubeApiError, isNotFound } from '@tally-ipam/controller-kit/client';
import { withTestNamespace } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLAIM_RESOURCE,
  CLUSTER_RESOURCE,
  SIM_CLUSTER_FINALIZER,
  SIM_CLUSTER_RESOURCE,
  SIM_GROUP,
  type SimCluster,
  type StoredCluster,
} from '../src/index.js';
import {
  conditionOf,
  createCluster,
  createPool,
  eventually,
  type RunningProviders,
  startProviders,
} from './support.js';

let providers: RunningProviders;

beforeAll(async () => {
  providers = await startProviders();
});

afterAll(async () => {
  await providers?.stop();
});

/** A SimCluster as the CAPI Cluster controller leaves it: owned by its Cluster (v1.12 makes it a controller reference). */
async function createSimCluster(
  namespace: string,
  name: string,
  cluster: StoredCluster | undefined,
  spec: SimCluster['spec'],
  annotations?: Record<string, string>,
): Promise<SimCluster> {
  return providers.client.create(SIM_CLUSTER_RESOURCE, {
    apiVersion: `${SIM_GROUP}/v1alpha1`,
    kind: 'SimCluster',
    metadata: {
      name,
      namespace,
      ...(annotations ? { annotations } : {}),
      ...(cluster
        ? {
            labels: { 'cluster.x-k8s.io/cluster-name': cluster.metadata.name },
            ownerReferences: [
              {
                apiVersion: 'cluster.x-k8s.io/v1beta2',
                kind: 'Cluster',
                name: cluster.metadata.name,
                uid: cluster.metadata.uid ?? '',
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          }
        : {}),
    },
    spec,
  });
}

async function getSimCluster(namespace: string, name: string): Promise<SimCluster> {
  return providers.client.get(SIM_CLUSTER_RESOURCE, { namespace, name });
}

async function provisioned(namespace: string, name: string): Promise<SimCluster> {
  return eventually(`SimCluster ${name} provisioned`, async () => {
    const simCluster = await getSimCluster(namespace, name);
    return simCluster.status?.initialization?.provisioned === true ? simCluster : undefined;
  });
}

describe('SimCluster', () => {
  it('allocates its control-plane endpoint from a TallyIPPool and reports what CAPI reads', async () => {
    const ns = await withTestNamespace(undefined, 'simcluster');
    const { client } = providers;
    const pool = await createPool(client, ns.name, 'vips', { addresses: ['10.40.0.100-10.40.0.110'], prefix: 24 });
    const cluster = await createCluster(client, ns.name, 'prod', { kubeconfig: false });
    const created = await createSimCluster(ns.name, 'prod', cluster, {
      controlPlaneEndpointPoolRef: pool,
      failureDomains: [{ name: 'fd-a', controlPlane: true, attributes: { rack: 'r1' } }, { name: 'fd-b' }],
    });

    const ready = await provisioned(ns.name, 'prod');
    const host = ready.spec.controlPlaneEndpoint?.host ?? '';
    const value = inspectIP(host);
    const [first, last] = [inspectIP('10.40.0.100'), inspectIP('10.40.0.110')];
    expect(
      value.ok &&
        first.ok &&
        last.ok &&
        value.value.value >= first.value.value &&
        value.value.value <= last.value.value,
    ).toBe(true);
    expect(ready.spec.controlPlaneEndpoint?.port).toBe(6443);
    expect(ready.status?.failureDomains).toEqual([
      { name: 'fd-a', controlPlane: true, attributes: { rack: 'r1' } },
      { name: 'fd-b' },
    ]);
    expect(ready.metadata.finalizers).toContain(SIM_CLUSTER_FINALIZER);
    expect(conditionOf(ready, 'ControlPlaneEndpointReady')).toMatchObject({
      status: 'True',
      reason: 'EndpointAllocated',
      message: `control plane at ${host}:6443`,
    });
    expect(conditionOf(ready, 'Ready')).toMatchObject({ status: 'True' });
    expect(conditionOf(ready, 'Paused')).toMatchObject({ status: 'False', reason: 'NotPaused' });

    const claim = await client.get(CLAIM_RESOURCE, { namespace: ns.name, name: 'prod-control-plane-endpoint' });
    expect(claim.spec).toEqual({ clusterName: 'prod', poolRef: pool });
    expect(claim.metadata.labels).toEqual({ 'cluster.x-k8s.io/cluster-name': 'prod' });
    expect(claim.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        kind: 'SimCluster',
        name: 'prod',
        uid: created.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      }),
    ]);

    // Deletion gives the address back before the finalizer goes.
    await client.delete(SIM_CLUSTER_RESOURCE, { namespace: ns.name, name: 'prod' });
    await eventually('SimCluster gone', async () => {
      try {
        await getSimCluster(ns.name, 'prod');
        return undefined;
      } catch (error) {
        return isNotFound(error) ? true : undefined;
      }
    });
    await expect(
      client.get(CLAIM_RESOURCE, { namespace: ns.name, name: 'prod-control-plane-endpoint' }),
    ).rejects.toSatisfy(isNotFound);
  });

  it('without an endpoint of its own waits for the Cluster one, and completes a given host with the API port', async () => {
    const ns = await withTestNamespace(undefined, 'simcluster-ep');
    const { client } = providers;
    const cluster = await createCluster(client, ns.name, 'c', { kubeconfig: false });
    await createSimCluster(ns.name, 'c', cluster, {});
    await createSimCluster(ns.name, 'given', cluster, { controlPlaneEndpoint: { host: 'cp.example.com' } });

    const waiting = await eventually('WaitingForControlPlaneEndpoint', async () => {
      const simCluster = await getSimCluster(ns.name, 'c');
      return conditionOf(simCluster, 'ControlPlaneEndpointReady')?.reason === 'WaitingForControlPlaneEndpoint'
        ? simCluster
        : undefined;
    });
    expect(waiting.status?.initialization).toBeUndefined();
    await client.mergePatch(
      CLUSTER_RESOURCE,
      { namespace: ns.name, name: 'c' },
      { spec: { controlPlaneEndpoint: { host: '192.0.2.10', port: 443 } } },
    );
    const fromCluster = await provisioned(ns.name, 'c');
    expect(conditionOf(fromCluster, 'ControlPlaneEndpointReady')).toMatchObject({ reason: 'EndpointFromCluster' });
    expect(fromCluster.spec.controlPlaneEndpoint).toBeUndefined();

    const given = await provisioned(ns.name, 'given');
    expect(given.spec.controlPlaneEndpoint).toEqual({ host: 'cp.example.com', port: 6443 });
    expect(conditionOf(given, 'ControlPlaneEndpointReady')).toMatchObject({ reason: 'EndpointFromSpec' });
  });

  it('leaves an externally managed SimCluster alone, and one without an owner Cluster waits for it', async () => {
    const ns = await withTestNamespace(undefined, 'simcluster-ext');
    const { client } = providers;
    const cluster = await createCluster(client, ns.name, 'ext', { kubeconfig: false });
    // Created first: the controller's queue is FIFO and an external object is dropped without any request, so once a
    // SimCluster created after it is provisioned, the external one has been looked at.
    await createSimCluster(
      ns.name,
      'external',
      cluster,
      { controlPlaneEndpoint: { host: '198.51.100.7' } },
      {
        'cluster.x-k8s.io/managed-by': 'someone-else',
      },
    );
    await createSimCluster(ns.name, 'orphan', undefined, { controlPlaneEndpoint: { host: '198.51.100.8' } });
    await createSimCluster(ns.name, 'witness', cluster, { controlPlaneEndpoint: { host: '198.51.100.9', port: 6443 } });
    await provisioned(ns.name, 'witness');

    for (const name of ['external', 'orphan']) {
      const untouched = await getSimCluster(ns.name, name);
      expect(untouched.metadata.finalizers).toBeUndefined();
      expect(untouched.status).toBeUndefined();
      expect(untouched.spec.controlPlaneEndpoint?.port).toBeUndefined();
    }

    // The same object is reconciled as soon as the annotation goes, and the orphan as soon as CAPI adopts it.
    const external = await getSimCluster(ns.name, 'external');
    await client.mergePatch(
      SIM_CLUSTER_RESOURCE,
      { namespace: ns.name, name: 'external' },
      { metadata: { resourceVersion: external.metadata.resourceVersion, annotations: null } },
    );
    await provisioned(ns.name, 'external');
    await client.mergePatch(
      SIM_CLUSTER_RESOURCE,
      { namespace: ns.name, name: 'orphan' },
      {
        metadata: {
          ownerReferences: [
            { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', name: 'ext', uid: cluster.metadata.uid ?? '' },
          ],
        },
      },
    );
    // A plain (non-controller) owner reference, as CAPI v1.14 sets without topology, is enough.
    await provisioned(ns.name, 'orphan');
  });

  it('pauses with its Cluster and resumes when unpaused', async () => {
    const ns = await withTestNamespace(undefined, 'simcluster-pause');
    const { client } = providers;
    const pool = await createPool(client, ns.name, 'vips', { addresses: ['10.41.0.0/28'], prefix: 28 });
    const cluster = await createCluster(client, ns.name, 'p', { kubeconfig: false, paused: true });
    await createSimCluster(ns.name, 'p', cluster, { controlPlaneEndpointPoolRef: pool });

    const paused = await eventually('Paused', async () => {
      const simCluster = await getSimCluster(ns.name, 'p');
      return conditionOf(simCluster, 'Paused')?.status === 'True' ? simCluster : undefined;
    });
    expect(paused.metadata.finalizers).toBeUndefined();
    expect(paused.status?.initialization).toBeUndefined();
    await expect(
      client.get(CLAIM_RESOURCE, { namespace: ns.name, name: 'p-control-plane-endpoint' }),
    ).rejects.toSatisfy(isNotFound);

    await client.mergePatch(CLUSTER_RESOURCE, { namespace: ns.name, name: 'p' }, { spec: { paused: false } });
    const resumed = await provisioned(ns.name, 'p');
    expect(conditionOf(resumed, 'Paused')).toMatchObject({ status: 'False' });
    expect(resumed.spec.controlPlaneEndpoint?.host).toMatch(/^10\.41\.0\.\d+$/);
  });

  it('keeps the endpoint once written: the API server refuses a change or a removal, and a port in the spec is kept', async () => {
    const ns = await withTestNamespace(undefined, 'simcluster-immutable');
    const { client } = providers;
    const pool = await createPool(client, ns.name, 'vips', { addresses: ['10.42.0.7'], prefix: 24 });
    const cluster = await createCluster(client, ns.name, 'i', { kubeconfig: false });
    await createSimCluster(ns.name, 'i', cluster, {
      controlPlaneEndpointPoolRef: pool,
      controlPlaneEndpoint: { port: 443 },
    });
    const ready = await provisioned(ns.name, 'i');
    expect(ready.spec.controlPlaneEndpoint).toEqual({ host: '10.42.0.7', port: 443 });

    const refusal = async (patch: Record<string, unknown>): Promise<string> => {
      try {
        await client.mergePatch(SIM_CLUSTER_RESOURCE, { namespace: ns.name, name: 'i' }, { spec: patch });
        return 'accepted';
      } catch (error) {
        const apiError = asKubeApiError(error);
        return apiError ? `${apiError.statusCode} ${apiError.serverMessage}` : String(error);
      }
    };
    const immutable = 'spec.controlPlaneEndpoint is immutable once host and port are set';
    for (const patch of [
      { controlPlaneEndpoint: { host: '10.42.0.8' } },
      { controlPlaneEndpoint: { port: 6443 } },
      { controlPlaneEndpoint: null },
    ]) {
      const message = await refusal(patch);
      expect(message, JSON.stringify(patch)).toContain('422');
      expect(message, JSON.stringify(patch)).toContain(immutable);
    }
    expect((await getSimCluster(ns.name, 'i')).spec.controlPlaneEndpoint).toEqual({ host: '10.42.0.7', port: 443 });
  });

  it('reports the claim waiting on an exhausted pool, and gets the address another SimCluster released on deletion', async () => {
    const ns = await withTestNamespace(undefined, 'simcluster-release');
    const { client } = providers;
    const pool = await createPool(client, ns.name, 'one-vip', { addresses: ['10.43.0.9'], prefix: 24 });
    const cluster = await createCluster(client, ns.name, 'r', { kubeconfig: false });
    await createSimCluster(ns.name, 'first', cluster, { controlPlaneEndpointPoolRef: pool });
    const first = await provisioned(ns.name, 'first');
    expect(first.spec.controlPlaneEndpoint).toEqual({ host: '10.43.0.9', port: 6443 });

    await createSimCluster(ns.name, 'second', cluster, { controlPlaneEndpointPoolRef: pool });
    const waiting = await eventually('the second SimCluster to report the exhausted pool', async () => {
      const simCluster = await getSimCluster(ns.name, 'second');
      return conditionOf(simCluster, 'ControlPlaneEndpointReady')?.reason === 'IPAddressClaimFailed'
        ? simCluster
        : undefined;
    });
    expect(conditionOf(waiting, 'ControlPlaneEndpointReady')).toMatchObject({ status: 'False' });
    expect(conditionOf(waiting, 'ControlPlaneEndpointReady')?.message).toMatch(
      /^IPAddressClaim second-control-plane-endpoint: PoolExhausted/,
    );
    expect(conditionOf(waiting, 'Ready')).toMatchObject({ status: 'False' });
    expect(waiting.spec.controlPlaneEndpoint).toBeUndefined();
    expect(waiting.status?.initialization).toBeUndefined();

    // The first SimCluster's deletion releases its claim (the finalizer waits for it), which frees the address.
    await client.delete(SIM_CLUSTER_RESOURCE, { namespace: ns.name, name: 'first' });
    await eventually('the first SimCluster and its claim gone', async () => {
      for (const [resource, name] of [
        [SIM_CLUSTER_RESOURCE, 'first'],
        [CLAIM_RESOURCE, 'first-control-plane-endpoint'],
      ] as const) {
        try {
          await client.get(resource, { namespace: ns.name, name });
          return undefined;
        } catch (error) {
          if (!isNotFound(error)) throw error;
        }
      }
      return true;
    });
    const second = await provisioned(ns.name, 'second');
    expect(second.spec.controlPlaneEndpoint).toEqual({ host: '10.43.0.9', port: 6443 });
    expect(conditionOf(second, 'ControlPlaneEndpointReady')).toMatchObject({
      status: 'True',
      reason: 'EndpointAllocated',
    });
  });
});
