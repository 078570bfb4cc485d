export {
  type InClusterAddressSpace,
  inClusterAddressSpace,
  inClusterIPPoolStatusAddresses,
} from './address-space.js';
export {
  GLOBAL_IN_CLUSTER_IP_POOL_KIND,
  GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND,
  IN_CLUSTER_DEFAULT_ALLOCATION_PREFIX_LENGTH,
  IN_CLUSTER_IP_POOL_KIND,
  IN_CLUSTER_IP_POOL_KINDS,
  IN_CLUSTER_IPAM_GROUP,
  IN_CLUSTER_PREFIX_POOL_KIND,
  IN_CLUSTER_PREFIX_POOL_KINDS,
  IN_CLUSTER_PROTECT_ADDRESS_FINALIZER,
  IN_CLUSTER_PROTECT_POOL_FINALIZER,
  IN_CLUSTER_PROVIDER_NAME,
  IN_CLUSTER_RELEASE_ADDRESS_FINALIZER,
  IN_CLUSTER_SKIP_VALIDATE_DELETE_ANNOTATION,
  IN_CLUSTER_V1ALPHA2_API_VERSION,
  IN_CLUSTER_V1ALPHA2_VERSION,
  type InClusterIPPoolKind,
  type InClusterPrefixPoolKind,
} from './constants.js';
export {
  IN_CLUSTER_CRD_LABELS,
  inClusterCRDDirectory,
  inClusterCRDsYaml,
  inClusterCustomResourceDefinitions,
  inClusterGeneratedCRDFiles,
} from './crds.js';
export {
  GlobalInClusterIPPool,
  InClusterIPPool,
  InClusterIPPoolSpec,
  InClusterIPPoolStatus,
  InClusterIPPoolStatusIPAddresses,
} from './ip-pool.js';
export {
  parseGlobalInClusterIPPool,
  parseGlobalInClusterPrefixPool,
  parseInClusterIPPool,
  parseInClusterPrefixPool,
} from './parse.js';
export {
  type InClusterPrefixInUse,
  type InClusterPrefixSpace,
  inClusterPrefixPoolStatusAddresses,
  inClusterPrefixSpace,
  prefixIsAllocatable,
  unallocatablePrefixes,
  validateInClusterPrefixPoolUpdate,
} from './prefix-address-space.js';
export {
  GlobalInClusterPrefixPool,
  InClusterPrefixPool,
  InClusterPrefixPoolSpec,
  type InClusterPrefixPoolSpecInput,
  InClusterPrefixPoolStatus,
  InClusterPrefixPoolStatusAddresses,
} from './prefix-pool.js';
export {
  defaultInClusterPrefixPoolSpec,
  effectiveAllocationPrefixLength,
  inClusterPrefixPoolWarnings,
  validateInClusterPrefixPoolSpec,
  validateInClusterPrefixPoolSpecUpdate,
} from './prefix-pool-validation.js';
export {
  formatInClusterPoolIssues,
  type InClusterPoolIssue,
  type InClusterPoolRule,
  type InClusterPrefixPoolRule,
  validateInClusterIPPoolCreate,
  validateInClusterIPPoolSpec,
  validateInClusterIPPoolUpdate,
  validateInClusterPoolDelete,
} from './validation.js';
