import type { AddressLedgerEntry } from '@tally-ipam/api-types';
import {
  type HandlerRegistration,
  type Indexers,
  type ResourceEventHandler,
  type SharedInformer,
  Store,
} from '@tally-ipam/controller-kit/cache';
import { sameEntry } from './ledger-entries.js';
import { ledgerNameOfEntryKey } from './ledger-name.js';
import type { Holding, StoredLedger } from './resource.js';

/**
 * The entry of a ledger seen as the holding it replaces: named by the entry key, the claim and pool of the entry, the
 * ledger's resourceVersion at the write that last changed the entry, `heldSince` as creation time and, as uid, the
 * pair (claim uid, heldSince) that tells two holdings of one key apart.
 */
export function holdingOfEntry(entry: AddressLedgerEntry, ledger: StoredLedger): Holding {
  return {
    metadata: {
      name: entry.key,
      uid: `${entry.claimRef.uid}@${entry.heldSince}`,
      resourceVersion: ledger.metadata.resourceVersion,
      creationTimestamp: entry.heldSince,
    },
    spec: {
      address: entry.address,
      ...(entry.prefix === undefined ? {} : { prefix: entry.prefix }),
      poolRef: entry.poolRef,
      claimRef: entry.claimRef,
      ...(entry.releasedAt === undefined ? {} : { releasedAt: entry.releasedAt }),
    },
  };
}

/**
 * The entries of every ledger as a store of holdings with add/update/delete events, diffed from the ledger informer's
 * events: the pool states, the claim steps and the garbage collector keep reading "the holding of an address" while the
 * API server holds one object per block. An entry that did not change in a ledger update sends no event.
 */
export class LedgerEntryView {
  readonly store: Store<Holding>;
  private readonly handlers = new Set<ResourceEventHandler<Holding>>();
  /** The entries each ledger showed last, by ledger name. */
  private readonly seen = new Map<string, Map<string, AddressLedgerEntry>>();

  constructor(ledgers: Pick<SharedInformer<StoredLedger>, 'addEventHandler'>, indexers: Indexers<Holding> = {}) {
    this.store = new Store<Holding>(indexers);
    ledgers.addEventHandler({
      onAdd: (ledger, initialList) => this.ledgerChanged(ledger, initialList),
      onUpdate: (_old, ledger) => this.ledgerChanged(ledger, false),
      onDelete: (ledger, finalStateUnknown) => this.ledgerGone(ledger, finalStateUnknown),
    });
  }

  /** Registers a handler; the entries already seen are replayed to it as adds, as an informer does. */
  addEventHandler(handler: ResourceEventHandler<Holding>): HandlerRegistration {
    this.handlers.add(handler);
    for (const holding of this.store.list()) handler.onAdd?.(holding, true);
    return { remove: () => this.handlers.delete(handler) };
  }

  private ledgerChanged(ledger: StoredLedger, initialList: boolean): void {
    const name = ledger.metadata.name;
    const before = this.seen.get(name) ?? new Map<string, AddressLedgerEntry>();
    // Only the entries the current layout keeps in this ledger: a ledger of another block size (an unreleased 0.1.0
    // wrote 256-address blocks) is never written again, so its entries are neither holdings nor a guarantee.
    const after = new Map(
      (ledger.spec.entries ?? [])
        .filter((entry) => ledgerNameOfEntryKey(entry.key) === name)
        .map((entry) => [entry.key, entry]),
    );
    this.seen.set(name, after);
    for (const key of before.keys()) {
      if (after.has(key)) continue;
      const removed = this.store.remove(key);
      if (removed) for (const handler of this.handlers) handler.onDelete?.(removed, false);
    }
    for (const [key, entry] of after) {
      const previous = before.get(key);
      if (previous !== undefined && sameEntry(previous, entry)) continue;
      const holding = holdingOfEntry(entry, ledger);
      const old = this.store.upsert(holding);
      for (const handler of this.handlers) {
        if (old === undefined) handler.onAdd?.(holding, initialList);
        else handler.onUpdate?.(old, holding);
      }
    }
  }

  private ledgerGone(ledger: StoredLedger, finalStateUnknown: boolean): void {
    const entries = this.seen.get(ledger.metadata.name);
    this.seen.delete(ledger.metadata.name);
    for (const key of entries?.keys() ?? []) {
      const removed = this.store.remove(key);
      if (removed) for (const handler of this.handlers) handler.onDelete?.(removed, finalStateUnknown);
    }
  }
}
