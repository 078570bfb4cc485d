import type { SharedInformer, Store } from '@tally-ipam/controller-kit/cache';
import { type Client, isNotFound } from '@tally-ipam/controller-kit/client';
import type { ReconcileContext, Reconciler, Request, Result } from '@tally-ipam/controller-kit/controller';
import type { AddressLedgers, Holding } from '@tally-ipam/ledger';
import { isMetal3ClaimReference, ledgerSlot } from '../holdings.js';
import {
  METAL3_CLAIM_RESOURCE,
  METAL3_POOL_INDEX,
  type StoredMetal3Address,
  type StoredMetal3Claim,
} from '../resources.js';

/** Age after which an entry of a vanished IPClaim is dropped: Tally's rule for its own entries (60 s). */
export const ORPHAN_ENTRY_SAFETY_AGE_MS = 60_000;

export interface OrphanEntryReconcilerDeps {
  readonly client: Client;
  readonly ledgers: AddressLedgers;
  readonly entries: Pick<Store<Holding>, 'get'>;
  readonly claims: Pick<SharedInformer<StoredMetal3Claim>, 'store'>;
  readonly addresses: Pick<SharedInformer<StoredMetal3Address>, 'store'>;
  readonly now: () => number;
  /** The namespace the claims are watched in; entries of claims elsewhere are not this process's to judge. */
  readonly namespace?: string | undefined;
  readonly safetyAgeMs?: number | undefined;
}

/**
 * Drops the ledger entries of Metal3 IPClaims that are gone — force-deleted, deleted on the source side of
 * `clusterctl move`, or vanished between the hold and the finalizer — by the rule Tally's collector applies to its
 * own (which leaves other APIs' entries alone): the claim does not exist with the entry's uid (checked live), no
 * IPAddress of the entry's pool carries the address, and the entry is older than the safety age. The drop removes
 * exactly the entry observed, inside the ledger's compare-and-swap, so an entry re-taken meanwhile stays.
 * Requests are entry keys (`ip4-10.0.0.5`).
 */
export class OrphanEntryReconciler implements Reconciler {
  constructor(private readonly deps: OrphanEntryReconcilerDeps) {}

  async reconcile(request: Request, context: ReconcileContext): Promise<Result> {
    const entry = this.deps.entries.get(request.name);
    if (!entry || !isMetal3ClaimReference(entry.spec.claimRef)) return {};
    const claimRef = entry.spec.claimRef;
    if (this.deps.namespace !== undefined && claimRef.namespace !== this.deps.namespace) return {};
    const cached = this.deps.claims.store.get(`${claimRef.namespace}/${claimRef.name}`);
    if (cached?.metadata.uid === claimRef.uid) return {};
    const poolRef = entry.spec.poolRef;
    const carried = this.deps.addresses.store
      .byIndex(METAL3_POOL_INDEX, `${poolRef.namespace ?? ''}/${poolRef.name}`)
      .some((address) => address.spec.address === entry.spec.address);
    if (carried) return {};
    const safetyAgeMs = this.deps.safetyAgeMs ?? ORPHAN_ENTRY_SAFETY_AGE_MS;
    const age = this.deps.now() - Date.parse(entry.metadata.creationTimestamp ?? '');
    if (!(age >= safetyAgeMs))
      return { requeueAfterMs: Math.max(safetyAgeMs - (Number.isNaN(age) ? 0 : age), 0) + 1_000 };

    // The cache may be behind a claim created a moment ago: only the API server's answer drops an entry.
    try {
      const live = await this.deps.client.get(
        METAL3_CLAIM_RESOURCE,
        { namespace: claimRef.namespace, name: claimRef.name },
        { signal: context.signal },
      );
      if (live.metadata.uid === claimRef.uid) return {};
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    const { ledgerName, key } = ledgerSlot(entry.spec.address);
    const observed = await this.deps.ledgers.liveLedgerEntry(ledgerName, key, context.signal);
    if (!observed || observed.entry.claimRef.uid !== claimRef.uid || observed.entry.releasedAt !== undefined) return {};
    await this.deps.ledgers.submit(ledgerName, { kind: 'drop', observed: observed.entry });
    context.logger.info(
      { address: entry.spec.address, claim: `${claimRef.namespace}/${claimRef.name}`, uid: claimRef.uid },
      'ledger entry of a vanished IPClaim dropped',
    );
    return {};
  }
}
