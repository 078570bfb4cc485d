import { PoolReconciler, type PoolReconcilerDeps } from '../pool/reconciler.js';
import type { ServedPoolKind } from '../pool-kinds.js';

/**
 * The reconciler of `TallyPrefixPool` (namespaced) and `GlobalTallyPrefixPool` (cluster-scoped): counts whole
 * `/allocationPrefixLength` prefixes into `status.prefixes`.
 */
export function newPrefixPoolReconciler(kind: ServedPoolKind, deps: PoolReconcilerDeps): PoolReconciler {
  return new PoolReconciler(kind, 'prefixes', deps);
}
