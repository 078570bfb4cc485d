/**
 * @tally-ipam/metal3-ipam: serving Metal3's IPAM API (`ipam.metal3.io/v1alpha1`) from Tally's allocator and address
 * ledgers — the pure half (IPPool spec to ranges, pre-allocations, the address for a claim, the IPAddress name) and
 * the IPClaim, IPPool and ledger-entry controllers (`setupMetal3IPAM`).
 */
export { Metal3Adoption, type Metal3AdoptionDeps, type Metal3AdoptionResult } from './adoption.js';
export { type AllocateOptions, allocateForClaim, type HeldAddress, type Metal3Allocation } from './allocate.js';
export { Metal3AllocationError, type Metal3AllocationFailure, Metal3PoolSpecError } from './errors.js';
export { isMetal3ClaimReference, ledgerHeldInPlan, ledgerSlot, metal3Entry } from './holdings.js';
export {
  ENTRY_CLAIM_UID_INDEX,
  EXHAUSTED_RECHECK_MS,
  type IPClaimReconcilerDeps,
  MAX_HOLD_ATTEMPTS,
} from './ipclaim/deps.js';
export { IPClaimReconciler } from './ipclaim/reconciler.js';
export { IPPoolReconciler, type IPPoolReconcilerDeps, indexesOf, type PoolIndexes } from './ippool/reconciler.js';
export { ipAddressName } from './names.js';
export {
  ORPHAN_ENTRY_SAFETY_AGE_MS,
  OrphanEntryReconciler,
  type OrphanEntryReconcilerDeps,
} from './orphans/reconciler.js';
export { planOfPool, poolClusterName } from './pool-spec.js';
export { type Metal3PoolSpecInput, type Metal3RangeInput, rangeIndexHolding } from './range-bounds.js';
export {
  buildMetal3PoolPlan,
  type Metal3PoolPlan,
  type Metal3PreAllocation,
  type Metal3Range,
  type Metal3Translation,
  translateIPPoolSpec,
} from './ranges.js';
export {
  METAL3_ADDRESS_RESOURCE,
  METAL3_CLAIM_RESOURCE,
  METAL3_POOL_RESOURCE,
  StoredMetal3Address,
  StoredMetal3Claim,
  StoredMetal3Pool,
} from './resources.js';
export { type Metal3IPAM, type Metal3IPAMOptions, setupMetal3IPAM } from './setup.js';
export {
  type AddressInUse,
  IPPOOL_WEBHOOK_NAME,
  IPPOOL_WEBHOOK_PATH,
  type IPPoolUpdateProblem,
  type IPPoolUpdateSpec,
  ipPoolAdmissionHandler,
  type Metal3AddressesView,
  validateIPPoolUpdate,
} from './webhooks/ippool-admission.js';
export {
  cacheMetal3AddressesView,
  METAL3_ENABLED_MATCH_CONDITION,
  type Metal3WebhookOptions,
  metal3IPPoolWebhook,
  metal3WebhookConfiguration,
  registerMetal3Webhooks,
  withMetal3IPPoolWebhook,
} from './webhooks/register.js';
