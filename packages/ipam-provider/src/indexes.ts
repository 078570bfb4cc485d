import { formatIP, parseIP } from '@tally-ipam/allocator';
import { clusterNameOf } from '@tally-ipam/controller-kit';
import type { Indexers } from '@tally-ipam/controller-kit/cache';
import type { Holding } from '@tally-ipam/ledger';
import { poolKey, poolRefOfAddress, poolRefOfClaim, poolRefOfHolding } from './pool-ref.js';
import type { StoredAddress, StoredClaim } from './resources.js';

/**
 * Cache indexes. Each answers one question without scanning the store; the values are built by the same helpers the
 * reconcilers use, so a lookup and a write can never disagree on a key.
 */

/** Claims, IPAddresses and holdings by the pool they refer to (`poolKey`). */
export const POOL_INDEX = 'tally.poolKey';
/** IPAddresses by pool and canonical address: does any IPAddress of this pool carry this address? */
export const POOL_ADDRESS_INDEX = 'tally.poolAddress';
/** Holdings by the uid of the claim holding them: a crash between holding and IPAddress is resumed from here. */
export const HOLDING_CLAIM_UID_INDEX = 'tally.claimUID';
/** Claims by `namespace/clusterName`, for the Cluster watch. */
export const CLAIM_CLUSTER_INDEX = 'tally.cluster';

/** Canonical text of an address, or the text itself when it does not parse (so odd values still index). */
export function canonicalAddress(text: string): string {
  try {
    return formatIP(parseIP(text));
  } catch {
    return text;
  }
}

export function poolAddressKey(pool: string, address: string): string {
  return `${pool}|${canonicalAddress(address)}`;
}

export function claimPoolIndex(claim: StoredClaim): readonly string[] {
  const ref = poolRefOfClaim(claim);
  return ref ? [poolKey(ref)] : [];
}

export function claimClusterIndex(claim: StoredClaim): readonly string[] {
  const cluster = clusterNameOf(claim);
  return cluster && claim.metadata.namespace ? [`${claim.metadata.namespace}/${cluster}`] : [];
}

export function addressPoolIndex(address: StoredAddress): readonly string[] {
  const ref = poolRefOfAddress(address);
  return ref ? [poolKey(ref)] : [];
}

export function addressPoolAddressIndex(address: StoredAddress): readonly string[] {
  const ref = poolRefOfAddress(address);
  return ref ? [poolAddressKey(poolKey(ref), address.spec.address)] : [];
}

export function holdingPoolIndex(holding: Holding): readonly string[] {
  const ref = poolRefOfHolding(holding);
  return ref ? [poolKey(ref)] : [];
}

export function holdingClaimUIDIndex(holding: Holding): readonly string[] {
  return [holding.spec.claimRef.uid];
}

/**
 * The indexes the provider's informers (and the ledger entry view, for holdings) carry: one definition for the provider,
 * its tests and its cache benchmark, so none of them measures or exercises a cache the provider does not build.
 */
export const CLAIM_INDEXERS: Indexers<StoredClaim> = {
  [POOL_INDEX]: claimPoolIndex,
  [CLAIM_CLUSTER_INDEX]: claimClusterIndex,
};
export const ADDRESS_INDEXERS: Indexers<StoredAddress> = {
  [POOL_INDEX]: addressPoolIndex,
  [POOL_ADDRESS_INDEX]: addressPoolAddressIndex,
};
export const HOLDING_INDEXERS: Indexers<Holding> = {
  [POOL_INDEX]: holdingPoolIndex,
  [HOLDING_CLAIM_UID_INDEX]: holdingClaimUIDIndex,
};
