/**
 * A new allocation: an address chosen against everything held in the pool's ranges, held in the ledger (the API
 * server decides a race), then materialised as the claim's IPAddress; a lost race chooses again.
 */
import { echo } from '@tally-ipam/api-types';
import type { ReconcileContext, Result } from '@tally-ipam/controller-kit/controller';
import { allocateForClaim, type HeldAddress, type Metal3Allocation } from '../allocate.js';
import { Metal3AllocationError } from '../errors.js';
import { ledgerHeldInPlan } from '../holdings.js';
import type { Metal3PoolPlan } from '../ranges.js';
import { METAL3_POOL_INDEX, type StoredMetal3Claim, type StoredMetal3Pool } from '../resources.js';
import { EXHAUSTED_RECHECK_MS, type IPClaimReconcilerDeps, MAX_HOLD_ATTEMPTS } from './deps.js';
import { claimIdentity, holdAddress, knownEntries, poolIdentity, releaseAddress } from './entries.js';
import { createAddress } from './materialise.js';
import { fail, writeStatus } from './status.js';

/**
 * Chooses an address with `allocateForClaim` against the pool's IPAddresses and every ledger entry in its ranges
 * (whatever API holds it, this process's acknowledged holds included), holds it, creates the IPAddress and writes
 * status; up to `MAX_HOLD_ATTEMPTS` choices per reconcile.
 */
export async function allocate(
  deps: IPClaimReconcilerDeps,
  claim: StoredMetal3Claim,
  pool: StoredMetal3Pool,
  plan: Metal3PoolPlan,
  context: ReconcileContext,
): Promise<Result> {
  const namespace = claim.metadata.namespace ?? '';
  const identity = claimIdentity(claim);
  const poolAddresses: HeldAddress[] = deps.addresses.store
    .byIndex(METAL3_POOL_INDEX, `${namespace}/${pool.metadata.name}`)
    .flatMap((address) =>
      address.spec.address ? [{ address: address.spec.address, claimName: address.spec.claim?.name }] : [],
    );
  // Addresses this reconcile found taken in the ledger, or whose IPAddress name another claim has.
  const lost: HeldAddress[] = [];
  for (let attempt = 0; attempt < MAX_HOLD_ATTEMPTS; attempt += 1) {
    // The claim's own entry (an earlier reconcile's hold, even one the view does not show yet) carries its name, so
    // it is chosen again rather than a second address — unless this reconcile lost it already.
    const entries = ledgerHeldInPlan(knownEntries(deps), plan, namespace).map((entry) =>
      lost.some((address) => address.address === entry.address) ? { address: entry.address } : entry,
    );
    const held = [...poolAddresses, ...entries, ...lost];
    let allocation: Metal3Allocation;
    try {
      allocation = allocateForClaim(plan, identity.name, held);
    } catch (error) {
      if (!(error instanceof Metal3AllocationError)) throw error;
      await fail(deps.client, claim, `IPPool ${namespace}/${pool.metadata.name}: ${error.message}`, context);
      return error.reason === 'exhausted' ? { requeueAfterMs: EXHAUSTED_RECHECK_MS } : {};
    }
    const hold = await holdAddress(deps, allocation.address, poolIdentity(pool), identity);
    if (!hold.ok) {
      const by = hold.holder.claimRef;
      if (plan.preAllocations.has(identity.name)) {
        return fail(
          deps.client,
          claim,
          `spec.preAllocations[${echo(identity.name)}]: ${allocation.address} of IPPool ${namespace}/${pool.metadata.name} ` +
            `is held by ${by.kind ?? 'IPAddressClaim'} ${by.namespace}/${by.name}`,
          context,
        );
      }
      context.logger.debug({ address: allocation.address, holder: by }, 'address held elsewhere, choosing again');
      lost.push({ address: allocation.address });
      continue;
    }
    const created = await createAddress(deps.client, claim, pool, allocation, context);
    if (created === 'taken') {
      // The IPAddress name belongs to another claim (an IPAddress nobody's entry covers): give the entry back.
      await releaseAddress(deps, allocation.address, identity.uid);
      lost.push({ address: allocation.address });
      continue;
    }
    context.logger.info({ address: allocation.address, ipAddress: created.metadata.name }, 'address allocated');
    await writeStatus(
      deps.client,
      claim,
      { address: { name: created.metadata.name, namespace: created.metadata.namespace }, errorMessage: null },
      context,
    );
    return {};
  }
  context.logger.info({ attempts: MAX_HOLD_ATTEMPTS }, 'every chosen address was held elsewhere, retrying');
  return { requeue: true };
}
