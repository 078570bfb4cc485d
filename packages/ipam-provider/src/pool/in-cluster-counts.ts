/**
 * An in-cluster pool's counts as the reference writes them to `status.ipAddresses`: counted from the pool's IPAddresses,
 * not from the ledgers as Tally's own pools are. IP pools count the reference's IP pool way
 * (`inClusterIPPoolStatusAddresses`: a duplicated address twice, `free` below zero when some are out of range),
 * prefix pools its prefix pool way (`inClusterPrefixPoolStatusAddresses`: `free` is `max(0, total − used +
 * outOfRange)`). A spec that cannot be used gets no counts (no status write), as the reference's reconcile fails
 * before its status write; its claims say why (PoolNotReady).
 */
import {
  type InClusterIPPoolStatusIPAddresses,
  type InClusterPrefixPoolStatusAddresses,
  inClusterIPPoolStatusAddresses,
  inClusterPrefixPoolStatusAddresses,
} from '@tally-ipam/api-types';
import type { SharedInformer } from '@tally-ipam/controller-kit';
import type { Logger } from 'pino';
import { POOL_INDEX } from '../indexes.js';
import { type PoolRef, poolKey } from '../pool-ref.js';
import type { PoolStates } from '../pool-states.js';
import type { StoredAddress } from '../resources.js';

export function inClusterPoolCounts(
  ref: PoolRef,
  lookup: NonNullable<ReturnType<PoolStates['lookup']>>,
  addresses: Pick<SharedInformer<StoredAddress>, 'store'>,
  logger: Logger,
): InClusterIPPoolStatusIPAddresses | InClusterPrefixPoolStatusAddresses | undefined {
  if (lookup.status === 'invalid') {
    logger.info({ reason: lookup.message }, 'in-cluster pool spec cannot be used; no status written');
    return undefined;
  }
  const inUse = addresses.store.byIndex(POOL_INDEX, poolKey(ref));
  const prefixes = lookup.state.allocation.prefixPool;
  if (prefixes) {
    const allocations = inUse.map((address) => ({ address: address.spec.address, prefix: address.spec.prefix }));
    return inClusterPrefixPoolStatusAddresses(prefixes, allocations);
  }
  const space = lookup.state.allocation.addressPool;
  if (!space) return undefined;
  return inClusterIPPoolStatusAddresses(
    space.allocatable,
    space.family,
    inUse.map((address) => address.spec.address),
  );
}
