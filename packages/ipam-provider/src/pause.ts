import { CLUSTER_NAME_LABEL } from '@tally-ipam/api-types';
import type { KubeObject } from '@tally-ipam/controller-kit/cache';
import { isClusterPausedOrAnnotated, pauseReasons } from '@tally-ipam/controller-kit/capi';
import type { Predicate } from '@tally-ipam/controller-kit/controller';
import type { StoredCluster } from './resources.js';

/**
 * A Cluster is paused when `spec.paused` is true or it carries the `cluster.x-k8s.io/paused` annotation (the IPAM
 * contract names both; CAPI's `annotations.IsPaused`).
 */
export function isClusterOrAnnotationPaused(cluster: KubeObject): boolean {
  return isClusterPausedOrAnnotated(cluster);
}

/**
 * Why reconciling an object is paused right now, or undefined: its own paused annotation, or its Cluster being
 * paused (by `spec.paused` or the annotation). `clusterOf` looks a Cluster up by namespace and name.
 */
export function pauseReason(
  object: KubeObject,
  clusterName: string | undefined,
  clusterOf: (namespace: string, name: string) => StoredCluster | undefined,
): string | undefined {
  const namespace = object.metadata.namespace;
  const cluster = clusterName && namespace ? clusterOf(namespace, clusterName) : undefined;
  const why = pauseReasons(cluster, object, { clusterAnnotation: true });
  if (why.length === 0) return undefined;
  return cluster ? `${why.join(', ')} (Cluster ${namespace}/${clusterName})` : why.join(', ');
}

/**
 * The Cluster a pool belongs to, by its `cluster.x-k8s.io/cluster-name` label. clusterctl moves labelled pools with
 * their Cluster and pauses the Cluster meanwhile, so a labelled pool pauses with it. A global pool has no namespace
 * to find the Cluster in, so only namespaced pools follow their Cluster's pause.
 */
export function poolClusterName(pool: KubeObject): string | undefined {
  return pool.metadata.labels?.[CLUSTER_NAME_LABEL] || undefined;
}

/**
 * For the Cluster watches of the claim and pool controllers: a Cluster created unpaused (claims skipped while it was
 * missing) and a Cluster that stops being paused, by `spec.paused` or by the annotation (CAPI's `ClusterUnpaused` looks
 * at `spec.paused` only).
 */
export function clusterAvailablePredicate<T extends KubeObject>(): Predicate<T> {
  return {
    create: ({ object }) => !isClusterOrAnnotationPaused(object),
    update: ({ objectOld, objectNew }) =>
      isClusterOrAnnotationPaused(objectOld) && !isClusterOrAnnotationPaused(objectNew),
    delete: () => false,
    generic: () => false,
  };
}
