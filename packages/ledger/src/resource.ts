import {
  LedgerClaimReference,
  LedgerPoolReference,
  StoredObjectMeta as StoredMeta,
  TALLY_ADDRESS_LEDGER_KIND,
  TALLY_V1ALPHA1_API_VERSION,
  TallyAddressLedger,
} from '@tally-ipam/api-types';
import { type TypedResourceKind, typedResource } from '@tally-ipam/controller-kit';
import * as z from 'zod';

/**
 * The ledger as it is read back from the API server, and its entries seen one by one. Objects read from the API server
 * always have a name, so the schemas require one.
 */

export const StoredLedger = TallyAddressLedger.extend({ metadata: StoredMeta });
export type StoredLedger = z.infer<typeof StoredLedger>;

/** TallyAddressLedgers (cluster-scoped), parsed with `StoredLedger` where they enter (cache and client). */
export const LEDGER_RESOURCE: TypedResourceKind<StoredLedger> = typedResource(
  {
    apiVersion: TALLY_V1ALPHA1_API_VERSION,
    kind: TALLY_ADDRESS_LEDGER_KIND,
    plural: 'tallyaddressledgers',
    namespaced: false,
  },
  StoredLedger,
);

/**
 * One ledger entry seen as an object of its own (`holdingOfEntry`): named by the entry key, with the ledger's
 * resourceVersion, `heldSince` as creation time and, as uid, the pair (claim uid, heldSince). Never written: the API
 * server holds only the ledgers.
 */
export const Holding = z.object({
  metadata: StoredMeta,
  spec: z.object({
    address: z.string(),
    prefix: z.int().optional(),
    poolRef: LedgerPoolReference,
    claimRef: LedgerClaimReference,
    releasedAt: z.string().optional(),
  }),
});
export type Holding = z.infer<typeof Holding>;
