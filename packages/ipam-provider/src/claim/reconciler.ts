import { IPADDRESSCLAIM_ALLOCATION_FAILED_REASON, IPADDRESSCLAIM_POOL_NOT_READY_REASON } from '@tally-ipam/api-types';
import {
  addFinalizer,
  clusterNameOf,
  hasFinalizer,
  isNotFound,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
  removeFinalizer,
} from '@tally-ipam/controller-kit';
import type { Logger } from 'pino';
import { EVENT_ADDRESS_ALLOCATED } from '../constants.js';
import { pauseReason, poolClusterName } from '../pause.js';
import { finalizersOf } from '../pool-kinds.js';
import { describePool, type PoolRef, poolKey, poolRefOfClaim } from '../pool-ref.js';
import type { PoolState } from '../pool-state.js';
import {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  type StoredAddress,
  type StoredClaim,
  type StoredCluster,
} from '../resources.js';
import { poolTenancy } from '../tenancy.js';
import { acquireUnit, holdEntryOfExisting, releaseSurplusHoldings } from './acquire.js';
import type { ClaimReconcilerDeps } from './deps.js';
import { examineExistingAddress } from './existing-address.js';
import { allocated, completeAddress, createAddress, finishClaim, liveAddress } from './materialise.js';
import { cleanUpOrphanedAddress, releaseClaim } from './release.js';
import { notReady } from './status.js';
import { admitAndAcquire } from './tenancy-gate.js';

/**
 * Reconciles one IPAddressClaim that names a Tally pool, composing its steps: choose an address (claim/choose.ts),
 * acquire its holding (claim/acquire.ts), materialise the IPAddress and the claim status (claim/materialise.ts), or
 * release everything once the claim is deleted (claim/release.ts). Level-triggered and idempotent — each step first
 * looks at what already exists (IPAddress, then a ledger entry held for the claim's uid), so a crash between any two writes is
 * resumed, never repeated with a different address.
 */
export class ClaimReconciler implements Reconciler {
  constructor(private readonly deps: ClaimReconcilerDeps) {}

  async reconcile(request: Request, context: ReconcileContext): Promise<Result> {
    const claim = this.deps.assumed.claims.get(`${request.namespace}/${request.name}`);
    if (!claim) return cleanUpOrphanedAddress(this.deps, request, context);
    const { holdAhead } = this.deps;
    if (!holdAhead) return this.reconcileClaim(claim, context);
    return holdAhead.whileReconciling(claim.metadata.uid, () => this.reconcileClaim(claim, context));
  }

  private async reconcileClaim(cached: StoredClaim, context: ReconcileContext): Promise<Result> {
    const { deps } = this;
    let claim = cached;
    const ref = poolRefOfClaim(claim);
    // Not served by this process: another provider's claim, reached through an IPAddress or pool event.
    if (!ref || !deps.servedKinds.has(ref.kind)) return {};
    // Only the rare skips below log with the pool; a child logger made per reconcile was most of their cost.
    const logger = (): Logger => context.logger.child({ pool: poolKey(ref) });
    const deleting = claim.metadata.deletionTimestamp !== undefined;

    const clusterName = clusterNameOf(claim);
    const cluster = clusterName ? this.cluster(claim.metadata.namespace ?? '', clusterName) : undefined;
    if (clusterName && !cluster && !deleting) {
      // Nothing says whether the Cluster is paused; its creation re-queues the claim (Cluster watch).
      logger().info({ cluster: clusterName }, 'Cluster not found, skipping allocation until it exists');
      return {};
    }
    const claimPause = pauseReason(claim, clusterName, (ns, name) => this.cluster(ns, name));
    if (claimPause) {
      logger().info({ reason: claimPause }, 'reconciliation paused');
      return {};
    }
    const pool = deps.pool(ref);
    if (pool) {
      const poolPause = pauseReason(pool, poolClusterName(pool), (ns, name) => this.cluster(ns, name));
      if (poolPause) {
        logger().info({ reason: poolPause }, 'pool paused, skipping the claim');
        return {};
      }
    }

    if (deleting) return releaseClaim(this.deps, claim, ref, context);

    // The finalizer first, in this same reconcile: an address must never exist for a claim that can vanish unseen.
    let claimJustConfirmed = false;
    const claimFinalizer = finalizersOf(ref.kind).claim;
    if (!hasFinalizer(claim, claimFinalizer)) {
      try {
        claim = deps.assumed.claims.assume(
          await addFinalizer(deps.client, CLAIM_RESOURCE, claim, claimFinalizer, { signal: context.signal }),
        );
        claimJustConfirmed = true;
      } catch (error) {
        // Deleted before it had our finalizer: nothing was allocated for it, nothing to do (not an error to act on).
        if (isNotFound(error)) return {};
        throw error;
      }
    }

    if (!pool) {
      return finishClaim(
        this.deps,
        claim,
        notReady(
          IPADDRESSCLAIM_POOL_NOT_READY_REASON,
          `${describePool(ref)} does not exist: create it, or point spec.poolRef at an existing pool`,
        ),
        context,
      );
    }
    if (pool.metadata.deletionTimestamp !== undefined) {
      return finishClaim(
        this.deps,
        claim,
        notReady(
          IPADDRESSCLAIM_POOL_NOT_READY_REASON,
          `${describePool(ref)} is being deleted and hands out no new addresses: point spec.poolRef at another pool`,
        ),
        context,
      );
    }
    const lookup = deps.states.lookup(ref);
    if (!lookup) return {};
    if (lookup.status === 'invalid') {
      return finishClaim(
        this.deps,
        claim,
        notReady(
          IPADDRESSCLAIM_POOL_NOT_READY_REASON,
          `${describePool(ref)} has an invalid spec, fix it to allocate: ${lookup.message}`,
        ),
        context,
      );
    }
    return this.allocate(claim, ref, lookup.state, context, claimJustConfirmed);
  }

