import { clusterNameOf, hasFinalizer } from '@tally-ipam/controller-kit';
import { ledgerNameOf } from '@tally-ipam/ledger';
import type { Logger } from 'pino';
import { examineExistingAddress, type HoldExistingDeps, holdExistingAddress } from '../claim/existing-address.js';
import { pauseReason, poolClusterName } from '../pause.js';
import type { AllocationUnit } from '../pool-allocation.js';
import { finalizersOf } from '../pool-kinds.js';
import { type PoolRef, poolKey, poolRefOfClaim } from '../pool-ref.js';
import type { PoolState } from '../pool-state.js';
import type { StoredAddress, StoredClaim, StoredCluster } from '../resources.js';
import type { ProviderContext } from '../shared.js';

/**
 * The start-up adoption of IPAddresses that exist without a ledger entry: the target cluster of a `clusterctl move`
 * (the ledgers, cluster-scoped, do not move), a first start over a populated cluster. Each claim's reconcile would
 * adopt its own IPAddress, one ledger write for the few claims of a block that happen to be in flight together; this
 * walks the IPAddress store once before any reconcile and submits every hold in one turn, so the ledger writer
 * (AddressLedgers) carries all the holds of a block in one compare-and-swap write. Whatever it does not adopt is left
 * to the claim's reconcile, which decides with the same rules (`examineExistingAddress`) and reports what is wrong.
 */

export interface BulkAdoptionDeps extends HoldExistingDeps {
  readonly informers: Pick<ProviderContext['informers'], 'claims' | 'addresses' | 'clusters'>;
  readonly pool: ProviderContext['pool'];
  readonly logger: Pick<Logger, 'info' | 'warn'>;
  /** Whether this process serves the claim (Tally pool, watch filter): others' claims are not adopted. */
  readonly servesClaim: (claim: StoredClaim) => boolean;
}

export interface BulkAdoptionResult {
  /** IPAddresses whose address was entered into the ledgers for their claim now. */
  readonly adopted: number;
  /** Ledgers those holds were written to. */
  readonly ledgers: number;
  /** IPAddresses whose address the ledgers already held for their claim. */
  readonly alreadyHeld: number;
  /**
   * IPAddresses of served claims left to their claims' reconciles: not adoptable, held by another claim, their claim
   * or pool paused or not ready, or the hold refused or failed.
   */
  readonly leftToClaims: number;
  readonly durationMs: number;
}

type ClusterOf = (namespace: string, name: string) => StoredCluster | undefined;

interface Adoption {
  readonly claim: StoredClaim;
  readonly ref: PoolRef;
  readonly state: PoolState;
  readonly unit: AllocationUnit;
}

/** Enters every adoptable IPAddress of the stores into the ledgers; expects the informers to have listed. */
export async function adoptExistingAddresses(deps: BulkAdoptionDeps): Promise<BulkAdoptionResult> {
  const startedAt = performance.now();
  const { adoptions, alreadyHeld, skipped } = adoptionsOf(deps);
  // One synchronous loop: every hold is submitted in this turn, so each ledger's holds share its next write.
  const signal = new AbortController().signal;
  const holds = adoptions.map((adoption) =>
    holdExistingAddress(deps, adoption.claim, adoption.ref, adoption.state, adoption.unit, signal),
  );
  const settled = await Promise.allSettled(holds);
  let adopted = 0;
  const ledgers = new Set<string>();
  for (const [index, outcome] of settled.entries()) {
    const { claim, unit } = adoptions[index] as Adoption;
    const fields = { claim: `${claim.metadata.namespace}/${claim.metadata.name}`, entry: unit.entryKey };
    if (outcome.status === 'rejected') {
      // The claim's own reconcile holds it again, with its retries and its reporting.
      deps.logger.warn({ ...fields, err: outcome.reason }, 'start-up adoption: holding the address failed');
    } else if (!outcome.value.acquired) {
      // The claim's reconcile reports the duplicate with its Event and condition.
      const by = outcome.value.holder.spec.claimRef;
      deps.logger.info(
        { ...fields, holder: `${by.namespace}/${by.name}` },
        'start-up adoption: address held by another claim',
      );
    } else {
      adopted += 1;
      ledgers.add(ledgerNameOf(unit));
    }
  }
  const result = {
    adopted,
    ledgers: ledgers.size,
    alreadyHeld,
    leftToClaims: skipped + adoptions.length - adopted,
    durationMs: Math.round(performance.now() - startedAt),
  };
  deps.logger.info(
    result,
    `adopted ${result.adopted} addresses in ${result.ledgers} ledgers, ${result.leftToClaims} left to their claims, in ${result.durationMs} ms`,
  );
  return result;
}

