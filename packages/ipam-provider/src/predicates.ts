import { annotationChangedPredicate, type KubeObject, type Predicate } from '@tally-ipam/controller-kit';
import { isClusterOrAnnotationPaused } from './pause.js';
import { poolRefOfClaim } from './pool-ref.js';
import type { StoredClaim } from './resources.js';

/**
 * Event filters. Each lets through exactly the changes its controller must act on; the reconcilers are level-triggered
 * anyway, so a filter only saves work — it never decides correctness on its own.
 */

/** Only claims whose `spec.poolRef` names a Tally pool by group and kind (the name is resolved by the reconciler). */
export function tallyClaimPredicate(): Predicate<StoredClaim> {
  const isTally = (claim: StoredClaim): boolean => poolRefOfClaim(claim) !== undefined;
  return {
    create: ({ object }) => isTally(object),
    update: ({ objectNew }) => isTally(objectNew),
    delete: ({ object }) => isTally(object),
    generic: ({ object }) => isTally(object),
  };
}

function sameMap(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  return JSON.stringify(Object.entries(a ?? {}).sort()) === JSON.stringify(Object.entries(b ?? {}).sort());
}

/**
 * Claim updates that matter: spec (generation), deletion, annotations (pause, requested address) and labels (cluster
 * name, watch filter). Status writes — most of them Tally's own — and finalizer changes are skipped.
 */
export function claimChangedPredicate<T extends KubeObject>(): Predicate<T> {
  return {
    update: ({ objectOld, objectNew }) =>
      objectOld.metadata.generation !== objectNew.metadata.generation ||
      objectOld.metadata.deletionTimestamp !== objectNew.metadata.deletionTimestamp ||
      !sameMap(objectOld.metadata.annotations, objectNew.metadata.annotations) ||
      !sameMap(objectOld.metadata.labels, objectNew.metadata.labels),
  };
}

/** Pool changes that can change what its claims get: spec, deletion, un-pausing, labels (cluster membership). */
export function poolChangedPredicate<T extends KubeObject>(): Predicate<T> {
  const annotations = annotationChangedPredicate<T>();
  return {
    update: (event) =>
      event.objectOld.metadata.generation !== event.objectNew.metadata.generation ||
      event.objectOld.metadata.deletionTimestamp !== event.objectNew.metadata.deletionTimestamp ||
      (annotations.update?.(event) ?? true) ||
      !sameMap(event.objectOld.metadata.labels, event.objectNew.metadata.labels),
  };
}

/**
 * For the Cluster watch: a Cluster created unpaused (claims skipped while it was missing) and a Cluster that stops
 * being paused, by `spec.paused` or by the annotation (CAPI's `ClusterUnpaused` looks at `spec.paused` only).
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

/** Deletions only (the holding watch of the claim controller: a holding removed under a live claim is re-taken). */
export function deletedPredicate<T extends KubeObject>(): Predicate<T> {
  return { create: () => false, update: () => false, delete: () => true, generic: () => false };
}
