import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiException, CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { TestEnv } from '@tally-ipam/testenv/vitest';

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
export const HARNESS_CLUSTER: Resource = {
  group: 'infrastructure.e2e.tally.dev',
  version: 'v1alpha1',
  plural: 'harnessclusters',
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

/**
 * Polls `probe` until it returns a value (not undefined) and returns it. For eventual effects of real controllers;
 * the deadline only bounds a hang, no assertion is about time. The error names what was awaited, the last value seen
 * and where the logs are.
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  options: { timeoutMs?: number; hint?: string; describe?: () => Promise<string> } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 180_000);
  let lastProblem = 'condition not met yet';
  for (let delay = 100; ; delay = Math.min(delay * 2, 1_000)) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
      lastProblem = 'condition not met yet';
    } catch (error) {
      lastProblem = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() > deadline) {
      const state = options.describe ? await options.describe().catch((e: unknown) => `(could not read: ${e})`) : '';
      throw new Error(
        `timed out waiting for ${what} (last: ${lastProblem})${state ? `\nlast state: ${state}` : ''}` +
          (options.hint ? `\nsee ${options.hint}` : ''),
      );
    }
    await sleep(delay);
  }
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

/**
 * The kubeconfig Cluster API uses to reach the "workload cluster", which in these tests is the management cluster
 * itself. Locally that is the admin kubeconfig (the manager runs on this machine); in a cluster, the manager runs in
 * a pod, which reaches the API server as `kubernetes.default.svc` (covered by kubeadm's serving certificate).
 */
export function workloadKubeconfig(env: TestEnv): string {
  if (!env.external) return readFileSync(env.kubeconfigPath, 'utf8');
  const kc = env.kubeConfig;
  const current = kc.getCurrentCluster();
  if (!current) throw new Error('the test kubeconfig has no current cluster');
  const clusters = kc.clusters.map((c) =>
    c.name === current.name ? { ...c, server: 'https://kubernetes.default.svc' } : c,
  );
  const rewritten = new KubeConfig();
  rewritten.loadFromOptions({
    clusters,
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
