import {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  CLUSTER_KIND,
  CLUSTER_NAME_LABEL,
  CLUSTER_RESOURCE,
  CLUSTER_V1BETA2_API_VERSION,
  IPADDRESSCLAIM_KIND,
  IPAM_V1BETA2_API_VERSION,
  pluralResourceName,
  TALLY_GROUP,
  TALLY_IP_POOL_KIND,
  TALLY_PREFIX_POOL_KIND,
  TALLY_V1ALPHA1_API_VERSION,
} from '@tally-ipam/api-types';
import type { ResourceKind } from '@tally-ipam/controller-kit';
import { REQUESTED_ADDRESS_ANNOTATION } from '@tally-ipam/ipam-provider';

/** The namespace the demo's objects live in. */
export const DEMO_NAMESPACE = 'tally-demo';
export const DEMO_CLUSTER = 'demo';

export const NAMESPACES: ResourceKind = {
  apiVersion: 'v1',
  kind: 'Namespace',
  plural: 'namespaces',
  namespaced: false,
};
/**
 * A descriptor's identity without its schema: the demo (and the app's tests) write and read these objects as plain
 * objects, so the client must not parse them with the provider's stored-object schemas.
 */
export function looseResource({ apiVersion, kind, plural, namespaced }: ResourceKind): ResourceKind {
  return { apiVersion, kind, plural, namespaced };
}

export const CLUSTERS: ResourceKind = looseResource(CLUSTER_RESOURCE);
export const CLAIMS: ResourceKind = looseResource(CLAIM_RESOURCE);
export const ADDRESSES: ResourceKind = looseResource(ADDRESS_RESOURCE);

/** What the demo writes: a plain object, created as written. */
export interface DemoObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly spec: Readonly<Record<string, unknown>>;
}

export type DemoPoolKind = typeof TALLY_IP_POOL_KIND | typeof TALLY_PREFIX_POOL_KIND;

export interface DemoPool {
  readonly kind: DemoPoolKind;
  readonly resource: ResourceKind;
  readonly name: string;
  readonly spec: Readonly<Record<string, unknown>>;
}

const poolResource = (kind: DemoPoolKind): ResourceKind => ({
  apiVersion: TALLY_V1ALPHA1_API_VERSION,
  kind,
  plural: pluralResourceName(kind),
  namespaced: true,
});

/** An IPv4 pool with a static reservation, an IPv6 pool, and a pool of /64 prefixes. */
export const DEMO_POOLS: readonly DemoPool[] = [
  {
    kind: TALLY_IP_POOL_KIND,
    resource: poolResource(TALLY_IP_POOL_KIND),
    name: 'workers-v4',
    spec: {
      addresses: ['10.10.0.10-10.10.0.99'],
      prefix: 24,
      gateway: '10.10.0.1',
      excludedAddresses: ['10.10.0.50-10.10.0.59'],
      reservations: [{ claimName: 'demo-control-plane-0', address: '10.10.0.10' }],
    },
  },
  {
    kind: TALLY_IP_POOL_KIND,
    resource: poolResource(TALLY_IP_POOL_KIND),
    name: 'workers-v6',
    spec: { addresses: ['fd00:10::100-fd00:10::1ff'], prefix: 64, gateway: 'fd00:10::1' },
  },
  {
    kind: TALLY_PREFIX_POOL_KIND,
    resource: poolResource(TALLY_PREFIX_POOL_KIND),
    name: 'node-prefixes',
    spec: { prefixes: ['fd00:200::/48'], allocationPrefixLength: 64, excludedPrefixes: ['fd00:200::/64'] },
  },
];

export interface DemoClaim {
  readonly name: string;
  readonly pool: DemoPool;
  /** Why this claim is in the demo, printed next to it. */
  readonly note: string;
  readonly requestedAddress?: string;
}

const [v4, v6, prefixes] = DEMO_POOLS as [DemoPool, DemoPool, DemoPool];

export const DEMO_CLAIMS: readonly DemoClaim[] = [
  { name: 'demo-control-plane-0', pool: v4, note: 'reserved in the pool spec' },
  { name: 'demo-worker-0', pool: v4, note: 'lowest free' },
  { name: 'demo-worker-1', pool: v4, note: 'lowest free' },
  { name: 'demo-worker-2', pool: v4, note: 'requested address', requestedAddress: '10.10.0.42' },
  { name: 'demo-worker-0-v6', pool: v6, note: 'IPv6' },
  { name: 'demo-worker-1-v6', pool: v6, note: 'IPv6' },
  { name: 'demo-worker-0-prefix', pool: prefixes, note: 'a /64 prefix' },
];

export function poolObject(pool: DemoPool): DemoObject {
  return {
    apiVersion: TALLY_V1ALPHA1_API_VERSION,
    kind: pool.kind,
    metadata: { name: pool.name, namespace: DEMO_NAMESPACE, labels: { [CLUSTER_NAME_LABEL]: DEMO_CLUSTER } },
    spec: pool.spec,
  };
}

export function claimObject(claim: DemoClaim): DemoObject {
  return {
    apiVersion: IPAM_V1BETA2_API_VERSION,
    kind: IPADDRESSCLAIM_KIND,
    metadata: {
      name: claim.name,
      namespace: DEMO_NAMESPACE,
      labels: { [CLUSTER_NAME_LABEL]: DEMO_CLUSTER },
      ...(claim.requestedAddress ? { annotations: { [REQUESTED_ADDRESS_ANNOTATION]: claim.requestedAddress } } : {}),
    },
    spec: {
      clusterName: DEMO_CLUSTER,
      poolRef: { apiGroup: TALLY_GROUP, kind: claim.pool.kind, name: claim.pool.name },
    },
  };
}

export function clusterObject(): DemoObject {
  return {
    apiVersion: CLUSTER_V1BETA2_API_VERSION,
    kind: CLUSTER_KIND,
    metadata: { name: DEMO_CLUSTER, namespace: DEMO_NAMESPACE },
    // The v1beta2 schema wants a non-empty spec; a network is what a real Cluster would carry anyway.
    spec: { clusterNetwork: { pods: { cidrBlocks: ['192.168.0.0/16'] } } },
  };
}
