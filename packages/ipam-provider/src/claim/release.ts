/**
 * Step 4: a deleted claim gives everything back (IPAddress, then its holding, then the claim's finalizer); an IPAddress
 * whose claim vanished unseen is cleaned up.
 */

import {
  hasFinalizer,
  isConflict,
  isNotFound,
  type ReconcileContext,
  type Request,
  type Result,
  removeFinalizer,
} from '@tally-ipam/controller-kit';
import type { Holding } from '@tally-ipam/ledger';
import { EVENT_ADDRESS_RELEASED } from '../constants.js';
import { HOLDING_CLAIM_UID_INDEX } from '../indexes.js';
import { finalizersOf } from '../pool-kinds.js';
import { describePool, type PoolRef, poolRefOfAddress, samePool } from '../pool-ref.js';
import { ADDRESS_RESOURCE, CLAIM_RESOURCE, type StoredAddress, type StoredClaim } from '../resources.js';
import type { ClaimReconcilerDeps } from './deps.js';

/** How long to wait before looking again at an IPAddress another finalizer still holds. */
const ADDRESS_GONE_POLL_MS = 1_000;

/**
 * Deleted claim: IPAddress finalizer off and IPAddress deleted; once it is gone, the holding released (kept with
 * `releasedAt` for a grace period or least-recently-released order, else deleted); then the claim's finalizer off.
 * Runs also when the Cluster or the pool no longer exist.
 */
export async function releaseClaim(
  deps: ClaimReconcilerDeps,
  claim: StoredClaim,
  ref: PoolRef,
  context: ReconcileContext,
): Promise<Result> {
  const finalizers = finalizersOf(ref.kind);
  if (!hasFinalizer(claim, finalizers.claim)) return {};
  const delayMs = releaseDelayMs(deps, claim, ref);
  if (delayMs > 0) {
    context.logger.info({ remainingMs: delayMs }, "the pool's address reuse grace period holds the release");
    return { requeueAfterMs: delayMs };
  }
  const startedAt = performance.now();
  const key = { namespace: claim.metadata.namespace, name: claim.metadata.name };
  const isOurs = (candidate: StoredAddress | undefined): candidate is StoredAddress =>
    candidate !== undefined &&
    candidate.spec.claimRef.name === claim.metadata.name &&
    samePool(poolRefOfAddress(candidate), ref);
  // The cached IPAddress is used only when it is ours: its writes carry its resourceVersion, so a stale copy costs a
  // Conflict and a read, never a wrong deletion. When the cache shows none (or another's), it is read live: one created
  // by another replica may not be in the cache yet, and the entry must not go while it exists.
  const cached = deps.assumed.addresses.get(`${key.namespace}/${key.name}`);
  const address = isOurs(cached) ? cached : await deps.cache.liveGet(ADDRESS_RESOURCE, key, context.signal);
  const ours = isOurs(address);
  let current = ours ? address : undefined;
  for (let attempt = 0; current !== undefined; attempt += 1) {
    const outcome = await deleteAddress(deps, current, finalizers.address, context.signal);
    if (outcome === 'gone') break;
    // The holding goes only once the IPAddress is gone: until then the address is still visible as someone's.
    const live = await deps.cache.liveGet(ADDRESS_RESOURCE, key, context.signal);
    if (live === undefined) break;
    if (outcome === 'lingers' || attempt > 0 || !isOurs(live)) {
      context.logger.info('IPAddress still being deleted (another finalizer), waiting before releasing its holding');
      return { requeueAfterMs: ADDRESS_GONE_POLL_MS };
    }
    current = live;
  }

  const lookup = deps.states.lookup(ref);
  const state = lookup?.status === 'ready' ? lookup.state : undefined;
  const keepAsReleased =
    state !== undefined &&
    (state.allocation.reuseGracePeriodMs > 0 || state.allocation.strategy === 'LeastRecentlyReleased');
  const now = new Date(deps.now());
  const holdings = new Map<string, Holding>();
  for (const holding of deps.holdings.store.byIndex(HOLDING_CLAIM_UID_INDEX, claim.metadata.uid ?? '')) {
    holdings.set(holding.metadata.name, holding);
  }
  for (const holding of deps.assumed.holdings.pending()) {
    if (holding.spec.claimRef.uid === claim.metadata.uid) holdings.set(holding.metadata.name, holding);
  }
  // The holding of the IPAddress's address, which the cache may not show yet: released only if the API server shows it
  // held for this claim (decided in the write, no read first).
  let conditional: { readonly key: string; readonly address: string; readonly prefix?: number } | undefined;
  const deleted = current ?? address;
  if (deleted && ours && state) {
    const unit = state.allocation.unitOf(deleted.spec.address, deleted.spec.prefix);
    if (unit && !holdings.has(unit.entryKey)) {
      conditional = { key: unit.entryKey, address: unit.address, ...(unit.isPrefix ? { prefix: unit.prefix } : {}) };
    }
  }
  // The releases are left to finish after the finalizer is removed: those of one block arriving within about a second
  // share one compare-and-swap write (the releases of a deletion burst, and two replicas releasing the same claims).
  // A crash before they are written leaves entries whose claim is gone, which the garbage collector drops.
  const background = true;
  const releases: Promise<void>[] = [];
  if (conditional) {
    // Freed in memory when the ledger informer shows the entry gone: it may have been another claim's.
    releases.push(
      deps.holds.releaseIfHeldBy(conditional.key, claim.metadata.uid ?? '', keepAsReleased, now, { background }),
    );
  }
  let released = conditional
    ? conditional.prefix === undefined
      ? conditional.address
      : `${conditional.address}/${conditional.prefix}`
    : '';
  for (const holding of holdings.values()) {
    const release = deps.holds.release(holding, keepAsReleased, now, context.signal, { background }).then(() => {
      const unit = state?.allocation.unitOf(holding.spec.address, holding.spec.prefix ?? 0);
      if (state && unit) {
        state.forgetAssumed(unit.entryKey);
        state.release(unit, now.getTime());
      }
    });
    releases.push(release);
    released =
      holding.spec.prefix === undefined ? holding.spec.address : `${holding.spec.address}/${holding.spec.prefix}`;
  }
  const logger = context.logger;
  for (const release of releases) {
    release.catch((error: unknown) =>
      logger.warn({ err: error }, 'ledger release failed; the garbage collector drops the entry of the deleted claim'),
    );
  }
  deps.states.removeWaiting(ref, `${claim.metadata.namespace}/${claim.metadata.name}`);
  await removeFinalizer(deps.client, CLAIM_RESOURCE, claim, finalizers.claim, { signal: context.signal });
  deps.metrics.releases.inc({ kind: ref.kind });
  deps.metrics.releaseDuration.observe({ kind: ref.kind }, (performance.now() - startedAt) / 1000);
  if (released) {
    void deps.recorder.normal(claim, EVENT_ADDRESS_RELEASED, 'Release', `released ${released} to ${describePool(ref)}`);
  }
  context.logger.info({ address: released || undefined }, 'claim released');
  return {};
}

