/**
 * The claim's IPAddress exists: it is the allocation. Its ledger entry is held for the claim (adoption after
 * `clusterctl move` or a switch from Metal3's controller), any second IPAddress or entry of the claim goes, and status
 * points at it.
 */
import type { ReconcileContext, Result } from '@tally-ipam/controller-kit/controller';
import {
  METAL3_CLAIM_INDEX,
  type StoredMetal3Address,
  type StoredMetal3Claim,
  type StoredMetal3Pool,
} from '../resources.js';
import type { IPClaimReconcilerDeps } from './deps.js';
import { claimIdentity, holdAddress, isHeldBy, poolIdentity } from './entries.js';
import { deleteAddress, releaseEntries } from './release.js';
import { fail, writeStatus } from './status.js';

/**
 * The IPAddresses of the claim in its pool, the one to keep first: owned by the claim's uid, then the oldest, then by
 * name — an order every replica computes alike, so two replicas that each created one keep the same.
 */
export function addressesOfClaim(
  deps: Pick<IPClaimReconcilerDeps, 'addresses'>,
  claim: StoredMetal3Claim,
  pool: StoredMetal3Pool,
): StoredMetal3Address[] {
  const uid = claim.metadata.uid;
  const owned = (address: StoredMetal3Address): number =>
    address.metadata.ownerReferences?.some((ref) => ref.uid === uid) ? 0 : 1;
  return deps.addresses.store
    .byIndex(METAL3_CLAIM_INDEX, `${claim.metadata.namespace}/${claim.metadata.name}`)
    .filter((address) => address.spec.pool?.name === pool.metadata.name && address.spec.address)
    .sort(
      (a, b) =>
        owned(a) - owned(b) ||
        (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
        a.metadata.name.localeCompare(b.metadata.name),
    );
}

/**
 * The claim's IPAddress `existing` is kept: its entry is the claim's (held unless the view or the overlay shows it so),
 * status points at it, and any other IPAddress (two replicas that both allocated for the claim at once) and entry of
 * the claim go.
 */
export async function adopt(
  deps: IPClaimReconcilerDeps,
  claim: StoredMetal3Claim,
  pool: StoredMetal3Pool,
  existing: StoredMetal3Address,
  surplus: readonly StoredMetal3Address[],
  context: ReconcileContext,
): Promise<Result> {
  const address = existing.spec.address ?? '';
  const identity = claimIdentity(claim);
  if (!isHeldBy(deps, address, identity.uid)) {
    const result = await holdAddress(deps, address, poolIdentity(pool), identity);
    if (!result.ok) {
      const by = result.holder.claimRef;
      return fail(
        deps.client,
        claim,
        `duplicate address: ${address} of IPAddress ${existing.metadata.namespace}/${existing.metadata.name} is also ` +
          `held by ${by.kind ?? 'IPAddressClaim'} ${by.namespace}/${by.name} (pool ${result.holder.poolRef.kind} ` +
          `${result.holder.poolRef.name}); delete one of the two claims so that each address has one owner`,
        context,
      );
    }
  }
  for (const extra of surplus) {
    if (extra.metadata.ownerReferences?.some((ref) => ref.uid === identity.uid)) {
      await deleteAddress(deps.client, extra, context);
      context.logger.info({ ipAddress: extra.metadata.name }, 'second IPAddress of the claim deleted');
    }
  }
  await releaseEntries(deps, identity.uid, (entryAddress) => entryAddress !== address);
  await writeStatus(
    deps.client,
    claim,
    { address: { name: existing.metadata.name, namespace: existing.metadata.namespace }, errorMessage: null },
    context,
  );
  return {};
}
