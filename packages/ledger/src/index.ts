/**
 * @tally-ipam/ledger: the TallyAddressLedgers, one cluster-scoped object per address block whose entries are the
 * addresses held; the API server's compare-and-swap on them is what makes an allocation unique. Shared by the IPAM
 * front ends (Cluster API IPAddressClaims, Metal3 IPClaims) through these names only.
 */

export {
  AddressLedgers,
  type AddressLedgersOptions,
  type HeldUnit,
  RELEASE_COALESCE_MS,
  type SubmitOptions,
} from './address-ledgers.js';
export { addressEntryKey, type EntryKeyValue, parseEntryKey, prefixEntryKey } from './entry-key.js';
export { holdingOfEntry, LedgerEntryView } from './entry-view.js';
export {
  type AppliedOperations,
  applyOperations,
  decideHold,
  type EntryHolder,
  type LedgerOperation,
  type OperationResult,
  sameEntry,
  type WantedEntry,
} from './ledger-entries.js';
export { ADDRESS_BLOCK_BITS, type LedgerUnit, ledgerNameOf, ledgerNameOfEntryKey } from './ledger-name.js';
export { Holding, LEDGER_RESOURCE, StoredLedger } from './resource.js';
export { type StartUpInformer, type StartUpStepOptions, startUpStep } from './start-up-step.js';
export { unreadableLedgerMessage } from './unreadable-ledger.js';
