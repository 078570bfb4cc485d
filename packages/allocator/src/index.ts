export {
  AddressAllocator,
  type AddressInput,
  type AllocationRecord,
  type PoolCounts,
  type ReleasedAddress,
} from './address-allocator.js';
export {
  type AddressPool,
  type AddressPoolSpec,
  type AllocatabilityVerdict,
  buildAddressPool,
  checkAllocatable,
  formatSubnet,
  type ReservedAddress,
  type ReservedRole,
  tryBuildAddressPool,
} from './address-pool.js';
export {
  networkBounds,
  networkMask,
  type ParsedAddressEntry,
  type ParsedCIDR,
  type ParsedRange,
  parseAddressEntry,
  parseCIDR,
  parseIPRange,
} from './entry.js';
export {
  AllocationError,
  type AllocationErrorDetails,
  type AllocationFailureReason,
  PoolSpecError,
  type PoolSpecIssue,
} from './errors.js';
export { type Interval, IntervalSet } from './interval-set.js';
export { IntervalTree } from './interval-tree.js';
export {
  AddressParseError,
  addressBits,
  formatIP,
  type IP,
  type IPFamily,
  ipFromValue,
  isIPv4Mapped,
  isValidPrefixLength,
  maxAddress,
  parseIP,
} from './ip.js';
export { PrefixAllocator, type PrefixCounts, type PrefixInput, toPrefix } from './prefix-allocator.js';
export {
  blockToPrefix,
  buildPrefixPool,
  checkPrefixAllocatable,
  formatPrefix,
  type Prefix,
  type PrefixPool,
  type PrefixPoolSpec,
  type PrefixVerdict,
  tryBuildPrefixPool,
} from './prefix-pool.js';
export { MAX_STATUS_COUNT, toStatusCount } from './status-count.js';
export {
  ALLOCATION_STRATEGIES,
  type AllocationStrategy,
  type AllocatorOptions,
} from './unit-engine.js';
