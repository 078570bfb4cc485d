import { z } from 'zod';
import type { KubeObject } from '../cache/object.js';
import type { Client, RequestOptions } from '../client/client.js';
import { isNotFound } from '../client/errors.js';
import { findOwnerReference } from '../client/owner-references.js';
import type { ConditionInput } from './conditions.js';
import {
  CLUSTER_API_GROUP,
  CLUSTER_NAME_LABEL,
  CLUSTER_RESOURCE,
  NOT_PAUSED_REASON,
  PAUSED_ANNOTATION,
  PAUSED_CONDITION,
  PAUSED_REASON,
} from './constants.js';

const clusterNameSpecSchema = z.looseObject({
  spec: z.looseObject({ clusterName: z.string().optional() }).optional(),
});

const pausedSpecSchema = z.looseObject({
  spec: z.looseObject({ paused: z.boolean().optional() }).optional(),
});

/**
 * The name of the Cluster an object belongs to: `spec.clusterName` (IPAddressClaim, Machine, MachinePool, ...),
 * else the `cluster.x-k8s.io/cluster-name` label. Undefined when it has neither.
 */
export function clusterNameOf(object: KubeObject): string | undefined {
  const parsed = clusterNameSpecSchema.safeParse(object);
  const fromSpec = parsed.success ? parsed.data.spec?.clusterName : undefined;
  if (fromSpec) return fromSpec;
  const fromLabel = object.metadata.labels?.[CLUSTER_NAME_LABEL];
  return fromLabel ? fromLabel : undefined;
}

/** True when the object carries the `cluster.x-k8s.io/paused` annotation (any value, as in CAPI's HasPaused). */
export function hasPausedAnnotation(object: KubeObject): boolean {
  return object.metadata.annotations !== undefined && Object.hasOwn(object.metadata.annotations, PAUSED_ANNOTATION);
}

/** True when the Cluster's `spec.paused` is true. */
export function isClusterPaused(cluster: KubeObject): boolean {
  const parsed = pausedSpecSchema.safeParse(cluster);
  return parsed.success && parsed.data.spec?.paused === true;
}

/**
 * True when the Cluster is paused by either sign the IPAM contract names: `spec.paused` or the paused annotation on
 * the Cluster itself. CAPI's `annotations.IsPaused` reads only `spec.paused` of the Cluster (see `PauseOptions`).
 */
export function isClusterPausedOrAnnotated(cluster: KubeObject): boolean {
  return isClusterPaused(cluster) || hasPausedAnnotation(cluster);
}

/**
 * Which signs pause a reconcile. The default is CAPI's `annotations.IsPaused(cluster, object)`: the Cluster's
 * `spec.paused`, or the paused annotation on the object. The IPAM contract also names the paused annotation on the
 * Cluster: `clusterAnnotation: true` counts it.
 */
export interface PauseOptions {
  readonly clusterAnnotation?: boolean | undefined;
}

/**
 * Why reconciling `object` is paused, one sentence per sign present (the Cluster's first); empty when it is not.
 * `cluster` may be undefined (the object names none, or it does not exist).
 */
export function pauseReasons(
  cluster: KubeObject | undefined,
  object: KubeObject,
  options: PauseOptions = {},
): string[] {
  const why: string[] = [];
  if (cluster !== undefined && isClusterPaused(cluster)) why.push('Cluster spec.paused is set');
  if (cluster !== undefined && options.clusterAnnotation === true && hasPausedAnnotation(cluster)) {
    why.push(`Cluster has the ${PAUSED_ANNOTATION} annotation`);
  }
  if (hasPausedAnnotation(object)) why.push(`${object.kind ?? 'object'} has the ${PAUSED_ANNOTATION} annotation`);
  return why;
}

/**
 * CAPI's `annotations.IsPaused(cluster, object)`: reconciling `object` is paused when its Cluster has
 * `spec.paused: true` or the object has the paused annotation (or, with `clusterAnnotation`, the Cluster has it).
 * `cluster` may be undefined (not found / none).
 */
export function isPaused(cluster: KubeObject | undefined, object: KubeObject, options: PauseOptions = {}): boolean {
  return pauseReasons(cluster, object, options).length > 0;
}

/**
 * The `Paused` condition an object should carry (CAPI's `paused.EnsurePausedCondition`): True with reason `Paused`
 * and a message saying why, or False with reason `NotPaused`. Feed it to `setCondition`, or let
 * `ensurePausedCondition` write it.
 */
export function pausedCondition(
  cluster: KubeObject | undefined,
  object: KubeObject,
  options: PauseOptions = {},
): ConditionInput {
  const observedGeneration = object.metadata.generation ?? 0;
  const why = pauseReasons(cluster, object, options);
  return why.length > 0
    ? { type: PAUSED_CONDITION, status: 'True', reason: PAUSED_REASON, message: why.join(', '), observedGeneration }
    : { type: PAUSED_CONDITION, status: 'False', reason: NOT_PAUSED_REASON, message: '', observedGeneration };
}

/** The name of the Cluster that owns `object` through an owner reference (any version, controller or not). */
export function ownerClusterName(object: KubeObject): string | undefined {
  return findOwnerReference(object, { apiGroup: CLUSTER_API_GROUP, kind: 'Cluster' })?.name;
}

/**
 * Reads the Cluster `object` belongs to (by `clusterNameOf`, in the object's namespace). Undefined when the object
 * names no cluster or the Cluster does not exist; other errors propagate.
 */
export async function getClusterOf(
  client: Client,
  object: KubeObject,
  options: RequestOptions = {},
): Promise<KubeObject | undefined> {
  const name = clusterNameOf(object);
  return name ? getClusterIfExists(client, object.metadata.namespace, name, options) : undefined;
}

/** Reads the Cluster that owns `object` through an owner reference; undefined when there is none or it is gone. */
export async function getOwnerCluster(
  client: Client,
  object: KubeObject,
  options: RequestOptions = {},
): Promise<KubeObject | undefined> {
  const name = ownerClusterName(object);
  return name ? getClusterIfExists(client, object.metadata.namespace, name, options) : undefined;
}

async function getClusterIfExists(
  client: Client,
  namespace: string | undefined,
  name: string,
  options: RequestOptions,
): Promise<KubeObject | undefined> {
  if (!namespace) throw new Error(`cannot look up Cluster "${name}": the object referring to it has no namespace`);
  try {
    return await client.get(CLUSTER_RESOURCE, { namespace, name }, options);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}
