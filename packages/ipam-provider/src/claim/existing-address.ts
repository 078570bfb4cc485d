/**
 * The rules for an IPAddress that exists before its claim's reconcile decides anything (clusterctl move, a restart over
 * a populated cluster, another replica's create): whether it is the claim's to adopt, and what holds its address.
 * The claim reconcile (`adoptExisting`) and the start-up adoption (src/adoption) both decide with these, so the two
 * can never disagree on which IPAddress is adopted.
 */
import { echo } from '@tally-ipam/api-types';
import { hasFinalizer } from '@tally-ipam/controller-kit';
import type { Holding } from '@tally-ipam/ledger';
import { type AcquireResult, type AddressHolds, holderOf } from '../holds.js';
import type { AllocationUnit } from '../pool-allocation.js';
import { finalizersOf } from '../pool-kinds.js';
import { type PoolRef, poolRefOfAddress, samePool } from '../pool-ref.js';
import type { PoolState } from '../pool-state.js';
import type { PoolStates } from '../pool-states.js';
import type { StoredAddress, StoredClaim } from '../resources.js';
import type { AssumedWrites } from '../shared.js';
import { adoptionMismatch } from './materialise.js';

/** Who the ledger (as this process sees it) says holds the address of an adoptable IPAddress. */
export type ExistingEntry =
  /** The claim itself: nothing to write. */
  | 'claim'
  /** Another claim, not released: the ledger write would be refused unless the copy is stale. */
  | 'other'
  /** Nobody, or a released entry (taken over with no grace period: the IPAddress already carries the address). */
  | 'free';

/** What an existing IPAddress is to the claim of the same name. */
export type ExistingAddress =
  | { readonly kind: 'adoptable'; readonly unit: AllocationUnit; readonly entry: ExistingEntry }
  /** Being deleted while its claim lives: let it go (it is re-created identically from the holding). */
  | { readonly kind: 'deleting' }
  /** Never adopted: `message` is the claim's Ready=False message. */
  | { readonly kind: 'refused'; readonly message: string };

/**
 * Decides whether `existing` — the IPAddress named like `claim`, of its namespace — is the claim's to adopt from the
 * pool `ref`, in the order the claim reports problems: another claim's or pool's IPAddress, one being deleted, one
 * whose address does not parse, then one Tally did not write (no finalizer of ours) that the pool could not have handed
 * to this claim — the contract makes an IPAddress immutable, so the claim would carry it for life. No request.
 */
export function examineExistingAddress(
  claim: StoredClaim,
  ref: PoolRef,
  state: PoolState,
  existing: StoredAddress,
  holdings: Pick<AssumedWrites['holdings'], 'get'>,
): ExistingAddress {
  if (existing.spec.claimRef.name !== claim.metadata.name || !samePool(poolRefOfAddress(existing), ref)) {
    return {
      kind: 'refused',
      message:
        `an IPAddress named ${existing.metadata.name} already exists for claim ${existing.spec.claimRef.name} ` +
        `from pool ${existing.spec.poolRef.kind} ${existing.spec.poolRef.name}: delete it or rename this claim`,
    };
  }
  if (existing.metadata.deletionTimestamp !== undefined) return { kind: 'deleting' };
  const unit = state.allocation.unitOf(existing.spec.address, existing.spec.prefix);
  if (!unit) {
    return {
      kind: 'refused',
      message: `IPAddress ${existing.metadata.name} carries "${echo(existing.spec.address)}", which is not an IP address: delete the IPAddress to allocate anew`,
    };
  }
  // The kind's own finalizer: on an in-cluster pool's IPAddress the reference's, which it wrote before a take-over.
  const foreign = !hasFinalizer(existing, finalizersOf(ref.kind).address);
  const mismatch = foreign ? adoptionMismatch(claim, state, existing, unit) : undefined;
  if (mismatch !== undefined) {
    return {
      kind: 'refused',
      message:
        `IPAddress ${existing.metadata.namespace}/${existing.metadata.name} already exists but cannot be adopted: ` +
        `${mismatch}; Tally leaves it untouched: delete it (or correct it) to allocate`,
    };
  }
  return { kind: 'adoptable', unit, entry: entryOf(holdings.get(unit.entryKey), claim) };
}

function entryOf(holding: Holding | undefined, claim: StoredClaim): ExistingEntry {
  if (holding === undefined || holding.spec.releasedAt !== undefined) return 'free';
  return holding.spec.claimRef.uid === claim.metadata.uid ? 'claim' : 'other';
}

export interface HoldExistingDeps {
  readonly holds: AddressHolds;
  readonly states: PoolStates;
  readonly assumed: Pick<AssumedWrites, 'holdings'>;
}

/**
 * Holds the address of an adoptable IPAddress for its claim, with no grace period (the IPAddress already carries it).
 * The address is assumed in the pool state while the write is out, and the holding the API server returned is assumed
 * once it answers, so later reconciles see it before the informer does. Refused (another claim holds it) or failed, the
 * assumption is settled: the IPAddress still marks the address used.
 */
export async function holdExistingAddress(
  deps: HoldExistingDeps,
  claim: StoredClaim,
  ref: PoolRef,
  state: PoolState,
  unit: AllocationUnit,
  signal: AbortSignal,
): Promise<AcquireResult> {
  state.assume(unit, claim.metadata.uid ?? '');
  let acquired: AcquireResult;
  try {
    acquired = await deps.holds.acquire(unit, ref, holderOf(claim), 0, signal);
  } catch (error) {
    deps.states.settleAssumed(state, unit);
    throw error;
  }
  if (acquired.acquired) deps.assumed.holdings.assume(acquired.holding);
  else deps.states.settleAssumed(state, unit);
  return acquired;
}
