/**
 * Step 3: what the contract shows of an allocation — the IPAddress (created, or an existing one adopted and completed
 * with finalizer and owner references) and the claim's status.
 */
import {
  CLUSTER_NAME_LABEL,
  echo,
  IPADDRESSCLAIM_ADDRESS_ALLOCATED_REASON,
  IPAM_V1BETA2_API_VERSION,
  TALLY_GROUP,
} from '@tally-ipam/api-types';
import {
  AlreadyOwnedError,
  isAlreadyExists,
  ownerReferenceTo,
  type ReconcileContext,
  type Result,
  sameJSON,
  setControllerReference,
  setOwnerReference,
} from '@tally-ipam/controller-kit';
import { EVENT_ADDRESS_RECREATED } from '../constants.js';
import type { AllocationUnit } from '../pool-allocation.js';
import { finalizersOf } from '../pool-kinds.js';
import { describePool, type PoolRef, poolRefOfAddress, samePool } from '../pool-ref.js';
import type { PoolState } from '../pool-state.js';
import { ADDRESS_RESOURCE, type StoredAddress, type StoredClaim } from '../resources.js';
import { reservationHolder } from './choose.js';
import type { ClaimReconcilerDeps } from './deps.js';
import { type ClaimOutcome, writeClaimStatus } from './status.js';

/** Why an IPAddress Tally did not write cannot be this claim's (undefined: it can be adopted). */
export function adoptionMismatch(
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
export async function completeAddress(
  deps: ClaimReconcilerDeps,
  claim: StoredClaim,
  ref: PoolRef,
  existing: StoredAddress,
  context: ReconcileContext,
): Promise<StoredAddress | undefined> {
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
  const finalizer = finalizersOf(ref.kind).address;
  const complete =
    finalizers.includes(finalizer) && sameJSON(wanted.metadata.ownerReferences, existing.metadata.ownerReferences);
  if (complete) return existing;
  const patched = await deps.client.mergePatch(
    ADDRESS_RESOURCE,
    existing.metadata,
    {
      metadata: {
        resourceVersion: existing.metadata.resourceVersion,
        finalizers: finalizers.includes(finalizer) ? finalizers : [...finalizers, finalizer],
        ownerReferences: wanted.metadata.ownerReferences,
      },
    },
    { signal: context.signal },
  );
  context.logger.info('adopted IPAddress completed with the finalizer and the owner references to claim and pool');
  return deps.assumed.addresses.assume(patched);
}

/**
 * Creates the IPAddress for a held unit. AlreadyExists means a concurrent reconcile (another replica) won: if that
 * IPAddress carries another address, our holding is given back and the next reconcile adopts the winner's.
 */
export async function createAddress(
  deps: ClaimReconcilerDeps,
  claim: StoredClaim,
  ref: PoolRef,
  state: PoolState,
  unit: AllocationUnit,
  context: ReconcileContext,
): Promise<StoredAddress | undefined> {
  const pool = deps.pool(ref);
  if (!pool) return undefined;
  const labels: Record<string, string> = {};
  const clusterLabel = claim.metadata.labels?.[CLUSTER_NAME_LABEL];
  if (clusterLabel) labels[CLUSTER_NAME_LABEL] = clusterLabel;
  const body = {
    apiVersion: IPAM_V1BETA2_API_VERSION,
    kind: 'IPAddress',
    metadata: {
      name: claim.metadata.name,
      namespace: claim.metadata.namespace,
      labels,
      finalizers: [finalizersOf(ref.kind).address],
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
  const addressKey = `${claim.metadata.namespace}/${claim.metadata.name}`;
  let createdUID: string | undefined;
  deps.createdAddresses?.creating(addressKey);
  try {
    const created = deps.assumed.addresses.assume(
      await deps.client.create(ADDRESS_RESOURCE, body, { signal: context.signal }),
    );
    // Unless its create event has been seen already (the watch can be quicker than this answer).
    if (deps.addresses.store.get(addressKey)?.metadata.uid !== created.metadata.uid) createdUID = created.metadata.uid;
    const recreated = deps.assumed.holdings.get(unit.entryKey)?.spec.claimRef.uid === claim.metadata.uid;
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
  } finally {
    deps.createdAddresses?.settled(addressKey, createdUID);
  }
  const live = await liveAddress(deps, claim, context);
  if (live && live.spec.address === unit.address && samePool(poolRefOfAddress(live), ref)) return live;
  // Another writer created the claim's IPAddress with a different address: our holding must not outlive this moment.
  deps.holdAhead?.contended(ref);
  const holding = await deps.holds.live(unit.entryKey, context.signal);
  if (holding && holding.spec.claimRef.uid === claim.metadata.uid) {
    await deps.holds.release(holding, false, new Date(deps.now()), context.signal);
  }
  deps.assumed.holdings.forget(unit.entryKey);
  deps.states.settleAssumed(state, unit);
  return undefined;
}

/** The claim's IPAddress as the API server has it now (remembered, so the next reconcile need not ask again). */
export async function liveAddress(
  deps: ClaimReconcilerDeps,
  claim: StoredClaim,
  context: ReconcileContext,
): Promise<StoredAddress | undefined> {
  const live = await deps.cache.liveGet(
    ADDRESS_RESOURCE,
    { namespace: claim.metadata.namespace, name: claim.metadata.name },
    context.signal,
  );
  return live === undefined ? undefined : deps.assumed.addresses.assume(live);
}

export async function finishClaim(
  deps: ClaimReconcilerDeps,
  claim: StoredClaim,
  outcome: ClaimOutcome,
  context: ReconcileContext,
): Promise<Result> {
  const written = await writeClaimStatus(deps.client, claim, outcome, new Date(deps.now()), context.signal);
  if (written !== claim) deps.assumed.claims.assume(written);
  return {};
}

export function allocated(address: StoredAddress, ref: PoolRef): ClaimOutcome {
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
