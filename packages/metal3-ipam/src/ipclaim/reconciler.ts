import { CLUSTER_NAME_LABEL, echo, METAL3_IP_CLAIM_FINALIZER } from '@tally-ipam/api-types';
import { hasPausedAnnotation, isPaused } from '@tally-ipam/controller-kit/capi';
import { addFinalizer, isNotFound } from '@tally-ipam/controller-kit/client';
import type { ReconcileContext, Reconciler, Request, Result } from '@tally-ipam/controller-kit/controller';
import { planOfPool, poolClusterName } from '../pool-spec.js';
import {
  METAL3_CLAIM_RESOURCE,
  METAL3_POOL_RESOURCE,
  poolKeyOfClaim,
  type StoredMetal3Claim,
  type StoredMetal3Pool,
} from '../resources.js';
import { allocate } from './acquire.js';
import { addressesOfClaim, adopt } from './adopt.js';
import type { IPClaimReconcilerDeps } from './deps.js';
import { reconcileDelete } from './release.js';
import { fail } from './status.js';

/**
 * Reconciles Metal3 IPClaims, following the Metal3 IPAM proposal and ip-address-manager v1.10.1, composing its steps:
 * - paused while the claim has the paused annotation, its Cluster (`cluster.x-k8s.io/cluster-name` label, else the
 *   pool's `spec.clusterName`) has `spec.paused`, or its IPPool has the paused annotation; nothing is allocated for a
 *   Cluster that does not exist (yet);
 * - finalizer `ipclaim.ipam.metal3.io`;
 * - an IPAddress of the claim (its `spec.claim.name`, in the pool) is the allocation (ipclaim/adopt.ts): it is reused,
 *   its ledger entry held for the claim (adoption after `clusterctl move` or a switch from Metal3's controller) and
 *   `status.address` written — status is an observation, never read for a decision;
 * - otherwise an address is chosen and held in the ledger (ipclaim/acquire.ts: the API server decides a race), then
 *   the IPAddress is created with Metal3's name, owner references, finalizer and the claim's labels
 *   (ipclaim/materialise.ts);
 * - errors go to `status.errorMessage`, naming the field and the value (ipclaim/status.ts);
 * - deletion (once no other finalizer is left, Metal3's rule): the IPAddresses of the claim are deleted, its entries
 *   released, the finalizer removed (ipclaim/release.ts).
 * What the ledger entry view does not show yet of this process's own holds comes from the overlay
 * (`IPClaimReconcilerDeps.assumedEntries`, read through ipclaim/entries.ts).
 */
export class IPClaimReconciler implements Reconciler {
  constructor(private readonly deps: IPClaimReconcilerDeps) {}

  async reconcile(request: Request, context: ReconcileContext): Promise<Result> {
    const { deps } = this;
    const key = `${request.namespace ?? ''}/${request.name}`;
    const claim = deps.claims.store.get(key);
    if (!claim) return {};
    const pool = await this.poolOf(claim, context);
    const clusterName = claim.metadata.labels?.[CLUSTER_NAME_LABEL] || (pool ? poolClusterName(pool) : undefined);
    const cluster = clusterName ? deps.clusters.store.get(`${request.namespace}/${clusterName}`) : undefined;
    if (isPaused(cluster, claim) || (pool !== undefined && hasPausedAnnotation(pool))) {
      context.logger.debug({ cluster: clusterName }, 'paused');
      return {};
    }
    if (claim.metadata.deletionTimestamp) return reconcileDelete(deps, claim, context);
    if (clusterName && !cluster) {
      // As Metal3's pool controller: nothing is allocated for a Cluster not seen yet (it may be created paused, or be
      // behind in the cache); its creation re-queues the claim.
      context.logger.debug({ cluster: clusterName }, 'waiting for the Cluster');
      return {};
    }

    const current = await addFinalizer(deps.client, METAL3_CLAIM_RESOURCE, claim, METAL3_IP_CLAIM_FINALIZER, {
      signal: context.signal,
    });
    const namespace = current.metadata.namespace ?? '';
    const poolNamespace = current.spec.pool?.namespace;
    if (poolNamespace && poolNamespace !== namespace) {
      return fail(
        deps.client,
        current,
        `spec.pool.namespace: ${echo(poolNamespace)} is not the claim's namespace ${namespace}: an IPClaim is served by an IPPool of its own namespace`,
        context,
      );
    }
    if (!pool) {
      const name = current.spec.pool?.name;
      return fail(
        deps.client,
        current,
        name ? `spec.pool.name: IPPool ${namespace}/${echo(name)} not found` : 'spec.pool.name: no IPPool named',
        context,
      );
    }

    const [existing, ...surplus] = addressesOfClaim(deps, current, pool);
    if (existing) return adopt(deps, current, pool, existing, surplus, context);
    if (pool.metadata.deletionTimestamp) {
      return fail(
        deps.client,
        current,
        `spec.pool.name: IPPool ${namespace}/${pool.metadata.name} is being deleted`,
        context,
      );
    }
    const plan = planOfPool(pool);
    if (!plan.ok) return fail(deps.client, current, plan.message, context);
    await deps.ledgersComplete?.();
    return allocate(deps, current, pool, plan.plan, context);
  }

  /**
   * The claim's IPPool: from the cache, else read live — a pool created just before its claim may not be in the cache
   * yet, and answering "not found" (or missing its Cluster's pause) would be wrong.
   */
  private async poolOf(claim: StoredMetal3Claim, context: ReconcileContext): Promise<StoredMetal3Pool | undefined> {
    const poolKey = poolKeyOfClaim(claim);
    if (!poolKey) return undefined;
    const cached = this.deps.pools.store.get(poolKey);
    if (cached) return cached;
    try {
      return await this.deps.client.get(
        METAL3_POOL_RESOURCE,
        { namespace: claim.metadata.namespace, name: claim.spec.pool?.name ?? '' },
        { signal: context.signal },
      );
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }
}
