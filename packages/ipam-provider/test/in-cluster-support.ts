/**
 * What the in-cluster kinds' test files (IP pools and prefix pools) share: pools of the reference's kinds, claims of
 * a watch filter, and the reference's status counts awaited. Bound to the file's client (`useTestFile`).
 */
import { randomBytes } from 'node:crypto';
import {
  CLUSTER_NAME_LABEL,
  IN_CLUSTER_V1ALPHA2_API_VERSION,
  IPAM_GROUP,
  WATCH_FILTER_LABEL,
} from '@tally-ipam/api-types';
import type { Client } from '@tally-ipam/controller-kit';
import {
  CLAIM_RESOURCE,
  type InClusterPoolKind,
  POOL_RESOURCES,
  type StoredClaim,
  type StoredPool,
} from '../src/index.js';
import { waitFor } from './support.js';

/** A watch filter value of its own, so that a describe's provider serves only its claims. */
export function filterValue(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/** The reference's four counts of `status.ipAddresses`. */
export interface InClusterCounts {
  readonly total: number;
  readonly used: number;
  readonly free: number;
  readonly outOfRange: number;
}

export interface InClusterHelpers {
  createInClusterPool(
    kind: InClusterPoolKind,
    name: string,
    ns: string | undefined,
    spec: Record<string, unknown>,
  ): Promise<StoredPool>;
  claimFrom(
    ns: string,
    name: string,
    pool: { kind: string; name: string },
    filter: string,
    extra?: { clusterName?: string; finalizers?: string[] },
  ): Promise<StoredClaim>;
  poolNow(kind: InClusterPoolKind, name: string, ns?: string): Promise<StoredPool>;
  waitForCounts(
    kind: InClusterPoolKind,
    name: string,
    ns: string | undefined,
    wanted: InClusterCounts,
  ): Promise<StoredPool>;
}

export function inClusterHelpers(client: Client): InClusterHelpers {
  const poolNow: InClusterHelpers['poolNow'] = (kind, name, ns) =>
    client.get(POOL_RESOURCES[kind], ns ? { namespace: ns, name } : { name });
  return {
    createInClusterPool: (kind, name, ns, spec) =>
      client.create(POOL_RESOURCES[kind], {
        apiVersion: IN_CLUSTER_V1ALPHA2_API_VERSION,
        kind,
        metadata: { name, ...(ns ? { namespace: ns } : {}) },
        spec,
      }),
    claimFrom: (ns, name, pool, filter, extra = {}) =>
      client.create(CLAIM_RESOURCE, {
        apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
        kind: 'IPAddressClaim',
        metadata: {
          name,
          namespace: ns,
          labels: {
            [WATCH_FILTER_LABEL]: filter,
            ...(extra.clusterName ? { [CLUSTER_NAME_LABEL]: extra.clusterName } : {}),
          },
          ...(extra.finalizers ? { finalizers: extra.finalizers } : {}),
        },
        spec: {
          ...(extra.clusterName ? { clusterName: extra.clusterName } : {}),
          poolRef: { apiGroup: IPAM_GROUP, kind: pool.kind, name: pool.name },
        },
      }),
    poolNow,
    waitForCounts: (kind, name, ns, wanted) =>
      waitFor(`${kind} ${name} status.ipAddresses ${JSON.stringify(wanted)}`, async () => {
        const pool = await poolNow(kind, name, ns);
        const counts = (pool.status as { ipAddresses?: Record<string, unknown> } | undefined)?.ipAddresses ?? {};
        // Key by key: the API server writes the object's keys in its own order.
        const same =
          Object.keys(counts).length === 4 && Object.entries(wanted).every(([key, value]) => counts[key] === value);
        return same ? pool : undefined;
      }),
  };
}
