import { isIPAddressClaimReference } from '@tally-ipam/api-types';
import type {
  Cache,
  Client,
  ReconcileContext,
  Reconciler,
  Request,
  Result,
  SharedInformer,
} from '@tally-ipam/controller-kit';
import { ORPHAN_LOCK_SAFETY_AGE_MS } from './constants.js';
import type { AddressHolds } from './holds.js';
import { POOL_ADDRESS_INDEX, poolAddressKey } from './indexes.js';
import { RELEASE_COALESCE_MS } from './ledger/address-ledgers.js';
import { poolKey, poolRefOfLock } from './pool-ref.js';
import type { PoolStates } from './pool-states.js';
import { CLAIM_RESOURCE, type LockSource, type StoredAddress, type StoredClaim, type StoredLock } from './resources.js';

/** When to look again at an entry whose release this process has queued: past the longest coalescing window. */
const RELEASE_RECHECK_MS = 4 * RELEASE_COALESCE_MS;

export interface LockReconcilerDeps {
  readonly client: Client;
  readonly cache: Cache;
  readonly locks: LockSource;
  readonly holds: AddressHolds;
  readonly addresses: SharedInformer<StoredAddress>;
  /** The claims cache: a lock whose claim it shows alive needs no live read (every new lock is such a lock). */
  readonly claims: SharedInformer<StoredClaim>;
  readonly states: PoolStates;
  readonly now: () => number;
  /** With a namespaced provider, only locks of claims in this namespace are its business. */
  readonly namespace?: string | undefined;
  readonly orphanSafetyAgeMs?: number | undefined;
}

/**
 * A lock held (not released) for a claim the cache shows with the lock's uid: nothing for the garbage collector to do.
 * A cached claim with the lock's uid is proof enough that the lock is not orphaned: the cache can lag behind a
 * deletion, but the claim's deletion releases its locks itself (and its delete event queues them here). Only a claim
 * the cache does not show (gone, or not seen yet) is confirmed with the API server before anything is deleted.
 */
export function heldByCachedClaim(lock: StoredLock, claims: Pick<SharedInformer<StoredClaim>, 'store'>): boolean {
  const claimRef = lock.spec.claimRef;
  return (
    lock.spec.releasedAt === undefined &&
    claims.store.get(`${claimRef.namespace}/${claimRef.name}`)?.metadata.uid === claimRef.uid
  );
}

/** How often a released entry of a pool whose spec does not build is looked at again. */
export const UNREADY_POOL_RECHECK_MS = 30_000;

/**
 * Garbage-collects TallyAddressLocks, which have no owner reference for the garbage collector to follow:
 * - a released lock once its pool's reuse grace period is over (kept while the pool orders by least recently
 *   released, which needs the release time, and while the pool's spec does not build, so neither can be read);
 * - an orphaned lock — its claim is gone and no IPAddress carries its address (a claim deleted by force, or a crash
 *   between lock and IPAddress) — after a safety age, so a lock taken moments ago is never mistaken for one.
 * Deletes carry the lock's uid and resourceVersion: a lock re-taken meanwhile is never removed.
 */
export class LockReconciler implements Reconciler {
  constructor(private readonly deps: LockReconcilerDeps) {}

  async reconcile(request: Request, context: ReconcileContext): Promise<Result> {
    const { deps } = this;
    const lock = deps.locks.store.get(request.name);
    if (!lock) return {};
    if (deps.namespace && lock.spec.claimRef.namespace !== deps.namespace) return {};
    // A holding of a claim of another IPAM API (a Metal3 IPClaim) is that API's controller's to collect.
    if (!isIPAddressClaimReference(lock.spec.claimRef)) return {};
    const ref = poolRefOfLock(lock);
    const lookup = ref ? deps.states.lookup(ref) : undefined;
    const state = lookup?.status === 'ready' ? lookup.state : undefined;
    const now = deps.now();

    if (lock.spec.releasedAt !== undefined) {
      // A pool that exists but has no state (its spec does not build) has a grace period and a strategy this process
      // cannot read: the release time is kept until it can, rather than judged against a grace period of 0.
      if (lookup?.status === 'invalid') return { requeueAfterMs: UNREADY_POOL_RECHECK_MS };
      if (state?.allocation.strategy === 'LeastRecentlyReleased') return {};
      const releasedAt = Date.parse(lock.spec.releasedAt);
      const remaining = releasedAt + (state?.allocation.reuseGracePeriodMs ?? 0) - now;
      if (remaining > 0) return { requeueAfterMs: remaining + 50 };
      await this.delete(lock, context);
      context.logger.info({ address: lock.spec.address }, 'reuse grace period over, released lock deleted');
      return {};
    }

    const claimRef = lock.spec.claimRef;
    if (heldByCachedClaim(lock, deps.claims)) return {};
    // The claim's deletion has queued the release of this entry (written with others of its ledger): no read, no
    // drop; looked at again in case that write fails.
    if (deps.holds.releasing(lock.metadata.name, claimRef.uid)) return { requeueAfterMs: RELEASE_RECHECK_MS };
    const claim = await deps.cache.liveGet(
      CLAIM_RESOURCE,
      { namespace: claimRef.namespace, name: claimRef.name },
      context.signal,
    );
    if (claim && claim.metadata.uid === claimRef.uid) return {};
    const carried =
      ref !== undefined &&
      deps.addresses.store.byIndex(POOL_ADDRESS_INDEX, poolAddressKey(poolKey(ref), lock.spec.address)).length > 0;
    if (carried) return {};
    const safetyAge = deps.orphanSafetyAgeMs ?? ORPHAN_LOCK_SAFETY_AGE_MS;
    const age = now - Date.parse(lock.metadata.creationTimestamp ?? new Date(now).toISOString());
    if (age < safetyAge) return { requeueAfterMs: safetyAge - age + 50 };
    await this.delete(lock, context);
    context.logger.info(
      { address: lock.spec.address, claim: `${claimRef.namespace}/${claimRef.name}` },
      'orphaned lock deleted: its claim is gone and no IPAddress carries the address',
    );
    return {};
  }

  private async delete(lock: StoredLock, context: ReconcileContext): Promise<void> {
    await this.deps.holds.drop(lock, context.signal);
  }
}
