import { PoolReconciler, type PoolReconcilerDeps } from '../pool/reconciler.js';
import { isInClusterPoolKind, type ServedPoolKind } from '../pool-kinds.js';

/**
 * The reconciler of the prefix pool kinds: `TallyPrefixPool` (namespaced) and `GlobalTallyPrefixPool`
 * (cluster-scoped) count whole `/allocationPrefixLength` prefixes into `status.prefixes`; the in-cluster provider's
 * `InClusterPrefixPool` and `GlobalInClusterPrefixPool` into `status.ipAddresses`, the field the reference keeps for
 * both of its pool types.
 */
export function newPrefixPoolReconciler(kind: ServedPoolKind, deps: PoolReconcilerDeps): PoolReconciler {
  return new PoolReconciler(kind, isInClusterPoolKind(kind) ? 'ipAddresses' : 'prefixes', deps);
}
