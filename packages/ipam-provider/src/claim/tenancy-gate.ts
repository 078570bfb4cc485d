/**
 * Step 2 for a claim of a global pool with tenancy (`spec.namespaceSelector`, `spec.maxAddressesPerNamespace`): the
 * claim's namespace is admitted, its addresses counted, and the hold written as one step per (pool, namespace) in this
 * process (`KeyedSerializer`), so concurrent reconciles of one namespace keep the cap exactly. What is exact and what
 * is not:
 * - one active replica (leader election, the default): exact. The count is the ledger entries of the pool held for
 *   the namespace's claims, as the informer shows them plus this process's own acknowledged writes on top
 *   (`assumed.holdings`), taken under the namespace's turn; the next turn sees the hold the previous one wrote.
 *   A release only lowers the count once the informer shows it, which errs towards refusing, never towards more.
 * - two active replicas: not exact. The API server's compare-and-swap is per ledger (one address block), and a
 *   namespace's addresses span many ledgers, so no one conditional write covers the count; each replica counts what
 *   it has seen. Claims of one namespace decided at the same moment by both replicas can exceed the cap by what the
 *   other replica admitted before its writes reached this one's informer (at most one hold per concurrent reconcile
 *   of the other replica). Nothing is ever taken back to correct it; new claims wait until the namespace is under.
 * - a hold write whose answer is lost (the API server went away mid-request) is not counted until the informer shows
 *   it: a claim decided in that window may exceed the cap by one.
 * Holding ahead is off for such pools: it holds addresses for waiting claims without asking the namespace's turn.
 */
import { IPADDRESSCLAIM_READY_CONDITION, type PoolTenancy } from '@tally-ipam/api-types';
import { type Condition, getCondition, type ReconcileContext } from '@tally-ipam/controller-kit';
import { HOLDING_CLAIM_UID_INDEX, POOL_INDEX } from '../indexes.js';
import { describePool, type PoolRef, poolKey, poolRefOfHolding, samePool } from '../pool-ref.js';
import type { PoolState } from '../pool-state.js';
import type { StoredClaim } from '../resources.js';
import { tenancyVerdict } from '../tenancy.js';
import { type AcquireOptions, type Acquisition, acquireUnit, whileWaiting } from './acquire.js';
import { eventNote } from './choose.js';
import type { ClaimReconcilerDeps } from './deps.js';
import { finishClaim } from './materialise.js';
import { notReady } from './status.js';

/** Entries of the pool held (not released) for claims of `namespace`, other than the claim of `exceptUID`. */
export function heldByNamespace(deps: ClaimReconcilerDeps, ref: PoolRef, namespace: string, exceptUID: string): number {
  const held = new Set<string>();
  for (const seen of [...deps.holdings.store.byIndex(POOL_INDEX, poolKey(ref)), ...deps.assumed.holdings.pending()]) {
    const holding = deps.assumed.holdings.get(seen.metadata.name) ?? seen;
    const claimRef = holding.spec.claimRef;
    if (!samePool(poolRefOfHolding(holding), ref) || holding.spec.releasedAt !== undefined) continue;
    if (claimRef.namespace !== namespace || claimRef.uid === exceptUID) continue;
    held.add(holding.metadata.name);
  }
  return held.size;
}

/** Whether the claim holds an entry of the pool already (a reconcile crashed between the hold and the IPAddress). */
function holdsEntry(deps: ClaimReconcilerDeps, claim: StoredClaim, ref: PoolRef): boolean {
  const uid = claim.metadata.uid ?? '';
  return [...deps.holdings.store.byIndex(HOLDING_CLAIM_UID_INDEX, uid), ...deps.assumed.holdings.pending()].some(
    (seen) => {
      const holding = deps.assumed.holdings.get(seen.metadata.name) ?? seen;
      return (
        holding.spec.claimRef.uid === uid &&
        holding.spec.releasedAt === undefined &&
        samePool(poolRefOfHolding(holding), ref)
      );
    },
  );
}

/** `acquireUnit` behind the pool's tenancy: refused claims get Ready=False, a Warning Event and no address. */
export async function admitAndAcquire(
  deps: ClaimReconcilerDeps,
  claim: StoredClaim,
  ref: PoolRef,
  state: PoolState,
  tenancy: PoolTenancy,
  context: ReconcileContext,
  options: AcquireOptions,
): Promise<Acquisition> {
  const withoutHoldAhead: ClaimReconcilerDeps = { ...deps, holdAhead: undefined };
  // Held already: counted already, and never taken back.
  if (holdsEntry(deps, claim, ref)) return acquireUnit(withoutHoldAhead, claim, ref, state, context, options);
  const namespace = claim.metadata.namespace ?? '';
  const uid = claim.metadata.uid ?? '';
  return deps.tenancyTurns.run(`${poolKey(ref)}|${namespace}`, async () => {
    const verdict = tenancyVerdict({
      tenancy,
      pool: describePool(ref),
      namespace,
      namespaceLabels: namespaceLabels(deps, namespace),
      held: heldByNamespace(deps, ref, namespace, uid),
    });
    if (verdict.admitted) return acquireUnit(withoutHoldAhead, claim, ref, state, context, options);
    // Woken with the pool's other waiting claims when one of its addresses is freed; the namespace watch and the pool
    // watch re-queue it on a relabel or a spec change.
    deps.states.addWaiting(ref, `${namespace}/${claim.metadata.name}`);
    const current = getCondition(
      (claim.status?.conditions ?? []) as readonly Condition[],
      IPADDRESSCLAIM_READY_CONDITION,
    );
    if (current?.reason !== verdict.reason) {
      void deps.recorder.warning(claim, verdict.reason, 'Allocate', eventNote(verdict.message));
    }
    const result = await finishClaim(deps, claim, notReady(verdict.reason, verdict.message), context);
    return { kind: 'done', result: whileWaiting(result) };
  });
}

/** The namespace's labels (`{}` for none), or undefined when the cache does not hold the namespace. */
function namespaceLabels(deps: ClaimReconcilerDeps, namespace: string): Readonly<Record<string, string>> | undefined {
  const object = deps.namespaces.store.get(namespace);
  return object === undefined ? undefined : (object.metadata.labels ?? {});
}
