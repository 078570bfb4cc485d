import {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  CLUSTER_NAME_LABEL,
  CLUSTER_RESOURCE,
  METAL3_IPAM_GROUP,
  POOL_EXHAUSTED_REASON,
  TALLY_GROUP,
} from '@tally-ipam/api-types';
import { clusterNameOf, pauseReasons } from '@tally-ipam/controller-kit/capi';
import type { Client } from '@tally-ipam/controller-kit/client';
import { isServedPoolKind } from '@tally-ipam/ipam-provider';
import { poolClusterName as metal3PoolClusterName, type StoredMetal3Pool } from '@tally-ipam/metal3-ipam';
import * as z from 'zod';
import { getOrMissing, listPaged } from '../kube/list.js';
import { readPool } from '../kube/objects.js';
import { poolCounts, readyOf } from '../kube/pools.js';
import { type AnyObject, EVENT_RESOURCE, type StoredEvent } from '../kube/resources.js';
import type { WhyReport } from '../view/why.js';

const ManagedFields = z.array(
  z.looseObject({
    manager: z.string().optional(),
    operation: z.string().optional(),
    subresource: z.string().optional(),
    time: z.string().optional(),
  }),
);

/** The newest write recorded in an object's managedFields: who, how (Update/Apply, status or not) and when. */
export function lastWriteOf(object: AnyObject): WhyReport['lastWrite'] {
  const parsed = ManagedFields.safeParse(object.metadata.managedFields);
  if (!parsed.success || parsed.data.length === 0) return undefined;
  const newest = [...parsed.data].sort((a, b) => (a.time ?? '').localeCompare(b.time ?? '')).at(-1);
  return newest
    ? {
        manager: newest.manager ?? '<unknown>',
        operation: newest.operation ?? '',
        subresource: newest.subresource ?? '',
        time: newest.time,
      }
    : undefined;
}

function eventTime(event: StoredEvent): string | undefined {
  return (
    event.series?.lastObservedTime ??
    event.eventTime ??
    event.deprecatedLastTimestamp ??
    event.metadata.creationTimestamp ??
    undefined
  );
}

/** The claim's Events (events.k8s.io/v1), oldest first; selected by name on the server and by uid here. */
async function eventsOf(client: Client, claim: AnyObject, pageSize: number): Promise<WhyReport['events']> {
  const events = await listPaged(client, EVENT_RESOURCE, {
    namespace: claim.metadata.namespace,
    fieldSelector: `regarding.name=${claim.metadata.name}`,
    pageSize,
  });
  return events
    .filter((event) => event.regarding?.uid === undefined || event.regarding.uid === claim.metadata.uid)
    .filter((event) => event.regarding?.kind === undefined || event.regarding.kind === 'IPAddressClaim')
    .map((event) => ({
      type: event.type ?? '',
      reason: event.reason ?? '',
      time: eventTime(event),
      from: event.reportingController ?? '',
      note: event.note ?? '',
      count: event.series?.count ?? event.deprecatedCount ?? 1,
    }))
    .sort((a, b) => (a.time ?? '').localeCompare(b.time ?? ''));
}

/** Why the Cluster named in `clusterName` pauses `object`, as the controller reads it (the annotation counts too). */
async function pausedBy(
  client: Client,
  object: AnyObject,
  clusterName: string | undefined,
): Promise<{ reasons: string[]; cluster: WhyReport['cluster'] }> {
  const namespace = object.metadata.namespace;
  const cluster =
    clusterName && namespace
      ? await getOrMissing(client, CLUSTER_RESOURCE, { namespace, name: clusterName })
      : undefined;
  const reasons = pauseReasons(cluster, object, { clusterAnnotation: true });
  return { reasons, cluster: clusterName ? { name: clusterName, state: cluster ? 'found' : 'missing' } : undefined };
}

/**
 * The Cluster a pool pauses with, as each front end reads it: a Tally or in-cluster pool's
 * `cluster.x-k8s.io/cluster-name` label (clusterctl moves labelled pools with their Cluster; the provider reads the
 * label whatever the kind), a Metal3 IPPool's `spec.clusterName`.
 */
function poolClusterOf(apiGroup: string, pool: AnyObject): string | undefined {
  if (apiGroup === METAL3_IPAM_GROUP) return metal3PoolClusterName(pool as StoredMetal3Pool);
  return pool.metadata.labels?.[CLUSTER_NAME_LABEL] || undefined;
}

/** Everything `why` shows of one claim; undefined when the claim does not exist. */
export async function readWhy(
  client: Client,
  namespace: string,
  name: string,
  pageSize: number,
): Promise<WhyReport | undefined> {
  const claim = await getOrMissing(client, CLAIM_RESOURCE, { namespace, name });
  if (!claim) return undefined;
  const claimPause = await pausedBy(client, claim, clusterNameOf(claim));
  const ref = claim.spec.poolRef;
  const read = await readPool(client, { apiGroup: ref.apiGroup, kind: ref.kind, name: ref.name }, namespace);
  const pool = read.state === 'found' ? read.object : undefined;
  const poolPause = pool
    ? await pausedBy(client, pool, poolClusterOf(ref.apiGroup, pool))
    : { reasons: [], cluster: undefined };
  const counts =
    pool && ref.apiGroup === TALLY_GROUP && isServedPoolKind(ref.kind)
      ? poolCounts(ref.kind, (pool as { status?: unknown }).status)
      : undefined;
  const ready = pool ? readyOf((pool as { status?: unknown }).status) : undefined;
  return {
    claim: {
      namespace,
      name,
      address: claim.status?.addressRef?.name
        ? await addressOf(client, namespace, claim.status.addressRef.name)
        : undefined,
      addressName: claim.status?.addressRef?.name,
    },
    conditions: (claim.status?.conditions ?? []).map((condition) => ({
      type: condition.type,
      status: condition.status,
      reason: condition.reason,
      message: condition.message,
      lastTransitionTime: condition.lastTransitionTime,
    })),
    pool: {
      kind: ref.kind,
      name: ref.name,
      namespace: pool?.metadata.namespace,
      state: read.state,
      ready,
      paused: poolPause.reasons,
      exhausted: counts?.free === 0 || ready?.reason === POOL_EXHAUSTED_REASON,
      counts,
    },
    claimPaused: claimPause.reasons,
    cluster: claimPause.cluster,
    events: await eventsOf(client, claim, pageSize),
    lastWrite: lastWriteOf(claim),
  };
}

async function addressOf(client: Client, namespace: string, name: string): Promise<string | undefined> {
  const address = await getOrMissing(client, ADDRESS_RESOURCE, { namespace, name });
  return address?.spec.address;
}
