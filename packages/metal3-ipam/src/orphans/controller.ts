import type { ObjectKey } from '@tally-ipam/controller-kit/client';
import { Controller } from '@tally-ipam/controller-kit/controller';
import { type Holding, LEDGER_RESOURCE } from '@tally-ipam/ledger';
import { isMetal3ClaimReference, ledgerSlot } from '../holdings.js';
import { ENTRY_CLAIM_UID_INDEX } from '../ipclaim/deps.js';
import { METAL3_ADDRESS_RESOURCE, METAL3_CLAIM_RESOURCE } from '../resources.js';
import { deletedOnly, type Metal3ControllerContext, syncOnly } from '../shared.js';
import { OrphanEntryReconciler } from './reconciler.js';

/**
 * The collector of Metal3 ledger entries. Its requests are entry keys: every Metal3 entry the ledger entry view adds
 * or changes, the entries of a deleted IPClaim and the entry of a deleted IPAddress's address. Ledger events
 * themselves enqueue nothing (the view turns them into entry events).
 */
export function newOrphanEntryController(shared: Metal3ControllerContext): Controller {
  const { informers, ledgerEntries } = shared;
  const scope = { namespace: shared.namespace };
  const controller = new Controller({
    name: 'metal3-ledger-entries',
    for: LEDGER_RESOURCE,
    forOptions: { predicates: [syncOnly()] },
    reconciler: new OrphanEntryReconciler({
      client: shared.client,
      ledgers: shared.ledgers,
      entries: ledgerEntries.store,
      claims: informers.claims,
      addresses: informers.addresses,
      now: shared.now,
      namespace: shared.namespace,
      safetyAgeMs: shared.orphanSafetyAgeMs,
    }),
    cache: shared.cache,
    registry: shared.registry,
    logger: shared.logger,
    maxConcurrentReconciles: 2,
  })
    .watches(
      METAL3_CLAIM_RESOURCE,
      (claim) =>
        ledgerEntries.store
          .byIndex(ENTRY_CLAIM_UID_INDEX, claim.metadata.uid ?? '')
          .map((entry): ObjectKey => ({ name: entry.metadata.name })),
      { ...scope, predicates: [deletedOnly()] },
    )
    .watches(
      METAL3_ADDRESS_RESOURCE,
      (address) => {
        if (!address.spec.address) return [];
        try {
          return [{ name: ledgerSlot(address.spec.address).key }];
        } catch {
          return [];
        }
      },
      { ...scope, predicates: [deletedOnly()] },
    );
  const enqueue = (entry: Holding): void => {
    if (isMetal3ClaimReference(entry.spec.claimRef)) controller.enqueue({ name: entry.metadata.name });
  };
  ledgerEntries.addEventHandler({ onAdd: enqueue, onUpdate: (_old, entry) => enqueue(entry) });
  return controller;
}
