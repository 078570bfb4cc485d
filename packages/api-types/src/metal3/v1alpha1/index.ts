export * from './constants.js';
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
