/**
 * An in-cluster pool's counts as the reference writes them to `status.ipAddresses`: counted from the pool's IPAddresses
 * (`inClusterIPPoolStatusAddresses`: a duplicated address twice, `free` below zero when some are out of range), not
 * from the ledgers as Tally's own pools are. A spec that cannot be used gets no counts (no status write), as the
 * reference's reconcile fails before its status write; its claims say why (PoolNotReady).
 */
import { inClusterIPPoolStatusAddresses } from '@tally-ipam/api-types';
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
): ReturnType<typeof inClusterIPPoolStatusAddresses> | undefined {
  if (lookup.status === 'invalid') {
    logger.info({ reason: lookup.message }, 'in-cluster pool spec cannot be used; no status written');
    return undefined;
  }
  const space = lookup.state.allocation.addressPool;
  if (!space) return undefined;
  const inUse = addresses.store.byIndex(POOL_INDEX, poolKey(ref)).map((address) => address.spec.address);
  return inClusterIPPoolStatusAddresses(space.allocatable, space.family, inUse);
}
