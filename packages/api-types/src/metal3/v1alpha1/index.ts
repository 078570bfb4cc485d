export {
  METAL3_CRD_PROVIDER_LABEL_VALUE,
  METAL3_IP_ADDRESS_FINALIZER,
  METAL3_IP_ADDRESS_KIND,
  METAL3_IP_CLAIM_FINALIZER,
  METAL3_IP_CLAIM_KIND,
  METAL3_IP_POOL_FINALIZER,
  METAL3_IP_POOL_KIND,
  METAL3_IPAM_GROUP,
  METAL3_IPAM_V1ALPHA1_API_VERSION,
  METAL3_IPAM_V1ALPHA1_VERSION,
  METAL3_MAX_CLAIM_NAME_LENGTH,
  METAL3_MAX_DNS_SERVERS,
  METAL3_MAX_ERROR_MESSAGE_LENGTH,
  METAL3_MAX_NAME_PREFIX_LENGTH,
  METAL3_MAX_POOLS,
  METAL3_MAX_PRE_ALLOCATIONS,
} from './constants.js';
export {
  METAL3_CRD_LABELS,
  metal3CRDDirectory,
  metal3CRDsYaml,
  metal3CustomResourceDefinitions,
  metal3GeneratedCRDFiles,
} from './crds.js';
export { Metal3ObjectReference, Metal3Prefix, Metal3Subnet } from './fields.js';
export { Metal3IPAddress, Metal3IPAddressSpec } from './ip-address.js';
export { Metal3IPClaim, Metal3IPClaimSpec, Metal3IPClaimStatus } from './ip-claim.js';
export {
  Metal3DNSServers,
  Metal3IPPool,
  Metal3IPPoolSpec,
  Metal3IPPoolStatus,
  Metal3NamePrefix,
  Metal3PoolRange,
} from './ip-pool.js';
export { parseMetal3IPAddress, parseMetal3IPClaim, parseMetal3IPPool } from './parse.js';
