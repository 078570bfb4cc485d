import { Controller } from '@tally-ipam/controller-kit';
import { LEDGER_RESOURCE, type StoredLedger } from '@tally-ipam/ledger';
import type { ProviderContext } from '../shared.js';
import { isRetiredLedger, RetiredLedgers } from './reconciler.js';

/**
 * The controller that deletes the ledgers of another block size once nothing depends on them (see RetiredLedgers). Its
 * requests are ledger names; only ledgers with an entry the current layout keeps elsewhere are queued, so the ledgers
 * of the current layout (every write of every allocation) cost it nothing.
 */
export function newRetiredLedgersController(
  shared: Pick<ProviderContext, 'client' | 'cache' | 'registry' | 'logger' | 'holdings'>,
): Controller {
  const retired = (ledger: StoredLedger): boolean => isRetiredLedger(ledger);
  return new Controller({
    name: 'tally-retired-ledgers',
    for: LEDGER_RESOURCE,
    forOptions: {
      predicates: [
        {
          create: (event) => retired(event.object),
          update: (event) => retired(event.objectNew),
          delete: () => false,
          generic: (event) => retired(event.object),
        },
      ],
    },
    reconciler: new RetiredLedgers({
      client: shared.client,
      ledgers: shared.cache.informerFor(LEDGER_RESOURCE),
      holdings: shared.holdings,
    }),
    cache: shared.cache,
    registry: shared.registry,
    logger: shared.logger,
    maxConcurrentReconciles: 1,
  });
}
