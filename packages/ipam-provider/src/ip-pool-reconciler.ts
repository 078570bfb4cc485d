import type { TallyPoolKind } from '@tally-ipam/api-types';
import { PoolReconciler, type PoolReconcilerDeps } from './pool-reconciler.js';

/**
 * The reconciler of `TallyIPPool` (namespaced) and `GlobalTallyIPPool` (cluster-scoped): counts single addresses
 * into `status.ipAddresses`, like the reference provider's pools.
 */
export function newIPPoolReconciler(kind: TallyPoolKind, deps: PoolReconcilerDeps): PoolReconciler {
  return new PoolReconciler(kind, 'ipAddresses', deps);
}
