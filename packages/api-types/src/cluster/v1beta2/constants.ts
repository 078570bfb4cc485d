/** Core Cluster API group and the contract version Tally speaks. */
export const CLUSTER_GROUP = 'cluster.x-k8s.io';
export const CLUSTER_V1BETA2_VERSION = 'v1beta2';
export const CLUSTER_V1BETA2_API_VERSION = `${CLUSTER_GROUP}/${CLUSTER_V1BETA2_VERSION}`;

export const CLUSTER_KIND = 'Cluster';
export const MACHINE_KIND = 'Machine';
export const MACHINEPOOL_KIND = 'MachinePool';

/** Annotation that pauses reconciliation of the object it is on (`clusterv1.PausedAnnotation`). */
export const PAUSED_ANNOTATION = 'cluster.x-k8s.io/paused';
/** Label naming the Cluster an object belongs to (`clusterv1.ClusterNameLabel`); needed for `clusterctl move`. */
export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
/** Annotation marking an object as managed by something other than its provider (`clusterv1.ManagedByAnnotation`). */
export const MANAGED_BY_ANNOTATION = 'cluster.x-k8s.io/managed-by';
/** Label naming the MachinePool an infrastructure machine belongs to (`clusterv1.MachinePoolNameLabel`). */
export const MACHINEPOOL_NAME_LABEL = 'cluster.x-k8s.io/pool-name';
/**
 * Annotation on a Machine that makes it the first to go when its MachineSet or MachinePool scales down
 * (`clusterv1.DeleteMachineAnnotation`); the cluster autoscaler sets it, and its value is not read.
 */
export const DELETE_MACHINE_ANNOTATION = 'cluster.x-k8s.io/delete-machine';
/** Label selecting the objects of one controller instance (`clusterv1.WatchLabel`). */
export const WATCH_FILTER_LABEL = 'cluster.x-k8s.io/watch-filter';
/** Label prefix on provider CRDs naming the contract versions they serve: `cluster.x-k8s.io/v1beta2: v1alpha1`. */
export const CONTRACT_LABEL_PREFIX = 'cluster.x-k8s.io/';
/** The CRD label CAPI reads to learn which versions of a provider kind implement the v1beta2 contract. */
export const CONTRACT_V1BETA2_LABEL = `${CONTRACT_LABEL_PREFIX}v1beta2`;
/** Label clusterctl uses to move a CRD's objects together with their Cluster. */
export const CLUSTERCTL_MOVE_HIERARCHY_LABEL = 'clusterctl.cluster.x-k8s.io/move-hierarchy';

/** Generic condition types and reasons (`api/core/v1beta2/condition_consts.go`). */
export const READY_CONDITION = 'Ready';
export const PAUSED_CONDITION = 'Paused';
export const PAUSED_REASON = 'Paused';
export const NOT_PAUSED_REASON = 'NotPaused';
/** Reason of `Ready=False` (and `Deleting=True`) while the object is being deleted (`clusterv1.DeletingReason`). */
export const DELETING_REASON = 'Deleting';