/** One pass over the IPAddress store: the holds to write, and what is left alone. No request, no write. */
function adoptionsOf(deps: BulkAdoptionDeps): { adoptions: Adoption[]; alreadyHeld: number; skipped: number } {
  const cluster: ClusterOf = (namespace, name) => deps.informers.clusters.store.get(`${namespace}/${name}`);
  const states = new Map<string, PoolState | undefined>();
  const stateOf = (ref: PoolRef): PoolState | undefined => {
    const key = poolKey(ref);
    if (!states.has(key)) states.set(key, adoptingState(deps, ref, cluster));
    return states.get(key);
  };
  const adoptions: Adoption[] = [];
  const taken = new Set<string>();
  let alreadyHeld = 0;
  let skipped = 0;
  for (const address of deps.informers.addresses.store.list()) {
    const claim = claimOf(deps, address);
    if (!claim) continue;
    const ref = poolRefOfClaim(claim);
    const state = ref && claimReady(claim, ref, cluster) ? stateOf(ref) : undefined;
    if (!ref || !state) {
      skipped += 1;
      continue;
    }
    const examined = examineExistingAddress(claim, ref, state, address, deps.assumed.holdings);
    if (examined.kind === 'adoptable' && examined.entry === 'claim') {
      alreadyHeld += 1;
    } else if (examined.kind === 'adoptable' && examined.entry === 'free' && !taken.has(examined.unit.entryKey)) {
      taken.add(examined.unit.entryKey);
      adoptions.push({ claim, ref, state, unit: examined.unit });
    } else {
      skipped += 1;
    }
  }
  return { adoptions, alreadyHeld, skipped };
}

/** The served claim an IPAddress is named after (the claim's reconcile looks its IPAddress up by its own name). */
function claimOf(deps: BulkAdoptionDeps, address: StoredAddress): StoredClaim | undefined {
  const claim = deps.informers.claims.store.get(`${address.metadata.namespace}/${address.metadata.name}`);
  return claim && deps.servesClaim(claim) ? claim : undefined;
}

/**
 * Whether the claim's reconcile would get as far as adopting: alive with its kind's finalizer (an entry is never written
 * for a claim that can vanish unseen), its Cluster known and nothing paused.
 */
function claimReady(claim: StoredClaim, ref: PoolRef, cluster: ClusterOf): boolean {
  // The kind's claim finalizer: an in-cluster claim the reference served carries its `ReleaseAddress`.
  if (claim.metadata.deletionTimestamp !== undefined || !hasFinalizer(claim, finalizersOf(ref.kind).claim))
    return false;
  const clusterName = clusterNameOf(claim);
  if (clusterName && !cluster(claim.metadata.namespace ?? '', clusterName)) return false;
  return pauseReason(claim, clusterName, cluster) === undefined;
}

/** The pool's state when the pool hands out addresses now: it exists, is not paused or deleted, its spec is valid. */
function adoptingState(deps: BulkAdoptionDeps, ref: PoolRef, cluster: ClusterOf): PoolState | undefined {
  const pool = deps.pool(ref);
  if (!pool || pool.metadata.deletionTimestamp !== undefined) return undefined;
  if (pauseReason(pool, poolClusterName(pool), cluster) !== undefined) return undefined;
  const lookup = deps.states.lookup(ref);
  return lookup?.status === 'ready' ? lookup.state : undefined;
}