  private cluster(namespace: string, name: string): StoredCluster | undefined {
    return this.deps.clusters.store.get(`${namespace}/${name}`);
  }

  private async allocate(
    claim: StoredClaim,
    ref: PoolRef,
    state: PoolState,
    context: ReconcileContext,
    claimJustConfirmed: boolean,
  ): Promise<Result> {
    const { deps } = this;
    const claimKey = `${claim.metadata.namespace}/${claim.metadata.name}`;
    // The cache may lag behind another replica's IPAddress for this claim. A claim that shows an addressRef had one,
    // so it is looked up live before anything new is chosen; a claim that never had one goes straight to the holding and
    // the IPAddress create, whose AlreadyExists is the authoritative answer (createAddress). Exhaustion is reported
    // only after a live read too (acquireUnit).
    const existing =
      deps.assumed.addresses.get(claimKey) ??
      (claim.status?.addressRef?.name ? await liveAddress(deps, claim, context) : undefined);
    if (existing) return this.adoptExisting(claim, ref, state, existing, context);

    const startedAt = performance.now();
    const pool = deps.pool(ref);
    const tenancy = pool === undefined ? undefined : poolTenancy(pool);
    const acquisition = tenancy
      ? await admitAndAcquire(deps, claim, ref, state, tenancy, context, { claimJustConfirmed })
      : await acquireUnit(deps, claim, ref, state, context, { claimJustConfirmed });
    if (acquisition.kind === 'done') return acquisition.result;
    if (acquisition.kind === 'adopt')
      return this.adoptExisting(claim, ref, acquisition.state, acquisition.existing, context);
    const { unit } = acquisition;
    const address = await createAddress(deps, claim, ref, acquisition.state, unit, context);
    if (!address) return { requeue: true };
    deps.states.removeWaiting(ref, claimKey);
    deps.metrics.allocations.inc({ kind: ref.kind, result: 'allocated' });
    deps.metrics.allocationDuration.observe({ kind: ref.kind }, (performance.now() - startedAt) / 1000);
    const text = unit.isPrefix ? `${unit.address}/${unit.prefix}` : unit.address;
    if (deps.allocationEvents.recordOnClaim(ref)) {
      void deps.recorder.normal(
        claim,
        EVENT_ADDRESS_ALLOCATED,
        'Allocate',
        `allocated ${text} from ${describePool(ref)}`,
      );
    }
    context.logger.info({ address: text }, 'address allocated');
    return finishClaim(deps, claim, allocated(address, ref), context);
  }

  /**
   * The claim's IPAddress exists. If it is ours, make sure its address is held in the ledger (after clusterctl move there is none) and
   * report it; if it is being deleted while the claim lives, let it go — it is re-created identically from the holding.
   */
  private async adoptExisting(
    claim: StoredClaim,
    ref: PoolRef,
    state: PoolState,
    existing: StoredAddress,
    context: ReconcileContext,
  ): Promise<Result> {
    const { deps } = this;
    const examined = examineExistingAddress(claim, ref, state, existing, deps.assumed.holdings);
    if (examined.kind === 'refused') {
      return finishClaim(deps, claim, notReady(IPADDRESSCLAIM_ALLOCATION_FAILED_REASON, examined.message), context);
    }
    if (examined.kind === 'deleting') {
      await removeFinalizer(deps.client, ADDRESS_RESOURCE, existing, finalizersOf(ref.kind).address, {
        signal: context.signal,
      });
      context.logger.info('IPAddress deleted while its claim lives; it will be re-created with the same address');
      return {};
    }
    const { unit } = examined;
    const duplicate = await holdEntryOfExisting(deps, claim, ref, state, existing, unit, examined.entry, context);
    if (duplicate) return duplicate;
    await releaseSurplusHoldings(deps, claim, unit.entryKey, context);
    const completed = await completeAddress(deps, claim, ref, existing, context);
    if (!completed) return { requeue: true };
    deps.states.removeWaiting(ref, `${claim.metadata.namespace}/${claim.metadata.name}`);
    return finishClaim(deps, claim, allocated(completed, ref), context);
  }
}
