import { CLUSTER_NAME_LABEL } from '@tally-ipam/api-types';
import { hasPausedAnnotation, isClusterPaused, type KubeObject } from '@tally-ipam/controller-kit';
import type { StoredCluster } from './resources.js';

/**
 * A Cluster is paused when `spec.paused` is true or it carries the `cluster.x-k8s.io/paused` annotation (the IPAM
 * contract names both; CAPI's `annotations.IsPaused`).
 */
export function isClusterOrAnnotationPaused(cluster: KubeObject): boolean {
  return isClusterPaused(cluster) || hasPausedAnnotation(cluster);
}

/**
 * Why reconciling an object is paused right now, or undefined: its own paused annotation, or its Cluster being
 * paused. `clusterOf` looks a Cluster up by namespace and name.
 */
export function pauseReason(
  object: KubeObject,
  clusterName: string | undefined,
  clusterOf: (namespace: string, name: string) => StoredCluster | undefined,
): string | undefined {
  if (hasPausedAnnotation(object)) return `${object.kind ?? 'object'} has the cluster.x-k8s.io/paused annotation`;
  const namespace = object.metadata.namespace;
  if (!clusterName || !namespace) return undefined;
  const cluster = clusterOf(namespace, clusterName);
  if (cluster && isClusterOrAnnotationPaused(cluster)) return `Cluster ${namespace}/${clusterName} is paused`;
  return undefined;
}

/**
 * The Cluster a pool belongs to, by its `cluster.x-k8s.io/cluster-name` label. clusterctl moves labelled pools with
 * their Cluster and pauses the Cluster meanwhile, so a labelled pool pauses with it. A global pool has no namespace
 * to find the Cluster in, so only namespaced pools follow their Cluster's pause.
 */
export function poolClusterName(pool: KubeObject): string | undefined {
  return pool.metadata.labels?.[CLUSTER_NAME_LABEL] || undefined;
}
