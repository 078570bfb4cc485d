import { type ParseResult, parseObject } from '../../parse.js';
import { METAL3_IP_ADDRESS_KIND, METAL3_IP_CLAIM_KIND, METAL3_IP_POOL_KIND } from './constants.js';
import { Metal3IPAddress } from './ip-address.js';
import { Metal3IPClaim } from './ip-claim.js';
import { Metal3IPPool } from './ip-pool.js';

/** Parses a Metal3 IPPool read from the API server; errors name the field path and the value. */
export function parseMetal3IPPool(input: unknown): ParseResult<Metal3IPPool> {
  return parseObject(Metal3IPPool, METAL3_IP_POOL_KIND, input);
}
/** Parses a Metal3 IPClaim read from the API server; errors name the field path and the value. */
export function parseMetal3IPClaim(input: unknown): ParseResult<Metal3IPClaim> {
  return parseObject(Metal3IPClaim, METAL3_IP_CLAIM_KIND, input);
}
/** Parses a Metal3 IPAddress read from the API server; errors name the field path and the value. */
export function parseMetal3IPAddress(input: unknown): ParseResult<Metal3IPAddress> {
  return parseObject(Metal3IPAddress, METAL3_IP_ADDRESS_KIND, input);
}
