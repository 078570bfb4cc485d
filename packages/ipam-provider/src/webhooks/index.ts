// Admission webhooks of the pool kinds: the cross-object rules CEL in the CRDs cannot check.

export {
  type InClusterAddressesView,
  inClusterPoolWebhookName,
  inClusterPoolWebhookPath,
  MAX_IN_CLUSTER_ADMISSION_MESSAGE_LENGTH,
  providerInClusterAddressesView,
} from './in-cluster-admission.js';
export {
  IN_CLUSTER_ENABLED_MATCH_CONDITION,
  type InClusterPoolWebhookOptions,
  inClusterPoolAdmissionHandler,
  inClusterPoolWebhookConfiguration,
  inClusterPoolWebhooks,
  registerInClusterPoolWebhooks,
  withInClusterPoolWebhooks,
} from './in-cluster-pools.js';
export { inClusterPrefixPoolAdmissionHandler } from './in-cluster-prefix-pools.js';
export { describeAllocations, type PoolAddressSpace, poolAddressSpace } from './pool-address-space.js';
export {
  MAX_ADMISSION_MESSAGE_LENGTH,
  MAX_ADMISSION_WARNING_LENGTH,
  MAX_ADMISSION_WARNINGS,
  POOL_MOVED_AWAY_REASON,
  type PoolAdmissionOptions,
  poolAdmissionHandler,
} from './pool-admission.js';
export {
  cachePoolAllocationsView,
  type PoolAllocation,
  type PoolAllocationsView,
  type PoolIdentity,
  providerPoolAllocationsView,
} from './pool-allocations-view.js';
export { describePool, POOL_KINDS, type PoolKindInfo, type TallyPool } from './pool-kinds.js';
export {
  fullLengthWarnings,
  movedAwayWarning,
  overlapWarnings,
  POOL_IN_USE_MESSAGE,
  poolIdentity,
  SKIP_VALIDATE_DELETE_ANNOTATION,
  validatePoolCreate,
  validatePoolDelete,
  validatePoolUpdate,
} from './pool-rules.js';
export {
  POOL_WEBHOOK_CONFIGURATION_NAME,
  type PoolWebhookConfigurationOptions,
  poolWebhookConfiguration,
  poolWebhookName,
  poolWebhookPath,
  registerPoolWebhooks,
} from './register.js';
