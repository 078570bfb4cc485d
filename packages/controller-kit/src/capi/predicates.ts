import type { KubeObject } from '../cache/object.js';
import type { ObjectKey } from '../client/resource.js';
import { newPredicateFuncs, type Predicate } from '../controller/predicate.js';
import { WATCH_FILTER_LABEL } from './constants.js';
import { clusterNameOf, hasPausedAnnotation, isClusterPaused } from './pause.js';

/** Drops events of objects with the `cluster.x-k8s.io/paused` annotation (CAPI's `ResourceNotPaused`). */
export function resourceNotPaused<T extends KubeObject = KubeObject>(): Predicate<T> {
  return newPredicateFuncs((object: T) => !hasPausedAnnotation(object));
}

/**
 * Keeps only objects labelled `cluster.x-k8s.io/watch-filter=<value>` (CAPI's `ResourceHasFilterLabel`); an empty
 * value (no `--watch-filter` flag) keeps everything.
 */
export function resourceHasFilterLabel<T extends KubeObject = KubeObject>(watchFilterValue: string): Predicate<T> {
  return newPredicateFuncs(
    (object: T) => watchFilterValue === '' || object.metadata.labels?.[WATCH_FILTER_LABEL] === watchFilterValue,
  );
}

/** Both of the above (CAPI's `ResourceNotPausedAndHasFilterLabel`), the usual event filter of a provider. */
export function resourceNotPausedAndHasFilterLabel<T extends KubeObject = KubeObject>(
  watchFilterValue: string,
): Predicate<T> {
  const notPaused = resourceNotPaused<T>();
  const hasLabel = resourceHasFilterLabel<T>(watchFilterValue);
  return newPredicateFuncs(
    (object: T) => (notPaused.generic?.({ object }) ?? true) && (hasLabel.generic?.({ object }) ?? true),
  );
}

/**
 * For a watch on Clusters: passes a Cluster created unpaused and an update that un-pauses it (CAPI's
 * `ClusterUnpaused`), so objects skipped while paused are reconciled once the pause ends. Deletes and generic
 * events don't pass.
 */
export function clusterUnpaused<T extends KubeObject = KubeObject>(): Predicate<T> {
  return {
    create: ({ object }) => !isClusterPaused(object),
    update: ({ objectOld, objectNew }) => isClusterPaused(objectOld) && !isClusterPaused(objectNew),
    delete: () => false,
    generic: () => false,
  };
}

/**
 * The keys of the objects that belong to `cluster` (same namespace, `clusterNameOf(object) === cluster name`) among
 * `candidates` — the map function of a Cluster watch that re-queues a cluster's objects when it changes.
 */
export function objectKeysOfCluster(cluster: KubeObject, candidates: Iterable<KubeObject>): ObjectKey[] {
  const keys: ObjectKey[] = [];
  for (const object of candidates) {
    if (object.metadata.namespace === cluster.metadata.namespace && clusterNameOf(object) === cluster.metadata.name) {
      keys.push({ namespace: object.metadata.namespace, name: object.metadata.name });
    }
  }
  return keys;
}

/**
 * Builds a Cluster → object keys map function over a lister (e.g. the cache's store of the reconciled kind listed
 * by namespace).
 */
export function clusterToObjectKeys(
  listInNamespace: (namespace: string) => Iterable<KubeObject>,
): (cluster: KubeObject) => ObjectKey[] {
  return (cluster) => {
    const namespace = cluster.metadata.namespace;
    return namespace ? objectKeysOfCluster(cluster, listInNamespace(namespace)) : [];
  };
}
