import { toStatusCount } from '@tally-ipam/allocator';
import {
  ADDRESS_RESOURCE,
  IN_CLUSTER_IP_POOL_KINDS,
  IN_CLUSTER_IPAM_GROUP,
  IN_CLUSTER_PREFIX_POOL_KINDS,
  PoolCounts,
  TALLY_GROUP,
  TALLY_POOL_KINDS,
} from '@tally-ipam/api-types';
import type { Client } from '@tally-ipam/controller-kit/client';
import {
  isGlobalPoolKind,
  isInClusterPoolKind,
  isPrefixKind,
  isServedPoolKind,
  POOL_RESOURCES,
  type ServedPoolKind,
  type StoredPool,
} from '@tally-ipam/ipam-provider';
import {
  METAL3_ADDRESS_RESOURCE,
  METAL3_POOL_RESOURCE,
  planOfPool,
  type StoredMetal3Pool,
} from '@tally-ipam/metal3-ipam';
import * as z from 'zod';
import { type ListScope, listIfServed, listPaged } from './list.js';

/** One pool as `pools` shows it, whichever API it belongs to. */
export interface PoolRow {
  readonly apiGroup: string;
  readonly kind: string;
  readonly namespace: string | undefined;
  readonly name: string;
  readonly counts: PoolCounts | undefined;
  /** The Ready condition's status and reason, if the pool has one. */
  readonly ready: { readonly status: string; readonly reason: string; readonly message: string } | undefined;
  readonly createdAt: string | undefined;
  /** Creation times of the pool's IPAddresses, for the ETA. */
  readonly addressCreatedMs: readonly number[];
}

const ReadyOnly = z.looseObject({
  conditions: z
    .array(
      z.looseObject({
        type: z.string(),
        status: z.string(),
        reason: z.string().optional(),
        message: z.string().optional(),
      }),
    )
    .optional(),
});

/**
 * The counts of a pool's status, if they parse: `ipAddresses`, or `prefixes` for a Tally prefix pool. The in-cluster
 * kinds, prefix pools too, write `ipAddresses` with the same four counts (the reference's status shape).
 */
export function poolCounts(kind: ServedPoolKind, status: unknown): PoolCounts | undefined {
  const field = isPrefixKind(kind) && !isInClusterPoolKind(kind) ? 'prefixes' : 'ipAddresses';
  const parsed = z.looseObject({ [field]: PoolCounts }).safeParse(status);
  return parsed.success ? (parsed.data[field] as PoolCounts) : undefined;
}

/** A pool's Ready condition, if its status has one. */
export function readyOf(status: unknown): PoolRow['ready'] {
  const parsed = ReadyOnly.safeParse(status);
  const ready = parsed.success ? parsed.data.conditions?.find((condition) => condition.type === 'Ready') : undefined;
  return ready ? { status: ready.status, reason: ready.reason ?? '', message: ready.message ?? '' } : undefined;
}

function timeMs(timestamp: string | undefined): number[] {
  const ms = timestamp === undefined ? Number.NaN : Date.parse(timestamp);
  return Number.isNaN(ms) ? [] : [ms];
}

function isGlobal(kind: string): boolean {
  return isServedPoolKind(kind) && isGlobalPoolKind(kind);
}

/** The pool key an IPAddress's `spec.poolRef` (or a Metal3 IPAddress's `spec.pool`) names. */
function poolKey(kind: string, namespace: string | undefined, name: string): string {
  return `${kind}/${namespace ?? ''}/${name}`;
}

/**
 * The pools of `ipam.cluster.x-k8s.io` (namespaced ones in scope, global ones always) and their IPAddresses'
 * creation times: Tally's four kinds, and the in-cluster provider's four kinds when their CRDs are installed
 * (Tally serves them behind `--enable-in-cluster-ipam`; a cluster without their CRDs has none, as without Metal3's).
 * The IPAddresses of a global pool live in any namespace, so with global pools present they are listed cluster-wide.
 */
