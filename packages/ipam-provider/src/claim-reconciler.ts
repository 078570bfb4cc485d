import { AllocationError } from '@tally-ipam/allocator';
import {
  clipText,
  clipUtf8,
  echo,
  IPADDRESSCLAIM_ADDRESS_ALLOCATED_REASON,
  IPADDRESSCLAIM_ALLOCATION_FAILED_REASON,
  IPADDRESSCLAIM_POOL_EXHAUSTED_REASON,
  IPADDRESSCLAIM_POOL_NOT_READY_REASON,
  IPAM_V1BETA2_API_VERSION,
  MAX_IP_LENGTH,
  TALLY_GROUP,
} from '@tally-ipam/api-types';
import {
  AlreadyOwnedError,
  addFinalizer,
  type Cache,
  type Client,
  clusterNameOf,
  type EventRecorder,
  hasFinalizer,
  isAlreadyExists,
  isNotFound,
  ownerReferenceTo,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
  removeFinalizer,
  type SharedInformer,
  setControllerReference,
  setOwnerReference,
} from '@tally-ipam/controller-kit';
import type { AllocationEvents } from './allocation-events.js';
import type { AssumedObjects } from './assumed-objects.js';
import { type ClaimOutcome, notReady, writeClaimStatus } from './claim-status.js';
import {
  ADDRESS_FINALIZER,
  CLAIM_ADDRESS_RESERVED_REASON,
  CLAIM_FINALIZER,
  EVENT_ADDRESS_ALLOCATED,
  EVENT_ADDRESS_RECREATED,
  EVENT_ADDRESS_RELEASED,
  EVENT_ALLOCATION_FAILED,
  EVENT_DUPLICATE_ADDRESS,
  EVENT_POOL_EXHAUSTED,
  MAX_LOCK_ATTEMPTS,
  POOL_EXHAUSTED_RECHECK_MS,
  REQUESTED_ADDRESS_ANNOTATION,
} from './constants.js';
import { LOCK_CLAIM_UID_INDEX } from './indexes.js';
import { type AcquireResult, acquireLock, holderOf, releaseLock } from './locks.js';
import type { ProviderMetrics } from './metrics.js';
import { pauseReason, poolClusterName } from './pause.js';
import type { AllocationUnit } from './pool-allocation.js';
import { describePool, type PoolRef, poolKey, poolRefOfAddress, poolRefOfClaim, poolRefOfLock } from './pool-ref.js';
import type { PoolState, PoolStates } from './pool-states.js';
import {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  LOCK_RESOURCE,
  type StoredAddress,
  type StoredClaim,
  type StoredCluster,
  type StoredLock,
  type StoredPool,
} from './resources.js';

export interface ClaimReconcilerDeps {
  readonly client: Client;
  readonly cache: Cache;
  readonly claims: SharedInformer<StoredClaim>;
  readonly addresses: SharedInformer<StoredAddress>;
  readonly locks: SharedInformer<StoredLock>;
  readonly clusters: SharedInformer<StoredCluster>;
  /** This process's own writes on top of the informers (the assume cache): see `AssumedObjects`. */
  readonly assumed: {
    readonly claims: AssumedObjects<StoredClaim>;
    readonly addresses: AssumedObjects<StoredAddress>;
    readonly locks: AssumedObjects<StoredLock>;
  };
  readonly pool: (ref: PoolRef) => StoredPool | undefined;
  readonly states: PoolStates;
  readonly recorder: EventRecorder;
  /** Which routine AddressAllocated Events are recorded and which are summed up on the pool. */
  readonly allocationEvents: AllocationEvents;
  readonly metrics: ProviderMetrics;
  readonly now: () => number;
}

/** The longest address or CIDR text (IPv6 in mixed notation with a /128); a longer annotation is never parsed. */
const MAX_REQUESTED_ADDRESS_LENGTH = MAX_IP_LENGTH + 4;

/** How long to wait before looking again at an IPAddress another finalizer still holds. */
const ADDRESS_GONE_POLL_MS = 1_000;

/** The outcome of choosing an address: a unit to lock, or the reason there is none. */
type Choice =
  | { readonly ok: true; readonly unit: AllocationUnit; readonly specific: string | undefined }
  | { readonly ok: false; readonly outcome: ClaimOutcome; readonly retryAfterMs?: number | undefined };

