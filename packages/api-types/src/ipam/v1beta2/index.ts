export * from './constants.js';
export {
  IPAddress,
  IPAddressClaim,
  IPAddressClaimSpec,
  IPAddressClaimStatus,
  IPAddressSpec,
  IPPoolReference,
  LocalObjectName,
} from './types.js';
