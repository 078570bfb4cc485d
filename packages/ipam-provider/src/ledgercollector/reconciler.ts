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
import { type Holding, RELEASE_COALESCE_MS } from '@tally-ipam/ledger';
import { ORPHAN_ENTRY_SAFETY_AGE_MS } from '../constants.js';
import type { AddressHolds } from '../holds.js';
import { POOL_ADDRESS_INDEX, poolAddressKey } from '../indexes.js';
import { poolKey, poolRefOfHolding } from '../pool-ref.js';
import type { PoolStates } from '../pool-states.js';
import { CLAIM_RESOURCE, type HoldingSource, type StoredAddress, type StoredClaim } from '../resources.js';

/** When to look again at an entry whose release this process has queued: past the longest coalescing window. */
const RELEASE_RECHECK_MS = 4 * RELEASE_COALESCE_MS;

export interface LedgerCollectorDeps {
  readonly client: Client;
  readonly cache: Cache;
  readonly holdings: HoldingSource;
  readonly holds: AddressHolds;
  readonly addresses: SharedInformer<StoredAddress>;
  /** The claims cache: a holding whose claim it shows alive needs no live read (every new holding is such a holding). */
  readonly claims: SharedInformer<StoredClaim>;
  readonly states: PoolStates;
  readonly now: () => number;
  /** With a namespaced provider, only holdings of claims in this namespace are its business. */
  readonly namespace?: string | undefined;
  readonly orphanSafetyAgeMs?: number | undefined;
}

/**
 * An entry held (not released) for a claim the cache shows with the holding's uid: nothing for the garbage collector to do.
 * A cached claim with the holding's uid is proof enough that the holding is not orphaned: the cache can lag behind a
 * deletion, but the claim's deletion releases its holdings itself (and its delete event queues them here). Only a claim
 * the cache does not show (gone, or not seen yet) is confirmed with the API server before anything is deleted.
 */
export function heldByCachedClaim(holding: Holding, claims: Pick<SharedInformer<StoredClaim>, 'store'>): boolean {
  const claimRef = holding.spec.claimRef;
  return (
    holding.spec.releasedAt === undefined &&
    claims.store.get(`${claimRef.namespace}/${claimRef.name}`)?.metadata.uid === claimRef.uid
  );
}

/** How often a released entry of a pool whose spec does not build is looked at again. */
export const UNREADY_POOL_RECHECK_MS = 30_000;

/**
 * Garbage-collects ledger entries, which have no owner reference for the Kubernetes garbage collector to follow:
 * - a released holding once its pool's reuse grace period is over (kept while the pool orders by least recently
 *   released, which needs the release time, and while the pool's spec does not build, so neither can be read);
 * - an orphaned holding — its claim is gone and no IPAddress carries its address (a claim deleted by force, or a crash
 *   between holding and IPAddress) — after a safety age, so a holding taken moments ago is never mistaken for one.
 * Deletes carry the holding's uid and resourceVersion: a holding re-taken meanwhile is never removed.
 */
export class LedgerCollector implements Reconciler {
  constructor(private readonly deps: LedgerCollectorDeps) {}

  async reconcile(request: Request, context: ReconcileContext): Promise<Result> {
    const { deps } = this;
    const holding = deps.holdings.store.get(request.name);
    if (!holding) return {};
    if (deps.namespace && holding.spec.claimRef.namespace !== deps.namespace) return {};
    // A holding of a claim of another IPAM API (a Metal3 IPClaim) is that API's controller's to collect.
    if (!isIPAddressClaimReference(holding.spec.claimRef)) return {};
    const ref = poolRefOfHolding(holding);
    const lookup = ref ? deps.states.lookup(ref) : undefined;
    const state = lookup?.status === 'ready' ? lookup.state : undefined;
    const now = deps.now();

    if (holding.spec.releasedAt !== undefined) {
      // A pool that exists but has no state (its spec does not build) has a grace period and a strategy this process
      // cannot read: the release time is kept until it can, rather than judged against a grace period of 0.
      if (lookup?.status === 'invalid') return { requeueAfterMs: UNREADY_POOL_RECHECK_MS };
      if (state?.allocation.strategy === 'LeastRecentlyReleased') return {};
      const releasedAt = Date.parse(holding.spec.releasedAt);
      const remaining = releasedAt + (state?.allocation.reuseGracePeriodMs ?? 0) - now;
      if (remaining > 0) return { requeueAfterMs: remaining + 50 };
      await this.delete(holding, context);
      context.logger.info({ address: holding.spec.address }, 'reuse grace period over, released ledger entry dropped');
      return {};
    }

    const claimRef = holding.spec.claimRef;
    if (heldByCachedClaim(holding, deps.claims)) return {};
    // The claim's deletion has queued the release of this entry (written with others of its ledger): no read, no
    // drop; looked at again in case that write fails.
    if (deps.holds.releasing(holding.metadata.name, claimRef.uid)) return { requeueAfterMs: RELEASE_RECHECK_MS };
    const claim = await deps.cache.liveGet(
      CLAIM_RESOURCE,
      { namespace: claimRef.namespace, name: claimRef.name },
      context.signal,
    );
    if (claim && claim.metadata.uid === claimRef.uid) return {};
    const carried =
      ref !== undefined &&
      deps.addresses.store.byIndex(POOL_ADDRESS_INDEX, poolAddressKey(poolKey(ref), holding.spec.address)).length > 0;
    if (carried) return {};
    const safetyAge = deps.orphanSafetyAgeMs ?? ORPHAN_ENTRY_SAFETY_AGE_MS;
    const age = now - Date.parse(holding.metadata.creationTimestamp ?? new Date(now).toISOString());
    if (age < safetyAge) return { requeueAfterMs: safetyAge - age + 50 };
    await this.delete(holding, context);
    context.logger.info(
      { address: holding.spec.address, claim: `${claimRef.namespace}/${claimRef.name}` },
      'orphaned ledger entry dropped: its claim is gone and no IPAddress carries the address',
    );
    return {};
  }

  private async delete(holding: Holding, context: ReconcileContext): Promise<void> {
    await this.deps.holds.drop(holding, context.signal);
  }
}