/**
 * Reconciles one IPAddressClaim that names a Tally pool: allocate (lock, IPAddress, status) or release. Level-
 * triggered and idempotent — each step first looks at what already exists (IPAddress, then a lock held for the
 * claim's uid), so a crash between any two writes is resumed, never repeated with a different address.
 */
export class ClaimReconciler implements Reconciler {
  constructor(private readonly deps: ClaimReconcilerDeps) {}

  async reconcile(request: Request, context: ReconcileContext): Promise<Result> {
    const { deps } = this;
    let claim = deps.assumed.claims.get(`${request.namespace}/${request.name}`);
    if (!claim) return this.cleanUpOrphanedAddress(request, context);
    const ref = poolRefOfClaim(claim);
    if (!ref) return {};
    const logger = context.logger.child({ pool: poolKey(ref) });
    const deleting = claim.metadata.deletionTimestamp !== undefined;

    const clusterName = clusterNameOf(claim);
    const cluster = clusterName ? this.cluster(claim.metadata.namespace ?? '', clusterName) : undefined;
    if (clusterName && !cluster && !deleting) {
      // Nothing says whether the Cluster is paused; its creation re-queues the claim (Cluster watch).
      logger.info({ cluster: clusterName }, 'Cluster not found, skipping allocation until it exists');
      return {};
    }
    const claimPause = pauseReason(claim, clusterName, (ns, name) => this.cluster(ns, name));
    if (claimPause) {
      logger.info({ reason: claimPause }, 'reconciliation paused');
      return {};
    }
    const pool = deps.pool(ref);
    if (pool) {
      const poolPause = pauseReason(pool, poolClusterName(pool), (ns, name) => this.cluster(ns, name));
      if (poolPause) {
        logger.info({ reason: poolPause }, 'pool paused, skipping the claim');
        return {};
      }
    }

    if (deleting) return this.release(claim, ref, context);

    // The finalizer first, in this same reconcile: an address must never exist for a claim that can vanish unseen.
    if (!hasFinalizer(claim, CLAIM_FINALIZER)) {
      try {
        claim = deps.assumed.claims.assume(
          await addFinalizer(deps.client, CLAIM_RESOURCE, claim, CLAIM_FINALIZER, { signal: context.signal }),
        );
      } catch (error) {
        // Deleted before it had our finalizer: nothing was allocated for it, nothing to do (not an error to act on).
        if (isNotFound(error)) return {};
        throw error;
      }
    }

    if (!pool) {
      return this.finish(
        claim,
        notReady(
          IPADDRESSCLAIM_POOL_NOT_READY_REASON,
          `${describePool(ref)} does not exist: create it, or point spec.poolRef at an existing pool`,
        ),
        context,
      );
    }
    if (pool.metadata.deletionTimestamp !== undefined) {
      return this.finish(
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
      return this.finish(
        claim,
        notReady(
          IPADDRESSCLAIM_POOL_NOT_READY_REASON,
          `${describePool(ref)} has an invalid spec, fix it to allocate: ${lookup.message}`,
        ),
        context,
      );
    }
    return this.allocate(claim, ref, lookup.state, context);
  }

  /**
   * The claim is gone but an IPAddress of its name still carries Tally's finalizer (the claim was force-deleted, or a
   * replica with a stale cache re-created the IPAddress while another released the claim): nobody else will ever
   * remove that finalizer, so it is removed here once the owning claim is confirmed gone by a live read.
   */
  private async cleanUpOrphanedAddress(request: Request, context: ReconcileContext): Promise<Result> {
    const { deps } = this;
    const address = deps.assumed.addresses.get(`${request.namespace}/${request.name}`);
    if (!address || !hasFinalizer(address, ADDRESS_FINALIZER) || !poolRefOfAddress(address)) return {};
    // By name, not by owner reference: the garbage collector strips the reference to a deleted claim (the pool
    // still owns the IPAddress, so it is not collected).
    const claim = await deps.cache.liveGet(
      CLAIM_RESOURCE,
      { namespace: request.namespace, name: address.spec.claimRef.name },
      context.signal,
    );
    if (claim) return {};
    await removeFinalizer(deps.client, ADDRESS_RESOURCE, address, ADDRESS_FINALIZER, { signal: context.signal });
    try {
      await deps.client.delete(ADDRESS_RESOURCE, address.metadata, {
        preconditions: { uid: address.metadata.uid },
        signal: context.signal,
      });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    context.logger.info('IPAddress of a claim that no longer exists: finalizer removed and deleted');
    return {};
  }

  private cluster(namespace: string, name: string): StoredCluster | undefined {
    return this.deps.clusters.store.get(`${namespace}/${name}`);
  }

  private async allocate(
    claim: StoredClaim,
    ref: PoolRef,
    initialState: PoolState,
    context: ReconcileContext,
  ): Promise<Result> {
    const { deps } = this;
    let state = initialState;
    let rebuilt = false;
    const claimKey = `${claim.metadata.namespace}/${claim.metadata.name}`;
    // The cache may lag behind another replica's IPAddress for this claim. A claim that shows an addressRef had one,
    // so it is looked up live before anything new is chosen; a claim that never had one goes straight to the lock and
    // the IPAddress create, whose AlreadyExists is the authoritative answer (createAddress). Exhaustion is reported
    // only after a live read too (below).
    const existing =
      deps.assumed.addresses.get(claimKey) ??
      (claim.status?.addressRef?.name ? await this.liveAddress(claim, context) : undefined);
    if (existing) return this.adoptExisting(claim, ref, state, existing, context);

    const startedAt = performance.now();
    const holder = holderOf(claim);
    // A lock already held for this claim (the reconcile that took it crashed before the IPAddress, or its IPAddress
    // create failed): reuse it. Locks this process created are looked at too, before the informer shows them.
    const held = [...deps.locks.store.byIndex(LOCK_CLAIM_UID_INDEX, holder.uid), ...deps.assumed.locks.pending()]
      .map((lock) => deps.assumed.locks.get(lock.metadata.name) ?? lock)
      .find(
        (lock) =>
          lock.spec.claimRef.uid === holder.uid &&
          lock.spec.releasedAt === undefined &&
          sameRef(poolRefOfLock(lock), ref),
      );
    let unit = held ? state.allocation.unitOf(held.spec.address, held.spec.prefix ?? 0) : undefined;
    if (held && unit) {
      // The cache may be behind a release by another replica: only a lock that still exists live may be resumed.
      const live = await deps.cache.liveGet(LOCK_RESOURCE, { name: held.metadata.name }, context.signal);
      if (!live || live.spec.claimRef.uid !== holder.uid || live.spec.releasedAt !== undefined) {
        deps.assumed.locks.forget(held.metadata.name);
        return { requeue: true };
      }
    }

    for (let attempt = 0; unit === undefined; attempt += 1) {
      if (attempt >= MAX_LOCK_ATTEMPTS) {
        deps.metrics.allocations.inc({ kind: ref.kind, result: 'conflict' });
        context.logger.info({ attempts: attempt }, 'every candidate address was locked elsewhere, retrying');
        return { requeue: true };
      }
      const choice = this.choose(claim, ref, state);
      if (!choice.ok) {
        // Before telling the claim there is no address for it, make sure another replica did not give it one.
        const live = await this.liveAddress(claim, context);
        if (live) return this.adoptExisting(claim, ref, state, live, context);
        // The in-memory state may have drifted (events missed across a relist): check it against the stores once.
        const fresh = rebuilt ? undefined : deps.states.rebuildFromCaches(ref, state);
        rebuilt = true;
        if (fresh) {
          state = fresh;
          continue;
        }
        deps.states.addWaiting(ref, claimKey);
        const result = await this.finish(claim, choice.outcome, context);
        if (choice.retryAfterMs !== undefined) return { requeueAfterMs: choice.retryAfterMs };
        return result.requeue || result.requeueAfterMs !== undefined
          ? result
          : { requeueAfterMs: POOL_EXHAUSTED_RECHECK_MS * (1 + Math.random() / 5) };
      }
      state.assume(choice.unit, holder.uid);
      let acquired: AcquireResult;
      try {
        acquired = await acquireLock(choice.unit, ref, holder, {
          client: deps.client,
          cache: deps.cache,
          now: deps.now,
          reuseGracePeriodMs: state.allocation.reuseGracePeriodMs,
          signal: context.signal,
        });
      } catch (error) {
        // No answer (the API server went away): the lock may or may not exist. Freeing the address here is safe — if
        // the lock exists, its event marks the address used again, and a create for another claim fails with 409 —
        // while keeping it assumed would hold it in this process's memory for good.
        state.forgetAssumed(choice.unit.lockName);
        if (!deps.assumed.locks.get(choice.unit.lockName)) state.release(choice.unit, deps.now());
        throw error;
      }
      if (acquired.acquired) {
        deps.assumed.locks.assume(acquired.lock);
        unit = choice.unit;
        break;
      }
      // Someone else holds it (another replica, an overlapping pool): it stays marked used here; next candidate.
      deps.states.settleAssumed(state, choice.unit);
      const holderRef = poolRefOfLock(acquired.holder);
      if (!sameRef(holderRef, ref)) state.markForeign(choice.unit);
      deps.metrics.allocations.inc({ kind: ref.kind, result: 'conflict' });
      if (choice.specific !== undefined) {
        const by = acquired.holder.spec.claimRef;
        return this.finish(
          claim,
          notReady(
            IPADDRESSCLAIM_ALLOCATION_FAILED_REASON,
            `${choice.specific} cannot be allocated: it is held by IPAddressClaim ${by.namespace}/${by.name} ` +
              `(lock ${acquired.holder.metadata.name}); release it there or ask for another address`,
          ),
          context,
        );
      }
    }

    const address = await this.createAddress(claim, ref, state, unit, context);
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
    return this.finish(claim, allocated(address, ref), context);
  }

  /**
   * The claim's IPAddress exists. If it is ours, make sure its lock is held (after clusterctl move there is none) and
   * report it; if it is being deleted while the claim lives, let it go — it is re-created identically from the lock.
   */
  private async adoptExisting(
    claim: StoredClaim,
    ref: PoolRef,
    state: PoolState,
    existing: StoredAddress,
    context: ReconcileContext,
  ): Promise<Result> {
    const { deps } = this;
    if (existing.spec.claimRef.name !== claim.metadata.name || !sameRef(addressPoolRef(existing), ref)) {
      return this.finish(
        claim,
        notReady(
          IPADDRESSCLAIM_ALLOCATION_FAILED_REASON,
          `an IPAddress named ${existing.metadata.name} already exists for claim ${existing.spec.claimRef.name} ` +
            `from pool ${existing.spec.poolRef.kind} ${existing.spec.poolRef.name}: delete it or rename this claim`,
        ),
        context,
      );
    }
    if (existing.metadata.deletionTimestamp !== undefined) {
      await removeFinalizer(deps.client, ADDRESS_RESOURCE, existing, ADDRESS_FINALIZER, { signal: context.signal });
      context.logger.info('IPAddress deleted while its claim lives; it will be re-created with the same address');
      return {};
    }
    const unit = state.allocation.unitOf(existing.spec.address, existing.spec.prefix);
    if (!unit) {
      return this.finish(
        claim,
        notReady(
          IPADDRESSCLAIM_ALLOCATION_FAILED_REASON,
          `IPAddress ${existing.metadata.name} carries "${echo(existing.spec.address)}", which is not an IP address: delete the IPAddress to allocate anew`,
        ),
        context,
      );
    }
    // An IPAddress Tally did not write (no finalizer of ours): adopted only if the pool could have handed it out to
    // this claim, since the contract makes it immutable and the claim would carry it for life.
    const foreign = !hasFinalizer(existing, ADDRESS_FINALIZER);
    const mismatch = foreign ? this.adoptionMismatch(claim, state, existing, unit) : undefined;
    if (mismatch !== undefined) {
      return this.finish(
        claim,
        notReady(
          IPADDRESSCLAIM_ALLOCATION_FAILED_REASON,
          `IPAddress ${existing.metadata.namespace}/${existing.metadata.name} already exists but cannot be adopted: ` +
            `${mismatch}; Tally leaves it untouched: delete it (or correct it) to allocate`,
        ),
        context,
      );
    }
    const cached = deps.assumed.locks.get(unit.lockName);
    const lockHeld =
      cached !== undefined && cached.spec.claimRef.uid === claim.metadata.uid && cached.spec.releasedAt === undefined;
    if (!lockHeld) {
      state.assume(unit, claim.metadata.uid ?? '');
      const acquired = await acquireLock(unit, ref, holderOf(claim), {
        client: deps.client,
        cache: deps.cache,
        now: deps.now,
        reuseGracePeriodMs: 0,
        signal: context.signal,
      });
      if (acquired.acquired) deps.assumed.locks.assume(acquired.lock);
      else {
        deps.states.settleAssumed(state, unit);
        const by = acquired.holder.spec.claimRef;
        const message =
          `duplicate address: ${existing.spec.address} of IPAddress ${existing.metadata.namespace}/${existing.metadata.name} ` +
          `is also held by IPAddressClaim ${by.namespace}/${by.name} (lock ${acquired.holder.metadata.name}); ` +
          'delete one of the two claims so that each address has one owner';
        void deps.recorder.warning(claim, EVENT_DUPLICATE_ADDRESS, 'Allocate', eventNote(message));
        return this.finish(claim, notReady(IPADDRESSCLAIM_ALLOCATION_FAILED_REASON, message), context);
      }
    }
    await this.releaseSurplusLocks(claim, unit.lockName, context);
    const completed = await this.completeAddress(claim, ref, existing, context);
    if (!completed) return { requeue: true };
    deps.states.removeWaiting(ref, `${claim.metadata.namespace}/${claim.metadata.name}`);
    return this.finish(claim, allocated(completed, ref), context);
  }

  /** Why an IPAddress Tally did not write cannot be this claim's (undefined: it can be adopted). */
  private adoptionMismatch(
    claim: StoredClaim,
    state: PoolState,
    existing: StoredAddress,
    unit: AllocationUnit,
  ): string | undefined {
    const controller = existing.metadata.ownerReferences?.find((owner) => owner.controller === true);
    if (controller && controller.uid !== claim.metadata.uid) {
      return `it is controlled by ${controller.kind} ${echo(controller.name)}, not by this claim`;
    }
    const reservedFor = reservationHolder(state, unit.address);
    if (reservedFor !== undefined && reservedFor !== claim.metadata.name) {
      return `${unit.address} is reserved for claim ${reservedFor} (spec.reservations)`;
    }
    if (!state.allocation.covers(unit)) {
      return `${echo(existing.spec.address)}/${existing.spec.prefix} is not an address the pool hands out`;
    }
    if (existing.spec.prefix !== unit.prefix) {
      return `its spec.prefix ${existing.spec.prefix} differs from the pool's ${unit.prefix}`;
    }
    if ((existing.spec.gateway ?? undefined) !== state.allocation.gateway) {
      return `its spec.gateway ${echo(existing.spec.gateway ?? '<none>')} differs from the pool's ${state.allocation.gateway ?? '<none>'}`;
    }
    return undefined;
  }

  /**
   * The contract's IPAddress carries Tally's finalizer, the claim as its controller and the pool as a second owner.
   * An adopted IPAddress (written by someone else, or stripped of a reference) gains what it lacks; its spec is never
   * touched. A merge patch with the resourceVersion: a concurrent change makes it fail and the reconcile retries.
   */
  private async completeAddress(
    claim: StoredClaim,
    ref: PoolRef,
    existing: StoredAddress,
    context: ReconcileContext,
  ): Promise<StoredAddress | undefined> {
    const { deps } = this;
    const pool = deps.pool(ref);
    if (!pool) return undefined;
    let wanted: StoredAddress;
    try {
      wanted = setOwnerReference(setControllerReference(existing, claim), pool, { blockOwnerDeletion: true });
    } catch (error) {
      if (!(error instanceof AlreadyOwnedError)) throw error;
      // Checked before for foreign IPAddresses; one of ours taken over by another controller is left alone.
      context.logger.info({ owner: error.message }, 'IPAddress of the claim is controlled by another object');
      return existing;
    }
    const finalizers = existing.metadata.finalizers ?? [];
    const complete =
      finalizers.includes(ADDRESS_FINALIZER) &&
      JSON.stringify(wanted.metadata.ownerReferences) === JSON.stringify(existing.metadata.ownerReferences);
    if (complete) return existing;
    const patched = await deps.client.mergePatch(
      ADDRESS_RESOURCE,
      existing.metadata,
      {
        metadata: {
          resourceVersion: existing.metadata.resourceVersion,
          finalizers: finalizers.includes(ADDRESS_FINALIZER) ? finalizers : [...finalizers, ADDRESS_FINALIZER],
          ownerReferences: wanted.metadata.ownerReferences,
        },
      },
      { signal: context.signal },
    );
    context.logger.info('adopted IPAddress completed with the finalizer and the owner references to claim and pool');
    return deps.assumed.addresses.assume(patched);
  }

  /**
   * A claim with an IPAddress needs exactly one lock: that address's. Any other lock held for its uid was taken by a
   * reconcile that lost a race (another replica created the IPAddress first) or whose answer was lost (the API server
   * went away mid-request), and could not give it back; no IPAddress can ever be created with it (the claim's
   * IPAddress name is taken), so it is deleted — otherwise it would hold an address of the pool for as long as the
   * claim lives.
   */
  private async releaseSurplusLocks(
    claim: StoredClaim,
    keptLockName: string,
    context: ReconcileContext,
  ): Promise<void> {
    const { deps } = this;
    const uid = claim.metadata.uid ?? '';
    const surplus = new Map<string, StoredLock>();
    for (const lock of [...deps.locks.store.byIndex(LOCK_CLAIM_UID_INDEX, uid), ...deps.assumed.locks.pending()]) {
      const current = deps.assumed.locks.get(lock.metadata.name) ?? lock;
      if (current.metadata.name === keptLockName || current.spec.claimRef.uid !== uid) continue;
      if (current.spec.releasedAt !== undefined) continue;
      surplus.set(current.metadata.name, current);
    }
    for (const lock of surplus.values()) {
      await releaseLock(lock, false, deps.client, new Date(deps.now()), context.signal);
      deps.assumed.locks.forget(lock.metadata.name);
      context.logger.info({ lock: lock.metadata.name }, 'surplus lock of an allocated claim released');
    }
  }

  /** Picks an address: the requested-address annotation, else the pool's reservation for the claim, else the strategy. */
  private choose(claim: StoredClaim, ref: PoolRef, state: PoolState): Choice {
    const requested = claim.metadata.annotations?.[REQUESTED_ADDRESS_ANNOTATION];
    const reservation = state.allocation.reservations.get(claim.metadata.name);
    try {
      if (requested !== undefined && requested.length > MAX_REQUESTED_ADDRESS_LENGTH) {
        this.deps.metrics.allocations.inc({ kind: ref.kind, result: 'failed' });
        return {
          ok: false,
          outcome: notReady(
            IPADDRESSCLAIM_ALLOCATION_FAILED_REASON,
            `requested address ${echo(requested)} (annotation ${REQUESTED_ADDRESS_ANNOTATION}) is ` +
              `${requested.length} characters long, longer than any address or CIDR; change or remove the annotation`,
          ),
        };
      }
      if (requested !== undefined) {
        const canonical = state.allocation.isPrefixPool ? undefined : state.allocation.unitOf(requested, 0)?.address;
        const reservedFor = canonical === undefined ? undefined : reservationHolder(state, canonical);
        if (reservedFor !== undefined && reservedFor !== claim.metadata.name) {
          this.deps.metrics.allocations.inc({ kind: ref.kind, result: 'failed' });
          return {
            ok: false,
            outcome: notReady(
              CLAIM_ADDRESS_RESERVED_REASON,
              `requested address ${canonical} (annotation ${REQUESTED_ADDRESS_ANNOTATION}) is reserved for claim ` +
                `${reservedFor} in the spec.reservations of ${describePool(ref)}; change or remove the annotation`,
            ),
          };
        }
        const unit = state.allocation.allocateSpecific(requested);
        return {
          ok: true,
          unit,
          specific: `requested address ${echo(requested)} (annotation ${REQUESTED_ADDRESS_ANNOTATION})`,
        };
      }
      if (reservation !== undefined) {
        // Held back from the strategy since the pool state was built; only this claim may lock it.
        const unit = state.allocation.unitOf(reservation, 0);
        if (unit) return { ok: true, unit, specific: `reserved address ${reservation} (spec.reservations)` };
      }
      return { ok: true, unit: state.allocation.allocate(), specific: undefined };
    } catch (error) {
      if (!(error instanceof AllocationError)) throw error;
      const retryAfterMs =
        error.availableAtMs === undefined ? undefined : Math.max(error.availableAtMs - this.deps.now(), 1) + 50;
      if (requested !== undefined) {
        this.deps.metrics.allocations.inc({ kind: ref.kind, result: 'failed' });
        void this.deps.recorder.warning(claim, EVENT_ALLOCATION_FAILED, 'Allocate', eventNote(error.message));
        return {
          ok: false,
          retryAfterMs,
          outcome: notReady(
            IPADDRESSCLAIM_ALLOCATION_FAILED_REASON,
            `requested address ${echo(requested)} (annotation ${REQUESTED_ADDRESS_ANNOTATION}) cannot be allocated ` +
              `from ${describePool(ref)}: ${clipText(error.message, 1_000)}; change or remove the annotation`,
          ),
        };
      }
      this.deps.metrics.allocations.inc({ kind: ref.kind, result: 'exhausted' });
      const message =
        `${describePool(ref)} is exhausted: ${error.message}; the claim is allocated as soon as an address is ` +
        'released, or add addresses to the pool';
      void this.deps.recorder.warning(claim, EVENT_POOL_EXHAUSTED, 'Allocate', eventNote(message));
      return { ok: false, retryAfterMs, outcome: notReady(IPADDRESSCLAIM_POOL_EXHAUSTED_REASON, message) };
    }
  }

  /**
   * Creates the IPAddress for a locked unit. AlreadyExists means a concurrent reconcile (another replica) won: if that
   * IPAddress carries another address, our lock is given back and the next reconcile adopts the winner's.
   */
  private async createAddress(
    claim: StoredClaim,
    ref: PoolRef,
    state: PoolState,
    unit: AllocationUnit,
    context: ReconcileContext,
  ): Promise<StoredAddress | undefined> {
    const { deps } = this;
    const pool = deps.pool(ref);
    if (!pool) return undefined;
    const labels: Record<string, string> = {};
    const clusterLabel = claim.metadata.labels?.['cluster.x-k8s.io/cluster-name'];
    if (clusterLabel) labels['cluster.x-k8s.io/cluster-name'] = clusterLabel;
    const body = {
      apiVersion: IPAM_V1BETA2_API_VERSION,
      kind: 'IPAddress',
      metadata: {
        name: claim.metadata.name,
        namespace: claim.metadata.namespace,
        labels,
        finalizers: [ADDRESS_FINALIZER],
        ownerReferences: [
          ownerReferenceTo(claim, { controller: true, blockOwnerDeletion: true }),
          ownerReferenceTo(pool, { controller: false, blockOwnerDeletion: true }),
        ],
      },
      spec: {
        address: unit.address,
        prefix: unit.prefix,
        ...(state.allocation.gateway ? { gateway: state.allocation.gateway } : {}),
        poolRef: { apiGroup: TALLY_GROUP, kind: ref.kind, name: ref.name },
        claimRef: { name: claim.metadata.name },
      },
    };
    try {
      const created = deps.assumed.addresses.assume(
        await deps.client.create(ADDRESS_RESOURCE, body, { signal: context.signal }),
      );
      const recreated = deps.assumed.locks.get(unit.lockName)?.spec.claimRef.uid === claim.metadata.uid;
      if (recreated && claim.status?.addressRef?.name) {
        void deps.recorder.normal(
          claim,
          EVENT_ADDRESS_RECREATED,
          'Allocate',
          `re-created IPAddress ${created.metadata.name} with ${unit.address}`,
        );
      }
      return created;
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
    const live = await this.liveAddress(claim, context);
    if (live && live.spec.address === unit.address && sameRef(addressPoolRef(live), ref)) return live;
    // Another writer created the claim's IPAddress with a different address: our lock must not outlive this moment.
    const lock = await deps.cache.liveGet(LOCK_RESOURCE, { name: unit.lockName }, context.signal);
    if (lock && lock.spec.claimRef.uid === claim.metadata.uid) {
      await releaseLock(lock, false, deps.client, new Date(deps.now()), context.signal);
    }
    deps.assumed.locks.forget(unit.lockName);
    deps.states.settleAssumed(state, unit);
    return undefined;
  }

  /** The claim's IPAddress as the API server has it now (remembered, so the next reconcile need not ask again). */
  private async liveAddress(claim: StoredClaim, context: ReconcileContext): Promise<StoredAddress | undefined> {
    const live = await this.deps.cache.liveGet(
      ADDRESS_RESOURCE,
      { namespace: claim.metadata.namespace, name: claim.metadata.name },
      context.signal,
    );
    return live === undefined ? undefined : this.deps.assumed.addresses.assume(live);
  }

  /**
   * Deleted claim: IPAddress finalizer off and IPAddress deleted; once it is gone, the lock released (kept with
   * `releasedAt` for a grace period or least-recently-released order, else deleted); then the claim's finalizer off.
   * Runs also when the Cluster or the pool no longer exist.
   */
  private async release(claim: StoredClaim, ref: PoolRef, context: ReconcileContext): Promise<Result> {
    const { deps } = this;
    if (!hasFinalizer(claim, CLAIM_FINALIZER)) return {};
    const startedAt = performance.now();
    const key = { namespace: claim.metadata.namespace, name: claim.metadata.name };
    const address = await deps.cache.liveGet(ADDRESS_RESOURCE, key, context.signal);
    const ours =
      address !== undefined &&
      address.spec.claimRef.name === claim.metadata.name &&
      sameRef(addressPoolRef(address), ref);
    if (address && ours) {
      await removeFinalizer(deps.client, ADDRESS_RESOURCE, address, ADDRESS_FINALIZER, { signal: context.signal });
      try {
        await deps.client.delete(ADDRESS_RESOURCE, key, {
          preconditions: { uid: address.metadata.uid },
          signal: context.signal,
        });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
      // The lock goes only once the IPAddress is gone: until then the address is still visible as someone's.
      if (await deps.cache.liveGet(ADDRESS_RESOURCE, key, context.signal)) {
        context.logger.info('IPAddress still being deleted (another finalizer), waiting before releasing its lock');
        return { requeueAfterMs: ADDRESS_GONE_POLL_MS };
      }
    }

    const lookup = deps.states.lookup(ref);
    const state = lookup?.status === 'ready' ? lookup.state : undefined;
    const keepAsReleased =
      state !== undefined &&
      (state.allocation.reuseGracePeriodMs > 0 || state.allocation.strategy === 'LeastRecentlyReleased');
    const now = new Date(deps.now());
    const locks = new Map<string, StoredLock>();
    for (const lock of deps.locks.store.byIndex(LOCK_CLAIM_UID_INDEX, claim.metadata.uid ?? '')) {
      locks.set(lock.metadata.name, lock);
    }
    for (const lock of deps.assumed.locks.pending()) {
      if (lock.spec.claimRef.uid === claim.metadata.uid) locks.set(lock.metadata.name, lock);
    }
    if (address && ours && state) {
      const unit = state.allocation.unitOf(address.spec.address, address.spec.prefix);
      const live = unit ? await deps.cache.liveGet(LOCK_RESOURCE, { name: unit.lockName }, context.signal) : undefined;
      if (live && live.spec.claimRef.uid === claim.metadata.uid) locks.set(live.metadata.name, live);
    }
    let released = '';
    for (const lock of locks.values()) {
      await releaseLock(lock, keepAsReleased, deps.client, now, context.signal);
      const unit = state?.allocation.unitOf(lock.spec.address, lock.spec.prefix ?? 0);
      if (state && unit) {
        state.forgetAssumed(unit.lockName);
        state.release(unit, now.getTime());
      }
      released = lock.spec.prefix === undefined ? lock.spec.address : `${lock.spec.address}/${lock.spec.prefix}`;
    }
    deps.states.removeWaiting(ref, `${claim.metadata.namespace}/${claim.metadata.name}`);
    await removeFinalizer(deps.client, CLAIM_RESOURCE, claim, CLAIM_FINALIZER, { signal: context.signal });
    deps.metrics.releases.inc({ kind: ref.kind });
    deps.metrics.releaseDuration.observe({ kind: ref.kind }, (performance.now() - startedAt) / 1000);
    if (released) {
      void deps.recorder.normal(
        claim,
        EVENT_ADDRESS_RELEASED,
        'Release',
        `released ${released} to ${describePool(ref)}`,
      );
    }
    context.logger.info({ address: released || undefined }, 'claim released');
    return {};
  }

  private async finish(claim: StoredClaim, outcome: ClaimOutcome, context: ReconcileContext): Promise<Result> {
    const written = await writeClaimStatus(this.deps.client, claim, outcome, new Date(this.deps.now()), context.signal);
    if (written !== claim) this.deps.assumed.claims.assume(written);
    return {};
  }
}

/** An Event's note is cut by the API server at 1 KiB without a mark; cut here, with one. */
function eventNote(text: string): string {
  return clipUtf8(text, 1024);
}

/** The claim a pool's `spec.reservations` holds this canonical address for, if any. */
function reservationHolder(state: PoolState, address: string): string | undefined {
  for (const [claimName, reserved] of state.allocation.reservations) if (reserved === address) return claimName;
  return undefined;
}

function sameRef(a: PoolRef | undefined, b: PoolRef): boolean {
  return a !== undefined && poolKey(a) === poolKey(b);
}

function addressPoolRef(address: StoredAddress): PoolRef | undefined {
  return poolRefOfAddress(address);
}

function allocated(address: StoredAddress, ref: PoolRef): ClaimOutcome {
  const text =
    address.spec.prefix !== undefined && ref.kind.includes('Prefix')
      ? `${address.spec.address}/${address.spec.prefix}`
      : address.spec.address;
  return {
    ready: true,
    reason: IPADDRESSCLAIM_ADDRESS_ALLOCATED_REASON,
    message: `${text} allocated from ${describePool(ref)} (IPAddress ${address.metadata.name})`,
    addressName: address.metadata.name,
  };
}
