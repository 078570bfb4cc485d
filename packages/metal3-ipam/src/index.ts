/**
 * @tally-ipam/metal3-ipam: the pure half of serving Metal3's IPAM API (`ipam.metal3.io/v1alpha1`) from Tally's
 * allocator — IPPool spec to ranges, pre-allocations, the address for a claim, the IPAddress name.
 */
export { type AllocateOptions, allocateForClaim, type HeldAddress, type Metal3Allocation } from './allocate.js';
export { Metal3AllocationError, type Metal3AllocationFailure, Metal3PoolSpecError } from './errors.js';
export { ipAddressName } from './names.js';
export {
  buildMetal3PoolPlan,
  type Metal3PoolPlan,
  type Metal3PoolSpecInput,
  type Metal3PreAllocation,
  type Metal3Range,
  type Metal3RangeInput,
  type Metal3Translation,
  translateIPPoolSpec,
} from './ranges.js';
