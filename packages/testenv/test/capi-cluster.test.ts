import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { installCapiCRDs } from '../src/capi.js';
import { CLUSTER_NAME_LABEL, CLUSTER_SECRET_TYPE, createClusterKubeconfigSecret } from '../src/capi-cluster.js';
import { testEnv, withTestNamespace } from '../src/vitest.js';

describe('createClusterKubeconfigSecret', () => {
  it('writes <cluster>-kubeconfig the way Cluster API reads it (label, type, data.value, owner)', async () => {
    const env = testEnv();
    const ns = await withTestNamespace(env.kubeConfig, 'kubeconfig-secret');
    // A real owner: with a missing one, the garbage collector could delete the Secret while the test reads it.
    await installCapiCRDs(env.kubeConfig, { groups: ['cluster.x-k8s.io'] });
    const cluster = z.object({ metadata: z.object({ uid: z.string() }) }).parse(
      await env.kubeConfig.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
        group: 'cluster.x-k8s.io',
        version: 'v1beta2',
        plural: 'clusters',
        namespace: ns.name,
        body: {
          apiVersion: 'cluster.x-k8s.io/v1beta2',
          kind: 'Cluster',
          metadata: { name: 'workload' },
          spec: { clusterNetwork: { serviceDomain: 'cluster.local' } },
        },
      }),
    );
    const kubeconfigYaml = 'apiVersion: v1\nkind: Config\n';
    await createClusterKubeconfigSecret(env.kubeConfig, {
      namespace: ns.name,
      clusterName: 'workload',
      kubeconfigYaml,
      clusterUid: cluster.metadata.uid,
    });
    const secret = await env.kubeConfig
      .makeApiClient(CoreV1Api)
      .readNamespacedSecret({ namespace: ns.name, name: 'workload-kubeconfig' });
    expect(secret.metadata?.labels).toEqual({ [CLUSTER_NAME_LABEL]: 'workload' });
    expect(secret.type).toBe(CLUSTER_SECRET_TYPE);
    expect(Buffer.from(secret.data?.value ?? '', 'base64').toString('utf8')).toBe(kubeconfigYaml);
    expect(secret.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Cluster',
        name: 'workload',
        uid: cluster.metadata.uid,
      },
    ]);
  });
});
