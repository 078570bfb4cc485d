import type { Controller } from '@tally-ipam/controller-kit';
import { newPoolController } from '../pool/controller.js';
import type { PoolReconcilerDeps } from '../pool/reconciler.js';
import type { ServedPoolKind } from '../pool-kinds.js';
import type { ProviderContext } from '../shared.js';
import { newPrefixPoolReconciler } from './reconciler.js';

/**
 * The controller of a prefix pool kind (`TallyPrefixPool`, `GlobalTallyPrefixPool`): the watches of every pool
 * (pool/controller.ts) around the reconciler that counts whole prefixes.
 */
export function newPrefixPoolController(
  kind: ServedPoolKind,
  deps: PoolReconcilerDeps,
  shared: ProviderContext,
): Controller {
  return newPoolController(kind, newPrefixPoolReconciler(kind, deps), shared);
}
