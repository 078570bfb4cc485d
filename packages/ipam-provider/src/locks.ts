import { TALLY_ADDRESS_LOCK_KIND, TALLY_V1ALPHA1_API_VERSION } from '@tally-ipam/api-types';
import { type Cache, type Client, isAlreadyExists, isConflict, isNotFound } from '@tally-ipam/controller-kit';
import { LOCK_POOL_KIND_LABEL, LOCK_POOL_NAME_LABEL, LOCK_POOL_NAMESPACE_LABEL } from './constants.js';
import type { AllocationUnit } from './pool-allocation.js';
import { type PoolRef, tallyPoolReference } from './pool-ref.js';
import { LOCK_RESOURCE, type StoredClaim, type StoredLock } from './resources.js';

/** The claim a lock is taken for. */
export interface LockHolder {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

export function holderOf(claim: StoredClaim): LockHolder {
  return {
    namespace: claim.metadata.namespace ?? '',
    name: claim.metadata.name,
    uid: claim.metadata.uid ?? '',
  };
}

export type AcquireResult =
  | { readonly acquired: true; readonly lock: StoredLock }
  /** Another claim holds it (or it is a released lock still in its grace period). */
  | { readonly acquired: false; readonly holder: StoredLock };

function lockBody(
  unit: AllocationUnit,
  pool: PoolRef,
  holder: LockHolder,
): Record<string, unknown> & {
  metadata: { name: string; labels: Record<string, string> };
} {
  const labels: Record<string, string> = {
    [LOCK_POOL_KIND_LABEL]: pool.kind,
    [LOCK_POOL_NAME_LABEL]: pool.name,
  };
  if (pool.namespace) labels[LOCK_POOL_NAMESPACE_LABEL] = pool.namespace;
  return {
    apiVersion: TALLY_V1ALPHA1_API_VERSION,
    kind: TALLY_ADDRESS_LOCK_KIND,
    metadata: { name: unit.lockName, labels },
    spec: {
      address: unit.address,
      ...(unit.isPrefix ? { prefix: unit.prefix } : {}),
      poolRef: tallyPoolReference(pool),
      claimRef: { namespace: holder.namespace, name: holder.name, uid: holder.uid },
    },
  };
}

export interface AcquireOptions {
  readonly client: Client;
  readonly cache: Cache;
  readonly now: () => number;
  /** The pool's reuse grace period: a released lock younger than this is not taken over. */
  readonly reuseGracePeriodMs: number;
  readonly signal: AbortSignal;
}

/**
 * Takes the lock of `unit` for `holder`. The create is the atomic step: of any number of claims, pools and replicas
 * racing for one address, exactly one create succeeds. On AlreadyExists the live lock decides:
 * - held by this claim (a retry after a crash, or the cache lagging): acquired;
 * - held by an earlier claim of the same namespace/name whose uid differs: that claim is gone (two claims of one name
 *   cannot coexist), so the lock is stale — taken over;
 * - released and past the grace period: taken over;
 * - otherwise: not acquired, the holder is returned.
 * A takeover deletes the old lock with uid and resourceVersion preconditions, so two takers cannot both win.
 */
export async function acquireLock(
  unit: AllocationUnit,
  pool: PoolRef,
  holder: LockHolder,
  options: AcquireOptions,
): Promise<AcquireResult> {
  const body = lockBody(unit, pool, holder);
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      const lock = await options.client.create(LOCK_RESOURCE, body, { signal: options.signal });
      return { acquired: true, lock };
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
    const live = await options.cache.liveGet(LOCK_RESOURCE, { name: unit.lockName }, options.signal);
    if (!live) continue; // deleted in between: try the create again
    const claimRef = live.spec.claimRef;
    if (claimRef.uid === holder.uid && live.spec.releasedAt === undefined) return { acquired: true, lock: live };
    const sameClaimName = claimRef.namespace === holder.namespace && claimRef.name === holder.name;
    const releasedAt = live.spec.releasedAt === undefined ? undefined : Date.parse(live.spec.releasedAt);
    const cooled = releasedAt !== undefined && options.now() - releasedAt >= options.reuseGracePeriodMs;
    if (!sameClaimName && !cooled) return { acquired: false, holder: live };
    try {
      await options.client.delete(
        LOCK_RESOURCE,
        { name: unit.lockName },
        {
          preconditions: { uid: live.metadata.uid, resourceVersion: live.metadata.resourceVersion },
          signal: options.signal,
        },
      );
    } catch (error) {
      if (!isNotFound(error) && !isConflict(error)) throw error;
    }
  }
  const live = await options.cache.liveGet(LOCK_RESOURCE, { name: unit.lockName }, options.signal);
  if (live && live.spec.claimRef.uid === holder.uid) return { acquired: true, lock: live };
  if (live) return { acquired: false, holder: live };
  throw new Error(
    `could not take lock ${unit.lockName} for claim ${holder.namespace}/${holder.name}: it kept changing; the reconcile will retry`,
  );
}

/**
 * Gives a lock back. With a reuse grace period or least-recently-released order the lock stays, marked with
 * `releasedAt` (so every replica, and a restarted one, knows when the address may be reused); otherwise it is
 * deleted. Both writes carry the lock's uid, so a newer lock of the same address is never touched.
 */
export async function releaseLock(
  lock: StoredLock,
  keepAsReleased: boolean,
  client: Client,
  now: Date,
  signal: AbortSignal,
): Promise<void> {
  try {
    if (keepAsReleased) {
      if (lock.spec.releasedAt !== undefined) return;
      // The uid in a patch is a precondition: a different lock of the same name makes it fail with a Conflict.
      // Milliseconds, not metav1.Time's seconds: releases within one second must keep their order for
      // LeastRecentlyReleased on every replica.
      await client.mergePatch(
        LOCK_RESOURCE,
        { name: lock.metadata.name },
        { metadata: { uid: lock.metadata.uid }, spec: { releasedAt: now.toISOString() } },
        { signal },
      );
      return;
    }
    await client.delete(
      LOCK_RESOURCE,
      { name: lock.metadata.name },
      { preconditions: { uid: lock.metadata.uid }, signal },
    );
  } catch (error) {
    if (isNotFound(error) || isConflict(error)) return;
    throw error;
  }
}
