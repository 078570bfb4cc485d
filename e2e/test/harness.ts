import { readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import {
  ApiException,
  CustomObjectsApi,
  DiscoveryV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { Client } from '@tally-ipam/controller-kit/client';
import {
  CLUSTER_RESOURCE,
  MACHINE_RESOURCE,
  SECRET_RESOURCE,
  SIM_CLUSTER_RESOURCE,
  SIM_GROUP,
  SIM_MACHINE_RESOURCE,
  SIM_V1ALPHA1_API_VERSION,
} from '@tally-ipam/sim-infra';
import { createClusterKubeconfigSecret, type WaitOptions, waitFor } from '@tally-ipam/testenv';
import type { TestEnv } from '@tally-ipam/testenv/vitest';
import { inject } from 'vitest';
import { z } from 'zod';
import { APPS_PROVIDE_KEY, appLogHint, assertAppsRunning, type ProvidedApps } from './apps.js';

/** A custom resource's coordinates, so calls name their API version explicitly (the point of several tests). */
export interface Resource {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

export const CLUSTER_V1BETA2: Resource = { group: 'cluster.x-k8s.io', version: 'v1beta2', plural: 'clusters' };
export const CLUSTER_V1BETA1: Resource = { ...CLUSTER_V1BETA2, version: 'v1beta1' };
export const CLAIM_V1BETA2: Resource = {
  group: 'ipam.cluster.x-k8s.io',
  version: 'v1beta2',
  plural: 'ipaddressclaims',
};
export const CLAIM_V1BETA1: Resource = { ...CLAIM_V1BETA2, version: 'v1beta1' };
export const ADDRESS_V1BETA2: Resource = { group: 'ipam.cluster.x-k8s.io', version: 'v1beta2', plural: 'ipaddresses' };
export const SIM_CLUSTER: Resource = {
  group: 'infrastructure.cluster.x-k8s.io',
  version: 'v1alpha1',
  plural: 'simclusters',
};

/** Thin, version-explicit access to namespaced custom resources; every result is `unknown` until a schema parses it. */
export class Objects {
  readonly #api: CustomObjectsApi;

  constructor(
    kc: KubeConfig,
    readonly namespace: string,
  ) {
    this.#api = kc.makeApiClient(CustomObjectsApi);
  }

  async create(resource: Resource, body: object): Promise<unknown> {
    return this.#api.createNamespacedCustomObject({ ...resource, namespace: this.namespace, body });
  }

  async get(resource: Resource, name: string): Promise<unknown> {
    return this.#api.getNamespacedCustomObject({ ...resource, namespace: this.namespace, name });
  }

  /** The object, or undefined when it does not exist (404). */
  async find(resource: Resource, name: string): Promise<unknown> {
    try {
      return await this.get(resource, name);
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) return undefined;
      throw error;
    }
  }

  async mergePatch(resource: Resource, name: string, body: object): Promise<unknown> {
    return this.#api.patchNamespacedCustomObject(
      { ...resource, namespace: this.namespace, name, body },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  async mergePatchStatus(resource: Resource, name: string, body: object): Promise<unknown> {
    return this.#api.patchNamespacedCustomObjectStatus(
      { ...resource, namespace: this.namespace, name, body },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  async delete(resource: Resource, name: string): Promise<void> {
    await this.#api.deleteNamespacedCustomObject({ ...resource, namespace: this.namespace, name });
  }
}

/** Where to look when Cluster API did not do what a test waited for. */
export function capiLogHint(env: TestEnv): string {
  const manager = env.capiManager;
  if (manager?.logPath) return `the Cluster API manager's log: ${manager.logPath}`;
  return 'the Cluster API manager runs in the cluster: kubectl -n capi-system logs deploy/capi-controller-manager';
}

/** The two apps the global setup started; fails when one of them has stopped running. */
export function runningApps(): ProvidedApps {
  const apps = inject(APPS_PROVIDE_KEY);
  assertAppsRunning(apps);
  return apps;
}

/** Where to look when a controller did not do what a test waited for: Cluster API's and both apps' logs. */
export function logsHint(env: TestEnv): string {
  const apps = inject(APPS_PROVIDE_KEY);
  return `${capiLogHint(env)}; the IPAM controller's log: ${appLogHint(apps.ipam)}; the Sim controller's log: ${appLogHint(apps.sim)}`;
}

/**
 * testenv's `waitFor` with this suite's defaults: 180 s, as real controllers (Cluster API's among them) act on each
 * other's objects, and a try every 250 ms, as a probe may list several kinds. For eventual effects of real controllers;
 * the deadline only bounds a hang, no assertion is about time. The error names what was awaited, the last error,
 * the `describe()` state and the `hint` (where the logs are).
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  options: WaitOptions = {},
): Promise<T> {
  return waitFor(what, probe, { timeoutMs: 180_000, intervalMs: 250, ...options });
}

/** The HTTP status and message of a call that is expected to be rejected. */
export async function rejection(call: Promise<unknown>): Promise<{ code: number; body: string }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ApiException) {
      return { code: error.code, body: typeof error.body === 'string' ? error.body : JSON.stringify(error.body) };
    }
    throw error;
  }
  throw new Error('the call succeeded, but a rejection was expected');
}

/** Overrides the API server address written into the workload kubeconfig Secrets (external clusters). */
export const WORKLOAD_SERVER_ENV = 'TALLY_E2E_WORKLOAD_SERVER';

/** The `kubernetes` Service's EndpointSlice: the address kube-apiserver advertises (kind: the node's IP, port 6443). */
const ApiServerEndpointSlices = z.object({
  items: z.array(
    z.looseObject({
      endpoints: z.array(z.looseObject({ addresses: z.array(z.string()) })).nullish(),
      ports: z.array(z.looseObject({ port: z.number().nullish(), name: z.string().nullish() })).nullish(),
    }),
  ),
});

/**
 * `https://<address>:<port>` of the `kubernetes` Service's EndpointSlice in `namespace` (the API server's own slice is
 * in `default`), or undefined when the cluster publishes none.
 */
export async function advertisedApiServer(kc: KubeConfig, namespace = 'default'): Promise<string | undefined> {
  const slices = ApiServerEndpointSlices.parse(
    await kc
      .makeApiClient(DiscoveryV1Api)
      .listNamespacedEndpointSlice({ namespace, labelSelector: 'kubernetes.io/service-name=kubernetes' }),
  );
  for (const slice of slices.items) {
    const address = slice.endpoints?.[0]?.addresses[0];
    const port = slice.ports?.find((p) => p.name === 'https')?.port ?? slice.ports?.[0]?.port;
    if (address && port) return `https://${isIPv6(address) ? `[${address}]` : address}:${port}`;
  }
  return undefined;
}

/**
 * The API server address for the "workload cluster" kubeconfig Secrets (the workload cluster is the management
 * cluster itself, as in Cluster API's own envtest suites). Two clients use it: Cluster API's ClusterCache and Sim's
 * simulated kubelet (it registers Nodes there). Locally both run on this machine, so the admin kubeconfig's loopback
 * address is right. On an external cluster Cluster API runs in a pod while Sim runs here: the loopback port kind
 * forwards is not reachable from the pod, and `kubernetes.default.svc` does not resolve here. The address
 * kube-apiserver advertises — the `kubernetes` Service's endpoint, on kind the control-plane node's container IP and
 * port 6443, covered by its serving certificate — is reachable from both (from the host through Docker's bridge on
 * Linux). ClusterCache connects with it first, finds its own pod there and then switches to its in-cluster host.
 * `TALLY_E2E_WORKLOAD_SERVER` overrides the choice (e.g. Docker Desktop, where the bridge is not routed to the host).
 */
export async function workloadServer(env: TestEnv): Promise<string> {
  const override = process.env[WORKLOAD_SERVER_ENV];
  if (override) return override;
  if (env.external) {
    const advertised = await advertisedApiServer(env.kubeConfig);
    if (advertised) return advertised;
  }
  // A cluster that advertises nothing (testenv's kube-apiserver runs without the endpoint reconciler) is reached
  // through the test kubeconfig's own address.
  return env.server;
}

/** The kubeconfig of the `<cluster>-kubeconfig` Secret: the test's credentials, the server from `workloadServer`. */
export async function workloadKubeconfig(env: TestEnv): Promise<string> {
  const server = await workloadServer(env);
  return server === env.server ? readFileSync(env.kubeconfigPath, 'utf8') : kubeconfigWithServer(env, server);
}

/** The test kubeconfig (credentials, CA) with its current cluster's server replaced. */
function kubeconfigWithServer(env: TestEnv, server: string): string {
  const kc = env.kubeConfig;
  const current = kc.getCurrentCluster();
  if (!current) throw new Error(`the test kubeconfig ${env.kubeconfigPath} has no current cluster`);
  const rewritten = new KubeConfig();
  rewritten.loadFromOptions({
    clusters: kc.clusters.map((c) => (c.name === current.name ? { ...c, server } : c)),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  return rewritten.exportConfig();
}

/** Host and port of the API server, for a Cluster's control plane endpoint. */
export function apiServerEndpoint(env: TestEnv): { host: string; port: number } {
  const url = new URL(env.server);
  return { host: url.hostname, port: Number(url.port || 443) };
}

/** The bootstrap data Secret every Machine of these tests names (Sim does not read it; Cluster API needs it set). */
export const BOOTSTRAP_SECRET = 'bootstrap';
const MACHINE_KUBERNETES_VERSION = 'v1.34.1';

/** A Machine spec (standalone or a MachinePool's template) on the given Sim infrastructure object. */
export function machineSpec(clusterName: string, infrastructureKind: string, infrastructureName: string) {
  return {
    clusterName,
    version: MACHINE_KUBERNETES_VERSION,
    bootstrap: { dataSecretName: BOOTSTRAP_SECRET },
    infrastructureRef: { apiGroup: SIM_GROUP, kind: infrastructureKind, name: infrastructureName },
  };
}

/**
 * A v1beta2 `Cluster` on a `SimCluster` with `simClusterSpec`, written as a user writes them (Cluster API links
 * them), plus the `<cluster>-kubeconfig` Secret pointing back at this cluster (`workloadKubeconfig`).
 */
export async function createClusterOnSim(
  client: Client,
  env: TestEnv,
  key: { namespace: string; name: string },
  simClusterSpec: object,
): Promise<void> {
  await client.create(SIM_CLUSTER_RESOURCE, {
    apiVersion: SIM_V1ALPHA1_API_VERSION,
    kind: 'SimCluster',
    metadata: key,
    spec: simClusterSpec,
  });
  const created = await client.create(CLUSTER_RESOURCE, {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Cluster',
    metadata: key,
    spec: { infrastructureRef: { apiGroup: SIM_GROUP, kind: 'SimCluster', name: key.name } },
  });
  await createClusterKubeconfigSecret(env.kubeConfig, {
    namespace: key.namespace,
    clusterName: key.name,
    clusterUid: created.metadata.uid ?? '',
    kubeconfigYaml: await workloadKubeconfig(env),
  });
}

/** A `Machine` of `clusterName` on a `SimMachine` with `simMachineSpec`, and the bootstrap Secret it names. */
export async function createMachineOnSim(
  client: Client,
  key: { namespace: string; name: string },
  clusterName: string,
  simMachineSpec: object,
): Promise<void> {
  await client.create(SECRET_RESOURCE, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: BOOTSTRAP_SECRET, namespace: key.namespace },
    type: 'cluster.x-k8s.io/secret',
    data: { value: Buffer.from('#cloud-config\n').toString('base64') },
  });
  await client.create(SIM_MACHINE_RESOURCE, {
    apiVersion: SIM_V1ALPHA1_API_VERSION,
    kind: 'SimMachine',
    metadata: key,
    spec: simMachineSpec,
  });
  await client.create(MACHINE_RESOURCE, {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: key,
    spec: machineSpec(clusterName, 'SimMachine', key.name),
  });
}
