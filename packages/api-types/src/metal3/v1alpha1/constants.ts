/** Metal3's IPAM group, served by Tally when the Metal3 API is enabled (github.com/metal3-io/ip-address-manager). */
export const METAL3_IPAM_GROUP = 'ipam.metal3.io';
export const METAL3_IPAM_V1ALPHA1_VERSION = 'v1alpha1';
export const METAL3_IPAM_V1ALPHA1_API_VERSION = `${METAL3_IPAM_GROUP}/${METAL3_IPAM_V1ALPHA1_VERSION}`;

export const METAL3_IP_POOL_KIND = 'IPPool';
export const METAL3_IP_CLAIM_KIND = 'IPClaim';
export const METAL3_IP_ADDRESS_KIND = 'IPAddress';

/**
 * The finalizers Metal3's controllers put on each kind (api/v1alpha1 `IPPoolFinalizer`, `IPClaimFinalizer`,
 * `IPAddressFinalizer`). Tally uses the same strings so that objects Metal3 finalized are released by Tally after a
 * switch, and the other way round.
 */
export const METAL3_IP_POOL_FINALIZER = 'ippool.ipam.metal3.io';
export const METAL3_IP_CLAIM_FINALIZER = 'ipclaim.ipam.metal3.io';
export const METAL3_IP_ADDRESS_FINALIZER = 'ipaddress.ipam.metal3.io';

/**
 * The provider label on the Metal3 CRDs Tally ships: Metal3's own IPAM provider (`clusterctl init --ipam metal3`
 * labels its CRDs so). They are Metal3's API, not Tally's: `clusterctl delete --ipam tally --include-crd` must never
 * take them (and every IPPool and IPClaim with them), and applying them over Metal3's own CRDs changes no owner.
 */
export const METAL3_CRD_PROVIDER_LABEL_VALUE = 'ipam-metal3';

/**
 * Bounds Metal3's types do not have. They keep every CEL rule inside the API server's cost budget and every object a
 * controller reads bounded; each is far above what a real pool uses.
 */
export const METAL3_MAX_POOLS = 128;
export const METAL3_MAX_DNS_SERVERS = 16;
/**
 * As Tally's own `reservations`. The rule that no address is pre-allocated twice compares every pair: at 256 entries
 * the API server cancelled it for exceeding the per-call runtime cost limit.
 */
export const METAL3_MAX_PRE_ALLOCATIONS = 128;
/**
 * Longest `namePrefix`: an IPAddress is named `<namePrefix>-<address with '.' and ':' as '-'>`, an object name holds
 * at most 253 characters and a canonical address at most 39.
 */
export const METAL3_MAX_NAME_PREFIX_LENGTH = 253 - 1 - 39;
/** Longest key of `preAllocations` (a claim name; an object name holds at most 253 characters). */
export const METAL3_MAX_CLAIM_NAME_LENGTH = 253;
/** Longest `errorMessage` a claim's status carries. */
export const METAL3_MAX_ERROR_MESSAGE_LENGTH = 10_240;
