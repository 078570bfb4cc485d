import {
  GLOBAL_TALLY_IP_POOL_KIND,
  GLOBAL_TALLY_PREFIX_POOL_KIND,
  LedgerClaimReference,
  LedgerPoolReference,
  StoredObjectMeta as StoredMeta,
  TALLY_ADDRESS_LEDGER_KIND,
  TALLY_IP_POOL_KIND,
  TALLY_PREFIX_POOL_KIND,
  TALLY_V1ALPHA1_API_VERSION,
  TallyAddressLedger,
  type TallyPoolKind,
} from '@tally-ipam/api-types';
import { type SharedInformer, type TypedResourceKind, typedResource } from '@tally-ipam/controller-kit';
import * as z from 'zod';

// The Cluster API kinds' descriptors live in @tally-ipam/api-types; re-exported under the names this package publishes.
export {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  CLUSTER_RESOURCE,
  StoredAddress,
  StoredClaim,
  StoredCluster,
} from '@tally-ipam/api-types';

/**
 * The resources the provider reads and writes, each with the zod schema its objects are parsed with where they enter
 * (cache and client). Objects read from the API server always have a name, so the schemas require one.
 */

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

/** What the provider reads holdings from: the ledger entries seen one by one (`LedgerEntryView`). */
export type HoldingSource = Pick<SharedInformer<Holding>, 'store' | 'addEventHandler'>;

export const StoredLedger = TallyAddressLedger.extend({ metadata: StoredMeta });
export type StoredLedger = z.infer<typeof StoredLedger>;

/**
 * Pools are cached with their spec unparsed: a pool whose spec fails validation must still be seen (and reported as
 * `InvalidSpec` / `PoolNotReady` with the reason), not silently dropped by the cache. The reconcilers parse the spec
 * with api-types' parsers.
 */
export const StoredPool = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: StoredMeta,
  spec: z.unknown(),
  status: z.unknown().optional(),
});
export type StoredPool = z.infer<typeof StoredPool>;

export const LEDGER_RESOURCE: TypedResourceKind<StoredLedger> = typedResource(
  {
    apiVersion: TALLY_V1ALPHA1_API_VERSION,
    kind: TALLY_ADDRESS_LEDGER_KIND,
    plural: 'tallyaddressledgers',
    namespaced: false,
  },
  StoredLedger,
);

function poolResource(kind: TallyPoolKind, plural: string, namespaced: boolean): TypedResourceKind<StoredPool> {
  return typedResource({ apiVersion: TALLY_V1ALPHA1_API_VERSION, kind, plural, namespaced }, StoredPool);
}

/** The four pool kinds, by kind. */
export const POOL_RESOURCES: Readonly<Record<TallyPoolKind, TypedResourceKind<StoredPool>>> = {
  [TALLY_IP_POOL_KIND]: poolResource(TALLY_IP_POOL_KIND, 'tallyippools', true),
  [GLOBAL_TALLY_IP_POOL_KIND]: poolResource(GLOBAL_TALLY_IP_POOL_KIND, 'globaltallyippools', false),
  [TALLY_PREFIX_POOL_KIND]: poolResource(TALLY_PREFIX_POOL_KIND, 'tallyprefixpools', true),
  [GLOBAL_TALLY_PREFIX_POOL_KIND]: poolResource(GLOBAL_TALLY_PREFIX_POOL_KIND, 'globaltallyprefixpools', false),
};
