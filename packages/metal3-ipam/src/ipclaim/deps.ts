import type { StoredCluster } from '@tally-ipam/api-types';
import type { AssumedObjects, SharedInformer, Store } from '@tally-ipam/controller-kit/cache';
import type { Client } from '@tally-ipam/controller-kit/client';
import type { AddressLedgers, Holding } from '@tally-ipam/ledger';
import type { StoredMetal3Address, StoredMetal3Claim, StoredMetal3Pool } from '../resources.js';

/** Addresses a reconcile tries to hold before it gives the claim back to the queue (every one was taken elsewhere). */
export const MAX_HOLD_ATTEMPTS = 16;
/** When an exhausted pool is looked at again (an address freed in another pool's ledger entry sends no event here). */
export const EXHAUSTED_RECHECK_MS = 30_000;
/** Index of the ledger entry view: Metal3 entries by their claim's uid. */
export const ENTRY_CLAIM_UID_INDEX = 'metal3:entryClaimUID';

/**
 * What an IPClaim's reconcile reads and writes through: the reconciler (reconciler.ts) takes it and hands it whole to
 * each of its steps (adopt, acquire, materialise, release), which import it from here rather than from the reconciler
 * that imports them.
 */
export interface IPClaimReconcilerDeps {
  readonly client: Client;
  readonly claims: Pick<SharedInformer<StoredMetal3Claim>, 'store'>;
  readonly pools: Pick<SharedInformer<StoredMetal3Pool>, 'store'>;
  readonly addresses: Pick<SharedInformer<StoredMetal3Address>, 'store'>;
  readonly clusters: Pick<SharedInformer<StoredCluster>, 'store'>;
  readonly ledgers: AddressLedgers;
  /** The ledger entries as holdings (`LedgerEntryView.store`), with the `ENTRY_CLAIM_UID_INDEX` index. */
  readonly entries: Store<Holding>;
  /**
   * The read-your-own-writes overlay over `entries` (`AssumedObjects` of the ledger entry view): the entries this
   * process's ledger writes returned, until the view shows them or their removal. The process's one overlay, shared
   * with the IPAM provider when both front ends run.
   */
  readonly assumedEntries: AssumedObjects<Holding>;
  /**
   * Resolves once the ledgers hold every allocation of the cluster (a gate of the embedding process, then the adoption);
   * no address is chosen before. Absent: the ledgers are complete from the start.
   */
  readonly ledgersComplete?: (() => Promise<unknown>) | undefined;
}
