/**
 * Giving back: the deletion of a claim (its IPAddresses deleted, its entries released, the finalizer removed) and the
 * removal of what a claim holds beyond its one allocation.
 */
import { METAL3_IP_ADDRESS_FINALIZER, METAL3_IP_CLAIM_FINALIZER } from '@tally-ipam/api-types';
import { type Client, hasFinalizer, isNotFound, removeFinalizer } from '@tally-ipam/controller-kit/client';
import type { ReconcileContext, Result } from '@tally-ipam/controller-kit/controller';
import {
  METAL3_ADDRESS_RESOURCE,
  METAL3_CLAIM_INDEX,
  METAL3_CLAIM_RESOURCE,
  type StoredMetal3Address,
  type StoredMetal3Claim,
} from '../resources.js';
import type { IPClaimReconcilerDeps } from './deps.js';
import { addressesHeldBy, releaseAddress } from './entries.js';

/** Deletion, once no other finalizer is left (Metal3's rule): IPAddresses deleted, entries released, finalizer off. */
export async function reconcileDelete(
  deps: IPClaimReconcilerDeps,
  claim: StoredMetal3Claim,
  context: ReconcileContext,
): Promise<Result> {
  if (!hasFinalizer(claim, METAL3_IP_CLAIM_FINALIZER)) return {};
  const others = (claim.metadata.finalizers ?? []).filter((finalizer) => finalizer !== METAL3_IP_CLAIM_FINALIZER);
  if (others.length > 0) {
    // Metal3's rule: a claim still in use by whoever put the other finalizers keeps its address.
    context.logger.debug({ finalizers: others }, 'deleting, but other finalizers remain: address kept');
    return {};
  }
  const uid = claim.metadata.uid ?? '';
  const addresses = deps.addresses.store.byIndex(
    METAL3_CLAIM_INDEX,
    `${claim.metadata.namespace}/${claim.metadata.name}`,
  );
  for (const address of addresses) {
    await deleteAddress(deps.client, address, context);
    if (address.spec.address) await releaseAddress(deps, address.spec.address, uid);
    context.logger.info({ ipAddress: address.metadata.name, address: address.spec.address }, 'IPAddress deleted');
  }
  await releaseEntries(deps, uid, () => true);
  await removeFinalizer(deps.client, METAL3_CLAIM_RESOURCE, claim, METAL3_IP_CLAIM_FINALIZER, {
    signal: context.signal,
  });
  return {};
}

/** Removes Metal3's finalizer from an IPAddress and deletes it (as Metal3's deleteAddress does). */
export async function deleteAddress(
  client: Client,
  address: StoredMetal3Address,
  context: ReconcileContext,
): Promise<void> {
  const released = await removeFinalizer(client, METAL3_ADDRESS_RESOURCE, address, METAL3_IP_ADDRESS_FINALIZER, {
    signal: context.signal,
  });
  try {
    await client.delete(
      METAL3_ADDRESS_RESOURCE,
      { namespace: released.metadata.namespace, name: released.metadata.name },
      { signal: context.signal, preconditions: { uid: address.metadata.uid } },
    );
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

/** Releases the claim's entries (in the entry view or only in the overlay yet) whose address `which` selects. */
export async function releaseEntries(
  deps: IPClaimReconcilerDeps,
  uid: string,
  which: (address: string) => boolean,
): Promise<void> {
  const addresses = addressesHeldBy(deps, uid).filter(which);
  await Promise.all(addresses.map((address) => releaseAddress(deps, address, uid)));
}
