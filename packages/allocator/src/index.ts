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
