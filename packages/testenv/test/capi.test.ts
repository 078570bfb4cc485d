import { basename } from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { CAPI_CRD_GROUPS, type CapiCRDGroup, capiCRDPaths, installCapiCRDs } from '../src/capi.js';
import { kubeRequest } from '../src/kube-request.js';
import { clusterApiRelease, clusterApiVersion, OLDEST_CLUSTER_API_VERSION } from '../src/versions.js';
import { testEnv, withTestNamespace } from '../src/vitest.js';

describe('Cluster API CRDs from the Go module cache', () => {
  it('selects the files of the requested groups only', async () => {
    const ipam = await capiCRDPaths({ groups: ['ipam.cluster.x-k8s.io'] });
    expect(ipam.map((p) => basename(p))).toEqual([
      'ipam.cluster.x-k8s.io_ipaddressclaims.yaml',
      'ipam.cluster.x-k8s.io_ipaddresses.yaml',
    ]);
    // The release of the run (the global setup's), from its core provider's tree in the module cache.
    const capiVersion = clusterApiVersion(testEnv().capiVersion);
    expect(ipam[0]).toContain(
      `sigs.k8s.io/cluster-api@${capiVersion}/${clusterApiRelease(capiVersion).coreConfigDir}/crd/bases`,
    );
    const core = await capiCRDPaths({ groups: ['cluster.x-k8s.io'] });
    expect(core.map((p) => basename(p))).toContain('cluster.x-k8s.io_clusters.yaml');
    expect(core.every((p) => basename(p).startsWith('cluster.x-k8s.io_'))).toBe(true);
  });

  it('defaults to all groups (13 CRDs in every supported release)', async () => {
    const all = await capiCRDPaths();
    expect(all).toHaveLength(13);
    const groups = new Set(all.map((p) => basename(p).split('_')[0]));
    expect([...groups].sort()).toEqual([...CAPI_CRD_GROUPS].sort());
    // Another release is a parameter: the same 13 CRDs from where that release keeps them.
    const oldest = await capiCRDPaths({ version: OLDEST_CLUSTER_API_VERSION });
    expect(oldest.map((p) => basename(p))).toEqual(all.map((p) => basename(p)));
    expect(oldest[0]).toContain(`sigs.k8s.io/cluster-api@${OLDEST_CLUSTER_API_VERSION}/config/crd/bases`);
  });

  it('refuses an unknown group', async () => {
    await expect(capiCRDPaths({ groups: ['infrastructure.cluster.x-k8s.io' as CapiCRDGroup] })).rejects.toThrow(
      /unknown Cluster API CRD group "infrastructure\.cluster\.x-k8s\.io"/,
    );
  });

  it('installs the IPAM CRDs so an IPAddressClaim can be created at v1beta2', async () => {
    const kc = testEnv().kubeConfig;
    // Already installed by the global setup; installing again must be a no-op.
    await installCapiCRDs(kc, { groups: ['ipam.cluster.x-k8s.io'] });
    const discovery = await kubeRequest(kc, { method: 'GET', path: '/apis/ipam.cluster.x-k8s.io/v1beta2' });
    expect(discovery.status).toBe(200);
    const ns = await withTestNamespace(kc, 'capi');
    const claim = (await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: 'ipam.cluster.x-k8s.io',
      version: 'v1beta2',
      plural: 'ipaddressclaims',
      namespace: ns.name,
      body: {
        apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
        kind: 'IPAddressClaim',
        metadata: { name: 'claim' },
        spec: { poolRef: { apiGroup: 'ipam.tally.dev', kind: 'TallyIPPool', name: 'pool' } },
      },
    })) as { spec: { poolRef: Record<string, string> } };
    expect(claim.spec.poolRef).toEqual({ apiGroup: 'ipam.tally.dev', kind: 'TallyIPPool', name: 'pool' });
  });
});
