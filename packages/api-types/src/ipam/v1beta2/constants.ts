/** API group of the Cluster API IPAM contract types (IPAddressClaim, IPAddress) and of Tally's pools. */
export const IPAM_GROUP = 'ipam.cluster.x-k8s.io';
export const IPAM_V1BETA2_VERSION = 'v1beta2';
export const IPAM_V1BETA2_API_VERSION = `${IPAM_GROUP}/${IPAM_V1BETA2_VERSION}`;

export const IPADDRESSCLAIM_KIND = 'IPAddressClaim';
export const IPADDRESS_KIND = 'IPAddress';

/** Condition type on an IPAddressClaim (`IPAddressClaimReadyCondition`, = clusterv1.ReadyCondition). */
export const IPADDRESSCLAIM_READY_CONDITION = 'Ready';

/** `IPAddressClaimReadyAllocationFailedReason`: allocation failed for a reason the message explains. */
export const IPADDRESSCLAIM_ALLOCATION_FAILED_REASON = 'AllocationFailed';
/** `IPAddressClaimReadyPoolNotReadyReason`: the referenced pool is not ready (missing, invalid, paused). */
export const IPADDRESSCLAIM_POOL_NOT_READY_REASON = 'PoolNotReady';
/** `IPAddressClaimReadyPoolExhaustedReason`: the pool has no free address. */
export const IPADDRESSCLAIM_POOL_EXHAUSTED_REASON = 'PoolExhausted';
/**
 * Reason for `Ready=True`. CAPI defines none; the schema requires a non-empty reason, and `AddressAllocated` is
 * what the Infoblox and NetBox providers already use, so consumers that switch on it keep working.
 */
export const IPADDRESSCLAIM_ADDRESS_ALLOCATED_REASON = 'AddressAllocated';
