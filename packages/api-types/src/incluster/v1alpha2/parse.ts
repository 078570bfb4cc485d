import { type ParseResult, parseObject } from '../../parse.js';
import {
  GLOBAL_IN_CLUSTER_IP_POOL_KIND,
  GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND,
  IN_CLUSTER_IP_POOL_KIND,
  IN_CLUSTER_PREFIX_POOL_KIND,
} from './constants.js';
import { GlobalInClusterIPPool, InClusterIPPool } from './ip-pool.js';
import { GlobalInClusterPrefixPool, InClusterPrefixPool } from './prefix-pool.js';

/** Parses an InClusterIPPool read from the API server; errors name the field path and the value. */
export function parseInClusterIPPool(input: unknown): ParseResult<InClusterIPPool> {
  return parseObject(InClusterIPPool, IN_CLUSTER_IP_POOL_KIND, input);
}
/** Parses a GlobalInClusterIPPool read from the API server; errors name the field path and the value. */
export function parseGlobalInClusterIPPool(input: unknown): ParseResult<GlobalInClusterIPPool> {
  return parseObject(GlobalInClusterIPPool, GLOBAL_IN_CLUSTER_IP_POOL_KIND, input);
}
/** Parses an InClusterPrefixPool read from the API server; errors name the field path and the value. */
export function parseInClusterPrefixPool(input: unknown): ParseResult<InClusterPrefixPool> {
  return parseObject(InClusterPrefixPool, IN_CLUSTER_PREFIX_POOL_KIND, input);
}
/** Parses a GlobalInClusterPrefixPool read from the API server; errors name the field path and the value. */
export function parseGlobalInClusterPrefixPool(input: unknown): ParseResult<GlobalInClusterPrefixPool> {
  return parseObject(GlobalInClusterPrefixPool, GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND, input);
}
