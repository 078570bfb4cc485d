import { CoreV1Api } from '@kubernetes/client-node';
import { parseCluster } from '@tally-ipam/api-types';
import { clusterApiVersion, createClusterKubeconfigSecret } from '@tally-ipam/testenv';
import { testEnv, withTestNamespace } from '@tally-ipam/testenv/vitest';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  apiServerEndpoint,
  CLUSTER_V1BETA1,
  CLUSTER_V1BETA2,
  eventually,
  logsHint,
  Objects,
  rejection,
  runningApps,
  SIM_CLUSTER,
  workloadKubeconfig,
} from './harness.js';

const Condition = z.object({ type: z.string(), status: z.string(), reason: z.string().optional() });

/** The parts of a v1beta2 Cluster these tests look at. */
const ClusterV1Beta2 = z.object({
  metadata: z.object({ uid: z.string(), finalizers: z.array(z.string()).optional() }),
  spec: z.object({
    controlPlaneEndpoint: z.object({ host: z.string().optional(), port: z.number().optional() }).optional(),
  }),
  status: z
    .object({
      phase: z.string().optional(),
      initialization: z.object({ infrastructureProvisioned: z.boolean().optional() }).optional(),
      failureDomains: z.array(z.object({ name: z.string(), controlPlane: z.boolean().optional() })).optional(),
      conditions: z.array(Condition).optional(),
    })
    .optional(),
});
type ClusterV1Beta2 = z.infer<typeof ClusterV1Beta2>;

/** The same Cluster as a v1beta1 client (e.g. an older provider) sees it through Cluster API's conversion webhook. */
const ClusterV1Beta1 = z.object({
  spec: z.object({
    infrastructureRef: z.object({
      apiVersion: z.string().optional(),
      kind: z.string(),
      name: z.string(),
      namespace: z.string().optional(),
    }),
  }),
  status: z.object({ phase: z.string().optional(), infrastructureReady: z.boolean().optional() }),
});

const SimClusterView = z.object({
  metadata: z.object({
    labels: z.record(z.string(), z.string()).optional(),
    ownerReferences: z
      .array(z.object({ kind: z.string(), name: z.string(), uid: z.string(), controller: z.boolean().optional() }))
      .optional(),
  }),
});

const CLUSTER_FINALIZER = 'cluster.cluster.x-k8s.io';

function condition(cluster: ClusterV1Beta2, type: string): z.infer<typeof Condition> | undefined {
  return cluster.status?.conditions?.find((c) => c.type === type);
}

/** The minor of a Cluster API release, e.g. 14 for v1.14.2. */
function clusterApiMinor(version: string): number {
  const minor = /^v1\.(\d+)\.\d+$/.exec(version)?.[1];
  if (!minor) throw new Error(`Cluster API release ${version} is not v1.MINOR.PATCH`);
  return Number(minor);
}

