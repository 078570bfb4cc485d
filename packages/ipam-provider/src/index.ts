/**
 * @tally-ipam/ipam-provider: the Cluster API IPAM provider — IPAddressClaim and pool controllers and the ledger
 * garbage collector on a
 * controller-kit Manager, with address uniqueness enforced by the API server.
 */

export { AllocationEvents, type AllocationEventsOptions, DEFAULT_ALLOCATION_EVENTS } from './allocation-events.js';
export { HOLD_AHEAD_LIMIT, HOLD_AHEAD_LOW_WATER } from './claim/hold-ahead.js';
export { type ClaimOutcome, notReady, writeClaimStatus } from './claim/status.js';
export {
  ADDRESS_FINALIZER,
  CLAIM_ADDRESS_RESERVED_REASON,
  CLAIM_FINALIZER,
  CLAIM_MAX_RETRY_DELAY_MS,
  CLAIM_RETRY_BURST,
  CLAIM_RETRY_QPS,
  DEFAULT_FIELD_MANAGER,
  EVENT_ADDRESS_ALLOCATED,
  EVENT_ADDRESS_RECREATED,
  EVENT_ADDRESS_RELEASED,
  EVENT_ADDRESSES_ALLOCATED,
  EVENT_ALLOCATION_FAILED,
  EVENT_DUPLICATE_ADDRESS,
  EVENT_POOL_EXHAUSTED,
  MAX_CONDITION_MESSAGE_LENGTH,
  MAX_HOLD_ATTEMPTS,
  ORPHAN_ENTRY_SAFETY_AGE_MS,
  POOL_EXHAUSTED_RECHECK_MS,
  POOL_FINALIZER,
  POOL_STATE_REBUILD_INTERVAL_MS,
  POOL_STATUS_COALESCE_MS,
  REQUESTED_ADDRESS_ANNOTATION,
} from './constants.js';
export { type AcquireResult, type AddressHolds, type Holder, heldUnitOfKey, holderOf, ledgerHolds } from './holds.js';
export {
  AddressLedgers,
  type AddressLedgersOptions,
  type HeldUnit,
  RELEASE_COALESCE_MS,
  type SubmitOptions,
} from './ledger/address-ledgers.js';
export { addressEntryKey, type EntryKeyValue, parseEntryKey, prefixEntryKey } from './ledger/entry-key.js';
export { holdingOfEntry, LedgerEntryView } from './ledger/entry-view.js';
export {
  applyOperations,
  decideHold,
  type EntryHolder,
  type LedgerOperation,
  type OperationResult,
  type WantedEntry,
} from './ledger/ledger-entries.js';
export { ADDRESS_BLOCK_BITS, type LedgerUnit, ledgerNameOf } from './ledger/ledger-name.js';
export { POOL_STATUS_WRITES_PER_SECOND, PoolStatusBudget } from './pool/status-budget.js';
export { type AllocationUnit, buildPoolAllocation, type PoolAllocation } from './pool-allocation.js';
export { describePool, type PoolRef, poolKey } from './pool-ref.js';
export { PoolState } from './pool-state.js';
export { PoolStates } from './pool-states.js';
export {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  CLUSTER_RESOURCE,
  Holding,
  LEDGER_RESOURCE,
  POOL_RESOURCES,
  StoredAddress,
  StoredClaim,
  StoredCluster,
  StoredLedger,
  StoredPool,
} from './resources.js';
export { type IPAMProvider, type IPAMProviderOptions, setupIPAMProvider } from './setup.js';
export type { AllocatedAddress, PoolView } from './view.js';
// The pool admission webhooks (src/webhooks, built on the IPAMProvider view). `describePool` and `PoolAllocation`
// there have namesakes above, so they are re-exported under names that say what they take.
export {
  cachePoolAllocationsView,
  describeAllocations,
  describePool as describePoolObject,
  fullLengthWarnings,
  MAX_ADMISSION_MESSAGE_LENGTH,
  MAX_ADMISSION_WARNING_LENGTH,
  MAX_ADMISSION_WARNINGS,
  overlapWarnings,
  POOL_IN_USE_MESSAGE,
  POOL_KINDS,
  POOL_MOVED_AWAY_REASON,
  POOL_WEBHOOK_CONFIGURATION_NAME,
  type PoolAddressSpace,
  type PoolAdmissionOptions,
  type PoolAllocation as PoolAllocationRecord,
  type PoolAllocationsView,
  type PoolIdentity,
  type PoolKindInfo,
  type PoolWebhookConfigurationOptions,
  poolAddressSpace,
  poolAdmissionHandler,
  poolIdentity,
  poolWebhookConfiguration,
  poolWebhookName,
  poolWebhookPath,
  providerPoolAllocationsView,
  registerPoolWebhooks,
  SKIP_VALIDATE_DELETE_ANNOTATION,
  type TallyPool,
  validatePoolCreate,
  validatePoolDelete,
  validatePoolUpdate,
} from './webhooks/index.js';
