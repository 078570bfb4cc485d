import type { ResourceKind } from '@tally-ipam/controller-kit';
import { Client } from '@tally-ipam/controller-kit';
import { installCRDs } from '@tally-ipam/testenv';
import { createTestNamespace, type TestNamespace, testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ensureReferenceProvider,
  REFERENCE_POOL_API_VERSION,
  type ReferenceProcess,
  type ReferenceProviderBinary,
  startReferenceProvider,
} from '../bench/reference-provider.js';
import { ADDRESSES, CLAIMS, CLUSTERS, claim, cluster, eventually, field } from './support.js';

const REFERENCE_POOLS: ResourceKind = {
  apiVersion: REFERENCE_POOL_API_VERSION,
  kind: 'InClusterIPPool',
  plural: 'inclusterippools',
  namespaced: true,
};

/**
 * The benchmark's harness for the reference provider: its binary comes out of the binary cache (built there from the
 * Go module proxy the first time), it runs against testenv with its own pool CRDs, and it binds a claim of its pool
 * kind. If this fails, the side-by-side figures of bench/claims.bench.ts mean nothing.
 */
describe('the reference in-cluster IPAM provider, as the benchmark runs it', () => {
  let binary: ReferenceProviderBinary;
  let namespace: TestNamespace;
  let client: Client;
  let reference: ReferenceProcess;

  beforeAll(async () => {
    binary = await ensureReferenceProvider({ onProgress: (line) => console.log(`reference provider: ${line}`) });
    const env = testEnv();
    await installCRDs(env.kubeConfig, [binary.crdDir]);
    client = new Client(env.kubeConfig, { fieldManager: 'reference-test' });
    namespace = await createTestNamespace(env.kubeConfig, 'reference');
    await client.create(CLUSTERS, cluster(namespace.name, 'workload'));
    await client.create(REFERENCE_POOLS, {
      apiVersion: REFERENCE_POOL_API_VERSION,
      kind: 'InClusterIPPool',
      metadata: { name: 'reference', namespace: namespace.name },
      spec: { addresses: ['10.201.0.0/29'], prefix: 24 },
    });
    reference = startReferenceProvider({
      binary: binary.path,
      kubeconfigPath: env.kubeconfigPath,
      namespace: namespace.name,
    });
    await reference.synced;
  });

  afterAll(async () => {
    await reference?.stop();
    await namespace?.delete();
  });

  it('is built into the cache with its pool CRDs', () => {
    expect(binary.version).toBe('v1.1.0');
    expect(binary.path.startsWith(binary.dir)).toBe(true);
    expect(binary.sizeBytes).toBeGreaterThan(0);
  });

  it('binds a claim of its own pool kind and releases it when the claim goes', async () => {
    const poolRef = { kind: 'InClusterIPPool', name: 'reference' };
    await client.create(CLAIMS, claim(namespace.name, 'machine-0', poolRef, 'workload'));

    const bound = await eventually('machine-0 bound by the reference', async () => {
      const object = await client.get(CLAIMS, { namespace: namespace.name, name: 'machine-0' });
      if (field(object, 'status', 'addressRef', 'name') !== 'machine-0') throw new Error('no addressRef yet');
      return object;
    });
    expect(field(bound, 'metadata', 'finalizers')).toEqual(['ipam.cluster.x-k8s.io/ReleaseAddress']);
    const address = await client.get(ADDRESSES, { namespace: namespace.name, name: 'machine-0' });
    // The lowest address of 10.201.0.0/29 that is not the network address.
    expect(field(address, 'spec')).toMatchObject({
      address: '10.201.0.1',
      prefix: 24,
      claimRef: { name: 'machine-0' },
      poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'InClusterIPPool', name: 'reference' },
    });

    await client.delete(CLAIMS, { namespace: namespace.name, name: 'machine-0' });
    await eventually('machine-0 and its IPAddress gone', async () => {
      const [claimLeft, addressLeft] = await Promise.all([
        client.list(CLAIMS, { namespace: namespace.name }),
        client.list(ADDRESSES, { namespace: namespace.name }),
      ]);
      if (claimLeft.items.length + addressLeft.items.length > 0) throw new Error('still there');
    });
  });
});
