import { setTimeout as delay } from 'node:timers/promises';
import type { ResourceKind } from '@tally-ipam/controller-kit';

export const TALLY_API_VERSION = 'ipam.cluster.x-k8s.io/v1alpha1';
export const IPAM_API_VERSION = 'ipam.cluster.x-k8s.io/v1beta2';

export const POOLS: ResourceKind = {
  apiVersion: TALLY_API_VERSION,
  kind: 'TallyIPPool',
  plural: 'tallyippools',
  namespaced: true,
};
export const CLAIMS: ResourceKind = {
  apiVersion: IPAM_API_VERSION,
  kind: 'IPAddressClaim',
  plural: 'ipaddressclaims',
  namespaced: true,
};
export const ADDRESSES: ResourceKind = {
  apiVersion: IPAM_API_VERSION,
  kind: 'IPAddress',
  plural: 'ipaddresses',
  namespaced: true,
};
export const LOCKS: ResourceKind = {
  apiVersion: TALLY_API_VERSION,
  kind: 'TallyAddressLock',
  plural: 'tallyaddresslocks',
  namespaced: false,
};
export const CLUSTERS: ResourceKind = {
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'Cluster',
  plural: 'clusters',
  namespaced: true,
};

/** Retries `attempt` until it stops throwing; after `timeoutMs` fails with the last error. */
export async function eventually<T>(
  what: string,
  attempt: () => Promise<T>,
  { timeoutMs = 60_000, intervalMs = 200 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) {
        const detail = error instanceof Error ? error.message : String(error);
        throw new Error(`${what}: still failing after ${timeoutMs} ms: ${detail}`, { cause: error });
      }
    }
    await delay(intervalMs);
  }
}

export function field(object: unknown, ...path: string[]): unknown {
  let value: unknown = object;
  for (const key of path)
    value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}

export function claim(namespace: string, name: string, pool: { kind: string; name: string }, cluster: string) {
  return {
    apiVersion: IPAM_API_VERSION,
    kind: 'IPAddressClaim',
    metadata: { name, namespace },
    spec: { clusterName: cluster, poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: pool.kind, name: pool.name } },
  };
}

export function cluster(namespace: string, name: string) {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Cluster',
    metadata: { name, namespace },
    // The v1beta2 schema wants a non-empty spec.
    spec: { clusterNetwork: { pods: { cidrBlocks: ['192.168.0.0/16'] } } },
  };
}

export function ipPool(namespace: string, name: string, spec: Record<string, unknown>) {
  return { apiVersion: TALLY_API_VERSION, kind: 'TallyIPPool', metadata: { name, namespace }, spec };
}
