import {
  type ControlPlane,
  createTestNamespace,
  installCapiCRDs,
  installCRDs,
  startControlPlane,
  type TestNamespace,
} from '@tally-ipam/testenv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../src/cache/object.js';
import { CLUSTER_NAME_LABEL, CLUSTER_RESOURCE, PAUSED_ANNOTATION } from '../src/capi/constants.js';
import { clusterNameOf, getClusterOf, getOwnerCluster, isPaused } from '../src/capi/pause.js';
import { Client } from '../src/client/client.js';
import { isNotFound } from '../src/client/errors.js';
import { addFinalizer, removeFinalizer } from '../src/client/finalizers.js';
import { setControllerReference, setOwnerReference } from '../src/client/owner-references.js';
import { CONFIG_MAPS, installCRDsReliably, THING_CRD_DIR, THINGS, waitFor } from './fixtures/runtime-support.js';

// A private control plane with kube-controller-manager (the garbage collector) and Cluster API's core CRDs.
let plane: ControlPlane;
let namespace: TestNamespace;
let client: Client;

beforeAll(async () => {
  plane = await startControlPlane({});
  await installCRDsReliably(plane.kubeConfig(), async () => {
    await installCRDs(plane.kubeConfig(), [THING_CRD_DIR]);
    await installCapiCRDs(plane.kubeConfig(), { groups: ['cluster.x-k8s.io'] });
  });
  // Started after the CRDs exist, so the garbage collector's first discovery already knows Things; otherwise it
  // learns of them only at its periodic rediscovery (30 s).
  await plane.startControllerManager();
  namespace = await createTestNamespace(plane.kubeConfig(), 'runtime-gc');
  client = new Client(plane.kubeConfig(), { fieldManager: 'runtime-test' });
}, 240_000);

afterAll(async () => {
  client?.close();
  await namespace?.delete();
  await plane?.stop();
});

async function exists(resource: typeof CONFIG_MAPS | typeof THINGS, name: string): Promise<boolean> {
  try {
    await client.get(resource, { namespace: namespace.name, name });
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

describe('owner references with the garbage collector', () => {
  it('deleting the owner deletes its dependents (background cascade)', async () => {
    const owner = await client.create(THINGS, {
      metadata: { name: 'gc-owner', namespace: namespace.name },
      spec: { size: 1 },
    });
    const controlled = setControllerReference(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gc-controlled', namespace: namespace.name } },
      owner,
    );
    const referenced = setOwnerReference(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gc-referenced', namespace: namespace.name } },
      owner,
    );
    const child = await client.create(CONFIG_MAPS, controlled);
    await client.create(CONFIG_MAPS, referenced);
    expect(child.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        kind: 'Thing',
        name: 'gc-owner',
        uid: owner.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      }),
    ]);

    await client.delete(THINGS, owner.metadata, { propagationPolicy: 'Background' });
    await waitFor(
      'the dependents to be collected',
      async () =>
        !(await exists(CONFIG_MAPS, 'gc-controlled')) && !(await exists(CONFIG_MAPS, 'gc-referenced'))
          ? true
          : undefined,
      // testenv's default deadline, a bound for a hang: the collector knows Things from its first discovery.
      { intervalMs: 200 },
    );
    expect(await exists(THINGS, 'gc-owner')).toBe(false);
  });

  it('foreground deletion of the owner waits for a blocking dependent held by a finalizer', async () => {
    const owner = await client.create(THINGS, {
      metadata: { name: 'fg-owner', namespace: namespace.name },
      spec: { size: 1 },
    });
    const dependent = await client.create(
      CONFIG_MAPS,
      setControllerReference(
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fg-dependent', namespace: namespace.name } },
        owner,
      ),
    );
    const held = await addFinalizer(client, CONFIG_MAPS, dependent, 'runtime-test.tally.dev/hold');

    await client.delete(THINGS, owner.metadata, { propagationPolicy: 'Foreground' });
    // The GC marks the dependent for deletion; the finalizer keeps it, and blockOwnerDeletion keeps the owner.
    const terminating = await waitFor(
      'the dependent to be marked for deletion',
      async () => {
        const current = await client.get(CONFIG_MAPS, dependent.metadata);
        return current.metadata.deletionTimestamp ? current : undefined;
      },
      // testenv's default deadline, a bound for a hang: the collector knows Things from its first discovery.
      { intervalMs: 200 },
    );
    const blockedOwner = await client.get(THINGS, owner.metadata);
    expect(blockedOwner.metadata.deletionTimestamp).toBeTruthy();
    expect(blockedOwner.metadata.finalizers).toContain('foregroundDeletion');

    await removeFinalizer(
      client,
      CONFIG_MAPS,
      { ...terminating, metadata: { ...terminating.metadata } },
      'runtime-test.tally.dev/hold',
    );
    expect(held.metadata.finalizers).toContain('runtime-test.tally.dev/hold');
    await waitFor(
      'owner and dependent to be gone',
      async () =>
        !(await exists(THINGS, 'fg-owner')) && !(await exists(CONFIG_MAPS, 'fg-dependent')) ? true : undefined,
      // testenv's default deadline, a bound for a hang: the collector knows Things from its first discovery.
      { intervalMs: 200 },
    );
  });
});

describe('CAPI cluster lookups against real Cluster objects', () => {
  it('finds the Cluster by label or owner reference and sees spec.paused and the paused annotation', async () => {
    const cluster = await client.create(CLUSTER_RESOURCE, {
      metadata: { name: 'workload', namespace: namespace.name },
      // v1beta2 requires a non-empty spec.
      spec: { paused: false },
    });
    const member = await client.create(CONFIG_MAPS, {
      metadata: { name: 'member', namespace: namespace.name, labels: { [CLUSTER_NAME_LABEL]: 'workload' } },
    });
    expect(clusterNameOf(member)).toBe('workload');
    const found = await getClusterOf(client, member);
    expect(found?.metadata.uid).toBe(cluster.metadata.uid);
    expect(isPaused(found, member)).toBe(false);

    const owned = await client.create(
      CONFIG_MAPS,
      setOwnerReference(
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owned-by-cluster', namespace: namespace.name } },
        cluster,
      ),
    );
    expect((await getOwnerCluster(client, owned))?.metadata.name).toBe('workload');

    await client.mergePatch(CLUSTER_RESOURCE, cluster.metadata, { spec: { paused: true } });
    expect(isPaused(await getClusterOf(client, member), member)).toBe(true);
    await client.mergePatch(CLUSTER_RESOURCE, cluster.metadata, { spec: { paused: false } });
    const annotated = await client.mergePatch(CONFIG_MAPS, member.metadata, {
      metadata: { annotations: { [PAUSED_ANNOTATION]: '' } },
    });
    expect(isPaused(await getClusterOf(client, annotated), annotated)).toBe(true);
  });

  it('answers undefined for a missing Cluster or an object naming none', async () => {
    const orphan: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'orphan', namespace: namespace.name, labels: { [CLUSTER_NAME_LABEL]: 'no-such-cluster' } },
    };
    expect(await getClusterOf(client, orphan)).toBeUndefined();
    expect(
      await getClusterOf(client, { ...orphan, metadata: { name: 'x', namespace: namespace.name } }),
    ).toBeUndefined();
    expect(await getOwnerCluster(client, orphan)).toBeUndefined();
  });
});
