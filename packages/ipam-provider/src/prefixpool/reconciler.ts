import type { TallyPoolKind } from '@tally-ipam/api-types';
import { PoolReconciler, type PoolReconcilerDeps } from '../pool/reconciler.js';

/**
 * The reconciler of `TallyPrefixPool` (namespaced) and `GlobalTallyPrefixPool` (cluster-scoped): counts whole
 * `/allocationPrefixLength` prefixes into `status.prefixes`.
 */
export function newPrefixPoolReconciler(kind: TallyPoolKind, deps: PoolReconcilerDeps): PoolReconciler {
  return new PoolReconciler(kind, 'prefixes', deps);
}
