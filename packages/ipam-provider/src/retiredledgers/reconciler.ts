import {
  type Client,
  isConflict,
  isNotFound,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
  type SharedInformer,
} from '@tally-ipam/controller-kit';
import { type Holding, LEDGER_RESOURCE, ledgerNameOfEntryKey, type StoredLedger } from '@tally-ipam/ledger';

/** How often a retired ledger whose entries are not all held again yet is looked at (adoption may wait on a pause). */
export const RETIRED_LEDGER_RECHECK_MS = 30_000;

export interface RetiredLedgersDeps {
  readonly client: Client;
  readonly ledgers: Pick<SharedInformer<StoredLedger>, 'store'>;
  /** The entries of the ledgers of the current layout, as holdings (the ledger entry view). */
  readonly holdings: Pick<SharedInformer<Holding>, 'store'>;
}

/**
 * What a ledger of another block size still stands for: nothing once each of its entries is released or held again,
 * for the same claim, in the ledger the current layout names for it.
 */
export function entriesNotHeldAgain(ledger: StoredLedger, holdings: Pick<SharedInformer<Holding>, 'store'>): string[] {
  return (ledger.spec.entries ?? [])
    .filter((entry) => {
      if (entry.releasedAt !== undefined) return false;
      return holdings.store.get(entry.key)?.spec.claimRef.uid !== entry.claimRef.uid;
    })
    .map((entry) => entry.key);
}

/** A ledger at least one of whose entries the current layout keeps in another ledger: written by another block size. */
export function isRetiredLedger(ledger: StoredLedger): boolean {
  const name = ledger.metadata.name;
  return (ledger.spec.entries ?? []).some((entry) => ledgerNameOfEntryKey(entry.key) !== name);
}

/**
 * Deletes the ledgers of another block size (the 256-address ledgers of the unreleased 0.1.0) once they hold nothing
 * the current ledgers do not: the entry view ignores their entries, and the start-up adoption of both IPAM front ends
 * (or a claim's own reconcile, once its pause ends) enters each IPAddress again in the current layout. A ledger whose
 * entries are not all held again stays — its entries may be the only record of an allocation whose front end has not
 * adopted it yet — and is looked at again. The delete carries the ledger's uid and resourceVersion: a ledger written
 * since (a replica of the old layout still running) is never removed.
 */
export class RetiredLedgers implements Reconciler {
  constructor(private readonly deps: RetiredLedgersDeps) {}

  async reconcile(request: Request, context: ReconcileContext): Promise<Result> {
    const ledger = this.deps.ledgers.store.get(request.name);
    if (!ledger || !isRetiredLedger(ledger)) return {};
    const waiting = entriesNotHeldAgain(ledger, this.deps.holdings);
    if (waiting.length > 0) {
      context.logger.debug(
        { waiting: waiting.length, first: waiting[0] },
        'retired ledger: entries not held again in the current ledgers yet',
      );
      return { requeueAfterMs: RETIRED_LEDGER_RECHECK_MS };
    }
    try {
      await this.deps.client.delete(
        LEDGER_RESOURCE,
        { name: ledger.metadata.name },
        {
          preconditions: { uid: ledger.metadata.uid, resourceVersion: ledger.metadata.resourceVersion },
          signal: context.signal,
        },
      );
    } catch (error) {
      // Gone already, or written since (a replica of the old layout): the next event of the ledger decides again.
      if (isNotFound(error) || isConflict(error)) return {};
      throw error;
    }
    context.logger.info(
      { entries: ledger.spec.entries?.length ?? 0 },
      'deleted a ledger of another block size: each of its entries is held again in the current ledgers',
    );
    return {};
  }
}