async function clusterAPIPools(client: Client, scope: ListScope): Promise<PoolRow[]> {
  const pools: { kind: ServedPoolKind; pool: StoredPool }[] = [];
  for (const kind of TALLY_POOL_KINDS) {
    for (const pool of await listPaged(client, POOL_RESOURCES[kind], scope)) pools.push({ kind, pool });
  }
  for (const kind of [...IN_CLUSTER_IP_POOL_KINDS, ...IN_CLUSTER_PREFIX_POOL_KINDS]) {
    for (const pool of (await listIfServed(client, POOL_RESOURCES[kind], scope)) ?? []) pools.push({ kind, pool });
  }
  if (pools.length === 0) return [];
  const anyGlobal = pools.some(({ kind }) => isGlobal(kind));
  const addresses = await listPaged(client, ADDRESS_RESOURCE, anyGlobal ? { ...scope, namespace: undefined } : scope);
  const created = new Map<string, number[]>();
  for (const address of addresses) {
    const ref = address.spec.poolRef;
    // One group for both: Tally's kinds and the in-cluster ones are told apart by kind alone.
    if (ref.apiGroup !== TALLY_GROUP) continue;
    const key = poolKey(ref.kind, isGlobal(ref.kind) ? undefined : address.metadata.namespace, ref.name);
    created.set(key, [...(created.get(key) ?? []), ...timeMs(address.metadata.creationTimestamp)]);
  }
  return pools.map(({ kind, pool }) => ({
    apiGroup: isInClusterPoolKind(kind) ? IN_CLUSTER_IPAM_GROUP : TALLY_GROUP,
    kind,
    namespace: pool.metadata.namespace,
    name: pool.metadata.name,
    counts: poolCounts(kind, pool.status),
    // The in-cluster kinds have no conditions: undefined, shown as a Metal3 IPPool's (READY Unknown, `ready: null`).
    ready: readyOf(pool.status),
    createdAt: pool.metadata.creationTimestamp,
    addressCreatedMs: created.get(poolKey(kind, pool.metadata.namespace, pool.metadata.name)) ?? [],
  }));
}

/** A Metal3 IPPool's counts: its ranges' addresses (gateways and reserved ones out), and its IPAddresses. */
function metal3Counts(pool: StoredMetal3Pool, used: number): PoolCounts | undefined {
  const plan = planOfPool(pool);
  if (!plan.ok) return undefined;
  const total = toStatusCount(plan.plan.ranges.reduce((sum, range) => sum + range.pool.allocatable.size, 0n));
  return { total, used, free: Math.max(0, total - used), outOfRange: 0 };
}

/** Metal3 IPPools (ipam.metal3.io), when that API is served; none when it is not. */
async function metal3Pools(client: Client, scope: ListScope): Promise<PoolRow[]> {
  const pools = await listIfServed(client, METAL3_POOL_RESOURCE, scope);
  if (pools === undefined || pools.length === 0) return [];
  const addresses = (await listIfServed(client, METAL3_ADDRESS_RESOURCE, scope)) ?? [];
  const created = new Map<string, number[]>();
  for (const address of addresses) {
    const key = poolKey('IPPool', address.metadata.namespace, address.spec.pool?.name ?? '');
    created.set(key, [...(created.get(key) ?? []), ...timeMs(address.metadata.creationTimestamp)]);
  }
  return pools.map((pool) => {
    const times = created.get(poolKey('IPPool', pool.metadata.namespace, pool.metadata.name)) ?? [];
    return {
      apiGroup: METAL3_POOL_RESOURCE.apiVersion.split('/')[0] ?? '',
      kind: pool.kind,
      namespace: pool.metadata.namespace,
      name: pool.metadata.name,
      counts: metal3Counts(pool, times.length),
      ready: readyOf(pool.status),
      createdAt: pool.metadata.creationTimestamp,
      addressCreatedMs: times,
    };
  });
}

/** Every pool in scope: Tally's, the in-cluster kinds' (when installed) and Metal3's (when installed). */
export async function readPools(client: Client, scope: ListScope): Promise<PoolRow[]> {
  return [...(await clusterAPIPools(client, scope)), ...(await metal3Pools(client, scope))];
}
