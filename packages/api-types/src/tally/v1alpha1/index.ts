export {
  AddressLedgerEntry,
  claimReferenceGroupKind,
  isIPAddressClaimReference,
  LedgerClaimReference,
  LedgerPoolReference,
  MAX_LEDGER_ENTRIES,
  parseTallyAddressLedger,
  sameClaimName,
  TALLY_ADDRESS_LEDGER_KIND,
  TallyAddressLedger,
  TallyAddressLedgerSpec,
  tallyAddressLedgerCustomResourceDefinition,
} from './address-ledger.js';
export { type AddressInterval, type Inspection, inspectAddressEntry, inspectCIDR, inspectIP } from './addresses.js';
export {
  ALLOCATION_STRATEGIES,
  type AllocationStrategy,
  DEFAULT_ALLOCATION_PREFIX_LENGTH,
  DEFAULT_ALLOCATION_STRATEGY,
  GLOBAL_TALLY_IP_POOL_KIND,
  GLOBAL_TALLY_PREFIX_POOL_KIND,
  MAX_ENTRY_LENGTH,
  MAX_IP_LENGTH,
  MAX_POOL_ENTRIES,
  MAX_RESERVATIONS,
  POOL_DELETING_REASON,
  POOL_EXHAUSTED_REASON,
  POOL_INVALID_SPEC_REASON,
  POOL_READY_CONDITION,
  POOL_READY_REASON,
  TALLY_GROUP,
  TALLY_IP_POOL_KIND,
  TALLY_POOL_KINDS,
  TALLY_PREFIX_POOL_KIND,
  TALLY_PROVIDER_LABEL_VALUE,
  TALLY_V1ALPHA1_API_VERSION,
  TALLY_V1ALPHA1_VERSION,
  type TallyPoolKind,
} from './constants.js';
export { TALLY_CRD_LABELS, tallyCustomResourceDefinitions } from './crds.js';
export { GlobalTallyIPPool, GlobalTallyIPPoolSpec, Reservation, TallyIPPool, TallyIPPoolSpec } from './ip-pool.js';
export { ledgerStatus, TallyAddressLedgerStatus } from './ledger-summary.js';
export { isClusterScopedPoolKind, isPrefixPoolKind, isTallyPoolReference } from './pool-reference.js';
export {
  GlobalTallyPrefixPool,
  GlobalTallyPrefixPoolSpec,
  TallyPrefixPool,
  TallyPrefixPoolSpec,
} from './prefix-pool.js';
export { PoolCounts, TallyIPPoolStatus, TallyPrefixPoolStatus } from './status.js';
export {
  LABEL_SELECTOR_OPERATORS,
  LabelSelector,
  LabelSelectorRequirement,
  POOL_TENANCY_FIELDS,
  PoolTenancy,
} from './tenancy.js';
