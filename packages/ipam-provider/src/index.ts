/**
 * @tally-ipam/ipam-provider: the Cluster API IPAM provider — IPAddressClaim and pool controllers and the ledger
 * garbage collector on a
 * controller-kit Manager, with address uniqueness enforced by the API server.
 */

export {
  adoptExistingAddresses,
  type BulkAdoptionDeps,
  type BulkAdoptionResult,
} from './adoption/bulk-adoption.js';
export { AllocationEvents, type AllocationEventsOptions, DEFAULT_ALLOCATION_EVENTS } from './allocation-events.js';
export { HOLD_AHEAD_LIMIT, HOLD_AHEAD_LOW_WATER } from './claim/hold-ahead.js';
export {
  ADDRESS_FINALIZER,
  CLAIM_ADDRESS_RESERVED_REASON,
  CLAIM_FINALIZER,
  CLAIM_MAX_RETRY_DELAY_MS,
  CLAIM_NAMESPACE_CAP_REACHED_REASON,
  CLAIM_NAMESPACE_NOT_ALLOWED_REASON,
  DEFAULT_FIELD_MANAGER,
  EVENT_ADDRESS_ALLOCATED,
  EVENT_ADDRESS_RECREATED,
  EVENT_ADDRESS_RELEASED,
  EVENT_ADDRESSES_ALLOCATED,
  EVENT_ALLOCATION_FAILED,
  EVENT_DUPLICATE_ADDRESS,
  EVENT_POOL_EXHAUSTED,
  MAX_HOLD_ATTEMPTS,
  ORPHAN_ENTRY_SAFETY_AGE_MS,
  POOL_EXHAUSTED_RECHECK_MS,
  POOL_FINALIZER,
  POOL_STATE_REBUILD_INTERVAL_MS,
  POOL_STATUS_COALESCE_MS,
  REQUESTED_ADDRESS_ANNOTATION,
} from './constants.js';
export { type AcquireResult, type AddressHolds, type Holder, ledgerHolds } from './holds.js';
export { POOL_STATUS_WRITES_PER_SECOND } from './pool/status-budget.js';
export { type AllocationUnit, buildPoolAllocation, type PoolAllocation } from './pool-allocation.js';
export {
  finalizersOf,
  type InClusterPoolKind,
  isGlobalPoolKind,
  isInClusterPoolKind,
  isInClusterPrefixPoolKind,
  isPrefixKind,
  isServedPoolKind,
  type KindFinalizers,
  SERVED_POOL_KINDS,
  type ServedPoolKind,
  servedPoolKinds,
} from './pool-kinds.js';
export { describePool, type PoolRef, poolKey } from './pool-ref.js';
export { PoolState } from './pool-state.js';
export { PoolStates } from './pool-states.js';
export {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  CLUSTER_RESOURCE,
  NAMESPACE_RESOURCE,
  POOL_RESOURCES,
  StoredAddress,
  StoredClaim,
  StoredCluster,
  StoredNamespace,
  StoredPool,
} from './resources.js';
export { type IPAMProvider, type IPAMProviderOptions, setupIPAMProvider } from './setup.js';
export { KeyedSerializer, poolTenancy, type TenancyQuestion, type TenancyVerdict, tenancyVerdict } from './tenancy.js';
export type { AllocatedAddress, PoolView } from './view.js';
// The pool admission webhooks (src/webhooks, built on the IPAMProvider view). Their `PoolAllocation` has a namesake
// above, so it is re-exported under a name that says what it is.
export {
  IN_CLUSTER_ENABLED_MATCH_CONDITION,
  type InClusterAddressesView,
  type InClusterPoolWebhookOptions,
  inClusterPoolAdmissionHandler,
  inClusterPoolWebhookConfiguration,
  inClusterPoolWebhookName,
  inClusterPoolWebhookPath,
  inClusterPoolWebhooks,
  inClusterPrefixPoolAdmissionHandler,
  POOL_IN_USE_MESSAGE,
  POOL_MOVED_AWAY_REASON,
  POOL_WEBHOOK_CONFIGURATION_NAME,
  type PoolAdmissionOptions,
  type PoolAllocation as PoolAllocationRecord,
  type PoolAllocationsView,
  type PoolIdentity,
  type PoolKindInfo,
  type PoolWebhookConfigurationOptions,
  poolAdmissionHandler,
  poolWebhookConfiguration,
  poolWebhookName,
  providerInClusterAddressesView,
  registerInClusterPoolWebhooks,
  registerPoolWebhooks,
  type TallyPool,
  withInClusterPoolWebhooks,
} from './webhooks/index.js';
