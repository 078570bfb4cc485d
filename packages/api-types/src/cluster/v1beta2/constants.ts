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
/**
 * The label clusterctl puts on every object it installs (`clusterctlv1.ClusterctlLabel`). `clusterctl move` discovers
 * the kinds to move only from CRDs that carry it, so a CRD installed without clusterctl needs it to be moved at all.
 */
export const CLUSTERCTL_LABEL = 'clusterctl.cluster.x-k8s.io';
/** The provider that owns an installed object (`clusterv1.ProviderNameLabel`); `clusterctl delete` selects by it. */
export const PROVIDER_NAME_LABEL = 'cluster.x-k8s.io/provider';
/**
 * On a CRD: `clusterctl move` moves every object of the kind, with everything it owns, whether or not a Cluster owns
 * it (`clusterctlv1.ClusterctlMoveHierarchyLabel`).
 */
export const CLUSTERCTL_MOVE_HIERARCHY_LABEL = 'clusterctl.cluster.x-k8s.io/move-hierarchy';
/**
 * What `clusterctl move` sets on each source object just before it deletes it, once the object exists on the target
 * (`clusterctlv1.DeleteForMoveAnnotation`). clusterctl sets it with a JSON patch that replaces the whole annotation map,
 * so no other annotation survives to that delete.
 */
export const DELETE_FOR_MOVE_ANNOTATION = 'clusterctl.cluster.x-k8s.io/delete-for-move';

/** Generic condition types and reasons (`api/core/v1beta2/condition_consts.go`). */
export const READY_CONDITION = 'Ready';
export const PAUSED_CONDITION = 'Paused';
export const PAUSED_REASON = 'Paused';
export const NOT_PAUSED_REASON = 'NotPaused';
/** Reason of `Ready=False` (and `Deleting=True`) while the object is being deleted (`clusterv1.DeletingReason`). */
export const DELETING_REASON = 'Deleting';
