import { testEnv, withTestNamespace } from '@tally-ipam/testenv/vitest';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ADDRESS_V1BETA2,
  CLAIM_V1BETA1,
  CLAIM_V1BETA2,
  CLUSTER_V1BETA2,
  eventually,
  logsHint,
  Objects,
  rejection,
  runningApps,
  SIM_CLUSTER,
} from './harness.js';

const POOL = { group: 'ipam.cluster.x-k8s.io', version: 'v1alpha1', plural: 'tallyippools' };
const POOL_REF = { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: 'e2e-pool' };

const Claim = z.object({
  metadata: z.object({ finalizers: z.array(z.string()).optional() }),
  status: z
    .object({
      addressRef: z.object({ name: z.string() }).optional(),
      conditions: z.array(z.object({ type: z.string(), status: z.string() })).optional(),
    })
    .optional(),
});
const ClaimV1Beta1 = z.object({
  status: z.object({
    addressRef: z.object({ name: z.string() }).optional(),
    v1beta2: z.object({ conditions: z.array(z.object({ type: z.string(), status: z.string() })) }).optional(),
  }),
});
const Address = z.object({
  spec: z.object({
    address: z.string(),
    prefix: z.number(),
    gateway: z.string().optional(),
    claimRef: z.object({ name: z.string() }),
    poolRef: z.object({ apiGroup: z.string(), kind: z.string(), name: z.string() }),
  }),
});
const ClusterFinalizers = z.object({ metadata: z.object({ finalizers: z.array(z.string()).optional() }) });

describe('the Tally IPAM controller next to the real Cluster API manager', () => {
  it('fulfils a claim of a Cluster API-managed Cluster with an IPAddress that passes Cluster API validation', async () => {
    const env = testEnv();
    const ns = await withTestNamespace(env.kubeConfig, 'e2e-ipam');
    const objects = new Objects(env.kubeConfig, ns.name);
    const hint = logsHint(env);

    // A Cluster that the real manager reconciles (its finalizer proves it), for the claims' clusterName.
    await objects.create(SIM_CLUSTER, {
      apiVersion: `${SIM_CLUSTER.group}/${SIM_CLUSTER.version}`,
      kind: 'SimCluster',
      metadata: { name: 'workload' },
      spec: { controlPlaneEndpoint: { host: '192.0.2.10', port: 6443 } },
    });
    await objects.create(CLUSTER_V1BETA2, {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { name: 'workload' },
      spec: { infrastructureRef: { apiGroup: SIM_CLUSTER.group, kind: 'SimCluster', name: 'workload' } },
    });
    await eventually(
      'Cluster API to take over the Cluster (finalizer)',
      async () =>
        ClusterFinalizers.parse(await objects.get(CLUSTER_V1BETA2, 'workload')).metadata.finalizers?.includes(
          'cluster.cluster.x-k8s.io',
        ) || undefined,
      { hint },
    );
    await objects.create(POOL, {
      apiVersion: 'ipam.cluster.x-k8s.io/v1alpha1',
      kind: 'TallyIPPool',
      metadata: { name: POOL_REF.name },
      spec: { addresses: ['10.77.0.0/29'], prefix: 24, gateway: '10.77.0.254' },
    });

    await objects.create(CLAIM_V1BETA2, {
      apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
      kind: 'IPAddressClaim',
      metadata: { name: 'machine-0', labels: { 'cluster.x-k8s.io/cluster-name': 'workload' } },
      spec: { clusterName: 'workload', poolRef: POOL_REF },
    });
    const bound = await eventually(
      'the claim to be bound to an IPAddress',
      async () => {
        runningApps();
        const claim = Claim.parse(await objects.get(CLAIM_V1BETA2, 'machine-0'));
        return claim.status?.addressRef?.name ? claim : undefined;
      },
      { hint: hint, describe: () => objects.find(CLAIM_V1BETA2, 'machine-0') },
    );
    expect(bound.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    const addressName = bound.status?.addressRef?.name ?? '';
    // Created through Cluster API's IPAddress validating webhook (address in the prefix, pool reference complete).
    const address = Address.parse(await objects.get(ADDRESS_V1BETA2, addressName));
    expect(address.spec).toEqual({
      address: '10.77.0.1',
      prefix: 24,
      gateway: '10.77.0.254',
      claimRef: { name: 'machine-0' },
      poolRef: POOL_REF,
    });
    // An infrastructure provider on the v1beta1 IPAM API sees the claim bound, through the conversion webhook.
    const v1beta1 = ClaimV1Beta1.parse(await objects.get(CLAIM_V1BETA1, 'machine-0'));
    expect(v1beta1.status.addressRef).toEqual({ name: addressName });
    expect(v1beta1.status.v1beta2?.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
    // Cluster API keeps the allocation immutable.
    const rejected = await rejection(
      objects.mergePatch(ADDRESS_V1BETA2, addressName, { spec: { address: '10.77.0.2' } }),
    );
    expect(rejected.code).toBe(403);
    expect(rejected.body).toContain('IPAddress spec is immutable');

    await objects.delete(CLAIM_V1BETA2, 'machine-0');
    await eventually(
      'the claim and its IPAddress to be deleted',
      async () => {
        const [claim, ipAddress] = await Promise.all([
          objects.find(CLAIM_V1BETA2, 'machine-0'),
          objects.find(ADDRESS_V1BETA2, addressName),
        ]);
        return claim === undefined && ipAddress === undefined ? true : undefined;
      },
      { hint: hint },
    );
    runningApps();
  });
});
