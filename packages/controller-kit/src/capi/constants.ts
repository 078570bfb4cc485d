import type { ResourceKind } from '../client/resource.js';

/** Cluster API's group for core types (`Cluster`, `Machine`, ...). */
export const CLUSTER_API_GROUP = 'cluster.x-k8s.io';

/** Label naming the Cluster an object belongs to (`ClusterNameLabel`). */
export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';

/** Annotation that pauses reconciliation of the object carrying it (`PausedAnnotation`). */
export const PAUSED_ANNOTATION = 'cluster.x-k8s.io/paused';

/** Label a controller started with `--watch-filter=<value>` restricts itself to (`WatchLabel`). */
export const WATCH_FILTER_LABEL = 'cluster.x-k8s.io/watch-filter';

/** Annotation marking an object as managed by something other than its provider (`ManagedByAnnotation`). */
export const MANAGED_BY_ANNOTATION = 'cluster.x-k8s.io/managed-by';

/** The condition type controllers surface for pausing (`PausedCondition`) and its reasons. */
export const PAUSED_CONDITION = 'Paused';
export const PAUSED_REASON = 'Paused';
export const NOT_PAUSED_REASON = 'NotPaused';

/** The v1beta2 Cluster resource. */
export const CLUSTER_RESOURCE: ResourceKind = {
  apiVersion: `${CLUSTER_API_GROUP}/v1beta2`,
  kind: 'Cluster',
  plural: 'clusters',
  namespaced: true,
};