describe('the real Cluster API manager reconciles a Cluster on Sim', () => {
  it('adds its finalizer, provisions it once the SimCluster reports provisioned, and deletes it', async () => {
    runningApps();
    const env = testEnv();
    const kc = env.kubeConfig;
    const ns = await withTestNamespace(kc, 'e2e-cluster');
    const objects = new Objects(kc, ns.name);
    const hint = logsHint(env);
    const name = 'sim';
    const endpoint = apiServerEndpoint(env);
    const readCluster = async (): Promise<ClusterV1Beta2> =>
      ClusterV1Beta2.parse(await objects.get(CLUSTER_V1BETA2, name));
    const describeCluster = (): Promise<unknown> => objects.find(CLUSTER_V1BETA2, name);

    // Sim copies the endpoint and failure domains from its spec and reports provisioned on its own.
    await objects.create(SIM_CLUSTER, {
      apiVersion: `${SIM_CLUSTER.group}/${SIM_CLUSTER.version}`,
      kind: 'SimCluster',
      metadata: { name },
      spec: { controlPlaneEndpoint: endpoint, failureDomains: [{ name: 'zone-a', controlPlane: true }] },
    });
    const created = ClusterV1Beta2.parse(
      await objects.create(CLUSTER_V1BETA2, {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Cluster',
        metadata: { name },
        spec: { infrastructureRef: { apiGroup: SIM_CLUSTER.group, kind: 'SimCluster', name } },
      }),
    );
    // The management cluster doubles as the workload cluster, as in Cluster API's own envtest suites.
    await createClusterKubeconfigSecret(kc, {
      namespace: ns.name,
      clusterName: name,
      kubeconfigYaml: await workloadKubeconfig(env),
      clusterUid: created.metadata.uid,
    });

    const infra = await eventually(
      'the SimCluster to be owned by the Cluster',
      async () => {
        const view = SimClusterView.parse(await objects.get(SIM_CLUSTER, name));
        return view.metadata.ownerReferences?.some((o) => o.kind === 'Cluster' && o.uid === created.metadata.uid)
          ? view
          : undefined;
      },
      { hint },
    );
    expect(infra.metadata.labels?.['cluster.x-k8s.io/cluster-name']).toBe(name);
    // Up to v1.13 the Cluster is the InfraCluster's controller; since v1.14 only a Cluster with a topology is (its
    // `ensureOwnerRefAndLabel`: `Controller: cluster.Spec.Topology.IsDefined()`), so that other tools may control it.
    const controllerOwner = clusterApiMinor(clusterApiVersion(env.capiVersion)) < 14;
    expect(infra.metadata.ownerReferences?.find((o) => o.kind === 'Cluster')?.controller ?? false).toBe(
      controllerOwner,
    );

    const provisioned = await eventually(
      'the Cluster to become Provisioned',
      async () => {
        const cluster = await readCluster();
        const provisioned =
          cluster.metadata.finalizers?.includes(CLUSTER_FINALIZER) && cluster.status?.phase === 'Provisioned';
        return provisioned ? cluster : undefined;
      },
      { hint, describe: describeCluster },
    );
    expect(provisioned.status?.initialization?.infrastructureProvisioned).toBe(true);
    expect(provisioned.spec.controlPlaneEndpoint).toEqual(endpoint);
    expect(provisioned.status?.failureDomains).toEqual([{ name: 'zone-a', controlPlane: true }]);
    expect(condition(provisioned, 'InfrastructureReady')?.status).toBe('True');
    // Tally's own Cluster schema accepts what the real manager writes.
    const parsed = parseCluster(await objects.get(CLUSTER_V1BETA2, name));
    expect(parsed.success ? [] : parsed.error.issues).toEqual([]);

    // Through the kubeconfig Secret, the ClusterCache connects to the "workload cluster" (the same API server).
    const connected = await eventually(
      'the RemoteConnectionProbe condition to turn True',
      async () => {
        const cluster = await readCluster();
        return condition(cluster, 'RemoteConnectionProbe')?.status === 'True' ? cluster : undefined;
      },
      { hint, describe: describeCluster },
    );
    expect(condition(connected, 'RemoteConnectionProbe')?.reason).toBe('ProbeSucceeded');

    // A v1beta1 client reads the same object through the conversion webhook: the contract-versioned reference
    // gets its apiVersion from the CRD's contract label, and the v1beta1 status fields are filled in.
    const v1beta1 = ClusterV1Beta1.parse(await objects.get(CLUSTER_V1BETA1, name));
    expect(v1beta1.spec.infrastructureRef).toMatchObject({
      apiVersion: `${SIM_CLUSTER.group}/${SIM_CLUSTER.version}`,
      kind: 'SimCluster',
      name,
    });
    expect(v1beta1.status).toMatchObject({ phase: 'Provisioned', infrastructureReady: true });

    await objects.delete(CLUSTER_V1BETA2, name);
    await eventually(
      'the Cluster, and with it the SimCluster, to be deleted',
      async () => {
        const [cluster, simCluster] = await Promise.all([
          objects.find(CLUSTER_V1BETA2, name),
          objects.find(SIM_CLUSTER, name),
        ]);
        return cluster === undefined && simCluster === undefined ? true : undefined;
      },
      { hint, describe: describeCluster },
    );
    // The Secret was owned by the Cluster: kube-controller-manager's garbage collector removes it.
    const core = kc.makeApiClient(CoreV1Api);
    await eventually(
      'the kubeconfig Secret to be garbage collected',
      async () => {
        const secrets = await core.listNamespacedSecret({ namespace: ns.name });
        return secrets.items.some((s) => s.metadata?.name === `${name}-kubeconfig`) ? undefined : true;
      },
      { hint: 'kube-controller-manager (garbage collector)' },
    );
  });

  it('rejects a Cluster with neither infrastructureRef nor controlPlaneRef (Cluster API validating webhook)', async () => {
    const env = testEnv();
    const ns = await withTestNamespace(env.kubeConfig, 'e2e-cluster-invalid');
    const objects = new Objects(env.kubeConfig, ns.name);
    const rejected = await rejection(
      objects.create(CLUSTER_V1BETA2, {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Cluster',
        metadata: { name: 'empty' },
        // Not empty: the CRD schema itself requires at least one property.
        spec: { clusterNetwork: { serviceDomain: 'cluster.local' } },
      }),
    );
    expect(rejected.code).toBe(422);
    expect(rejected.body).toContain('one of spec.controlPlaneRef, spec.infrastructureRef or spec.topology must be set');
    expect(await objects.find(CLUSTER_V1BETA2, 'empty')).toBeUndefined();
  });
});
