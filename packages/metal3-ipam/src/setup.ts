import { CLUSTER_RESOURCE, METAL3_IPAM_GROUP } from '@tally-ipam/api-types';
import { AssumedObjects } from '@tally-ipam/controller-kit/cache';
import type { Controller } from '@tally-ipam/controller-kit/controller';
import type { Manager } from '@tally-ipam/controller-kit/manager';
import { type AddressLedgers, type Holding, LEDGER_RESOURCE, type LedgerEntryView } from '@tally-ipam/ledger';
import { Metal3Adoption, type Metal3AdoptionResult } from './adoption.js';
import { isMetal3ClaimReference } from './holdings.js';
import { newIPClaimController } from './ipclaim/controller.js';
import { ENTRY_CLAIM_UID_INDEX } from './ipclaim/deps.js';
import { newIPPoolController } from './ippool/controller.js';
import { newOrphanEntryController } from './orphans/controller.js';
import {
  addressPoolIndex,
  claimKeyOfAddress,
  METAL3_ADDRESS_RESOURCE,
  METAL3_CLAIM_INDEX,
  METAL3_CLAIM_RESOURCE,
  METAL3_POOL_INDEX,
  METAL3_POOL_RESOURCE,
  poolKeyOfClaim,
  type StoredMetal3Address,
  type StoredMetal3Claim,
} from './resources.js';
import type { Metal3ControllerContext } from './shared.js';

const DEFAULT_CONCURRENCY = 10;

export interface Metal3IPAMOptions {
  /** The process's ledger writer — the one Tally's own claims are held through, so both APIs share its batches. */
  readonly ledgers: AddressLedgers;
  /** The process's view of the ledger entries (over the TallyAddressLedger informer of the manager's cache). */
  readonly ledgerEntries: LedgerEntryView;
  /**
   * The process's read-your-own-writes overlay over `ledgerEntries` (`AssumedObjects`): pass the IPAM provider's
   * (`IPAMProvider.assumedEntries`) so that both front ends read one. Absent: one is made over `ledgerEntries`.
   */
  readonly assumedEntries?: AssumedObjects<Holding> | undefined;
  /** Watch IPClaims, IPPools, IPAddresses and Clusters of this namespace only; all when absent. */
  readonly namespace?: string | undefined;
  /** Only IPClaims and IPPools labelled `cluster.x-k8s.io/watch-filter=<value>`; empty = all. */
  readonly watchFilter?: string | undefined;
  /** IPClaims reconciled in parallel. Default 10. */
  readonly concurrency?: number | undefined;
  /** Milliseconds since the epoch: `status.lastUpdated` and the age of entries. Default `Date.now`. */
  readonly now?: (() => number) | undefined;
  /** Age after which an entry of a vanished IPClaim is dropped. Default 60 s. */
  readonly orphanSafetyAgeMs?: number | undefined;
  /**
   * Resolves once the ledgers hold every allocation the process must know of first (a gate of the embedding process);
   * no IPClaim gets a new address before. Absent: the ledgers are taken as complete.
   */
  readonly ledgersComplete?: (() => Promise<unknown>) | undefined;
}

/** What `setupMetal3IPAM` registered. */
export interface Metal3IPAM {
  readonly ipClaimController: Controller;
  readonly ipPoolController: Controller;
  readonly orphanEntryController: Controller;
  /**
   * The start-up adoption barrier: resolves once every Metal3 IPAddress of the scope is backed by a ledger entry (after
   * `ledgersComplete`). No IPClaim gets a new address before it; pass it to the IPAM provider's
   * `addAllocationBarrier` so that no IPAddressClaim does either.
   */
  addressesAdopted(): Promise<Metal3AdoptionResult>;
}

/**
 * Registers the Metal3 IPAM API (`ipam.metal3.io/v1alpha1` IPPool, IPClaim, IPAddress) on a controller-kit Manager:
 * the IPClaim controller, the IPPool controller and the collector of Metal3 ledger entries, each wired in its own
 * folder next to its reconciler. Allocations are held in Tally's address ledgers through `ledgers`, so Metal3 IPPools
 * and Tally pools draw from one address space with one guarantee. Call before `manager.start`; safe in any number of
 * processes at once (the ledger writes and the IPAddress names decide every race).
 */
export function setupMetal3IPAM(manager: Manager, options: Metal3IPAMOptions): Metal3IPAM {
  const namespace = options.namespace || undefined;
  const scope = { namespace };
  const cache = manager.cache;
  const logger = manager.logger.child({ component: 'metal3-ipam' });
  const now = options.now ?? Date.now;
  const pools = cache.informerFor(METAL3_POOL_RESOURCE, scope);
  const claims = cache.informerFor(METAL3_CLAIM_RESOURCE, {
    namespace,
    indexers: { [METAL3_POOL_INDEX]: (claim: StoredMetal3Claim) => listOf(poolKeyOfClaim(claim)) },
  });
  const addresses = cache.informerFor(METAL3_ADDRESS_RESOURCE, {
    namespace,
    indexers: {
      [METAL3_POOL_INDEX]: addressPoolIndex,
      [METAL3_CLAIM_INDEX]: (address: StoredMetal3Address) => listOf(claimKeyOfAddress(address)),
    },
  });
  const clusters = cache.informerFor(CLUSTER_RESOURCE, scope);
  options.ledgerEntries.store.addIndexers({ [ENTRY_CLAIM_UID_INDEX]: metal3EntryClaimUID });

  const assumedEntries = options.assumedEntries ?? new AssumedObjects(options.ledgerEntries);
  const adoption = new Metal3Adoption({
    addresses,
    claims,
    ledgerInformer: cache.informerFor(LEDGER_RESOURCE),
    entries: options.ledgerEntries.store,
    ledgers: options.ledgers,
    assumedEntries,
    ledgersComplete: options.ledgersComplete,
    logger,
  });

  const shared: Metal3ControllerContext = {
    client: manager.client,
    cache,
    registry: manager.registry,
    logger,
    now,
    namespace,
    watchFilter: options.watchFilter ?? '',
    concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
    ledgers: options.ledgers,
    ledgerEntries: options.ledgerEntries,
    assumedEntries,
    orphanSafetyAgeMs: options.orphanSafetyAgeMs,
    // Complete once the embedding process's gate opened and every existing Metal3 IPAddress is entered.
    ledgersComplete: () => adoption.adopted(),
    informers: { pools, claims, addresses, clusters },
  };
  const ipClaimController = newIPClaimController(shared);
  const ipPoolController = newIPPoolController(shared);
  const orphanEntryController = newOrphanEntryController(shared);
  manager.add(ipClaimController);
  manager.add(ipPoolController);
  manager.add(orphanEntryController);
  logger.info({ namespace: namespace ?? '<all>', group: METAL3_IPAM_GROUP }, 'Metal3 IPAM API served');
  return {
    ipClaimController,
    ipPoolController,
    orphanEntryController,
    addressesAdopted: () => adoption.adopted(),
  };
}

/** A named index function: the same function every time, so adding it twice is a no-op. */
function metal3EntryClaimUID(entry: Holding): string[] {
  return isMetal3ClaimReference(entry.spec.claimRef) ? [entry.spec.claimRef.uid] : [];
}

function listOf(value: string | undefined): string[] {
  return value === undefined ? [] : [value];
}
