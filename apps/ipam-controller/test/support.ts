import type { ResourceKind } from '@tally-ipam/controller-kit';
import { POOL_RESOURCES } from '@tally-ipam/ipam-provider';
import { LEDGER_RESOURCE } from '@tally-ipam/ledger';
import { eventually as testenvEventually, type WaitOptions } from '@tally-ipam/testenv';
import { looseResource } from '../src/demo/demo-objects.js';

export const TALLY_API_VERSION = 'ipam.cluster.x-k8s.io/v1alpha1';
export const IPAM_API_VERSION = 'ipam.cluster.x-k8s.io/v1beta2';

export { ADDRESSES, CLAIMS, CLUSTERS } from '../src/demo/demo-objects.js';
export const POOLS: ResourceKind = looseResource(POOL_RESOURCES.TallyIPPool);
export const LEDGERS: ResourceKind = looseResource(LEDGER_RESOURCE);

/**
 * testenv's `eventually` with this suite's defaults, 60 s and a try every 200 ms: its tests wait on the built
 * controller running as a separate process (or container) to start, elect itself and act.
 */
export async function eventually<T>(what: string, attempt: () => Promise<T>, options: WaitOptions = {}): Promise<T> {
  return testenvEventually(what, attempt, { timeoutMs: 60_000, intervalMs: 200, ...options });
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