/**
 * How long the release of a deleted claim still waits (0: release now): the in-cluster kinds' grace period, counted
 * from the claim's deletion as the reference counts it, and skipped when the pool is gone or being deleted (a cluster's
 * teardown must not wait on it). A pool whose spec cannot be used has no grace period to hold.
 */
function releaseDelayMs(deps: ClaimReconcilerDeps, claim: StoredClaim, ref: PoolRef): number {
  const pool = deps.pool(ref);
  if (!pool || pool.metadata.deletionTimestamp !== undefined) return 0;
  const lookup = deps.states.lookup(ref);
  const delay = lookup?.status === 'ready' ? lookup.state.allocation.releaseDelayMs : 0;
  if (delay <= 0) return 0;
  const deletedAt = Date.parse(claim.metadata.deletionTimestamp ?? '');
  if (Number.isNaN(deletedAt)) return 0;
  return Math.max(0, deletedAt + delay - deps.now());
}

/**
 * Removes Tally's finalizer from the claim's IPAddress and deletes it, and says from the answers alone whether it is
 * gone: `gone` when the delete found nothing, or deleted exactly the copy our finalizer patch returned with no finalizer
 * left (an object without finalizers is removed at once); `lingers` when another finalizer holds it; `stale` when our
 * copy was not the API server's (a Conflict: another replica or a lagging cache), to be read again.
 */
async function deleteAddress(
  deps: ClaimReconcilerDeps,
  address: StoredAddress,
  finalizer: string,
  signal: AbortSignal,
): Promise<'gone' | 'lingers' | 'stale'> {
  let patched: StoredAddress;
  try {
    patched = await removeFinalizer(deps.client, ADDRESS_RESOURCE, address, finalizer, { signal });
  } catch (error) {
    if (isConflict(error)) return 'stale';
    throw error;
  }
  const finalizersLeft = (patched.metadata.finalizers ?? []).length > 0;
  const resourceVersion = patched.metadata.resourceVersion;
  try {
    await deps.client.delete(ADDRESS_RESOURCE, address.metadata, {
      preconditions: {
        uid: address.metadata.uid,
        ...(finalizersLeft || resourceVersion === undefined ? {} : { resourceVersion }),
      },
      signal,
    });
  } catch (error) {
    if (isNotFound(error)) return 'gone';
    if (isConflict(error)) return 'stale';
    throw error;
  }
  return finalizersLeft || resourceVersion === undefined ? 'lingers' : 'gone';
}

/**
 * The claim is gone but an IPAddress of its name still carries Tally's finalizer (the claim was force-deleted, or a
 * replica with a stale cache re-created the IPAddress while another released the claim): nobody else will ever
 * remove that finalizer, so it is removed here once the owning claim is confirmed gone by a live read.
 */
export async function cleanUpOrphanedAddress(
  deps: ClaimReconcilerDeps,
  request: Request,
  context: ReconcileContext,
): Promise<Result> {
  const address = deps.assumed.addresses.get(`${request.namespace}/${request.name}`);
  const ref = address ? poolRefOfAddress(address) : undefined;
  // Only the served kinds' IPAddresses: with the in-cluster kinds off, theirs are the reference provider's to clean.
  if (!address || !ref || !deps.servedKinds.has(ref.kind)) return {};
  const finalizer = finalizersOf(ref.kind).address;
  if (!hasFinalizer(address, finalizer)) return {};
  // By name, not by owner reference: the garbage collector strips the reference to a deleted claim (the pool
  // still owns the IPAddress, so it is not collected).
  const claim = await deps.cache.liveGet(
    CLAIM_RESOURCE,
    { namespace: request.namespace, name: address.spec.claimRef.name },
    context.signal,
  );
  if (claim) return {};
  await removeFinalizer(deps.client, ADDRESS_RESOURCE, address, finalizer, { signal: context.signal });
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
