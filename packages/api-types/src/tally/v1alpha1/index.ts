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
export * from './constants.js';
export { TALLY_CRD_LABELS, tallyCustomResourceDefinitions } from './crds.js';
export { GlobalTallyIPPool, Reservation, TallyIPPool, TallyIPPoolSpec } from './ip-pool.js';
export { isClusterScopedPoolKind, isPrefixPoolKind, isTallyPoolReference } from './pool-reference.js';
export { GlobalTallyPrefixPool, TallyPrefixPool, TallyPrefixPoolSpec } from './prefix-pool.js';
export { PoolCounts, TallyIPPoolStatus, TallyPrefixPoolStatus } from './status.js';
