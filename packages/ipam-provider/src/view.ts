import type { KubeObject, SharedInformer } from '@tally-ipam/controller-kit';
import { POOL_INDEX } from './indexes.js';
import { type PoolRef, poolKey, poolRefOfPool } from './pool-ref.js';
import type { StoredPool } from './resources.js';
import type { ProviderInformers } from './shared.js';

/** An IPAddress allocated from a pool, as the cache holds it. */
export interface AllocatedAddress {
  readonly namespace: string;
  /** The IPAddress name (= the claim's name). */
  readonly name: string;
  readonly address: string;
  readonly prefix: number;
  readonly claimName: string;
}

/** A Tally pool as cached: the reference and the object (its spec unvalidated; parse with api-types' parsers). */
export interface PoolView {
  readonly ref: PoolRef;
  readonly pool: StoredPool;
}

/**
 * The read-only view of the provider's shared cache that admission webhooks need: what is allocated from a pool (to
 * refuse deleting it or shrinking it under its addresses) and every pool (to warn about overlaps).
 */
export interface ProviderCacheView {
  /** IPAddresses whose `spec.poolRef` names this pool (namespaced pools: in the pool's namespace). */
  allocatedAddresses(ref: PoolRef): AllocatedAddress[];
  /** Every Tally pool of the four kinds in the cache. */
  pools(): PoolView[];
  /** One pool by reference, undefined when the cache does not hold it. */
  pool(ref: PoolRef): StoredPool | undefined;
  /** True once every informer behind the view has listed. */
  hasSynced(): boolean;
  /** Resolves true once synced, false if the signal aborts first. */
  waitForSync(signal: AbortSignal): Promise<boolean>;
}

/** The view over the provider's IPAddress and pool informers; `pool` is the provider's own lookup (with its writes). */
export function providerCacheView(
  informers: ProviderInformers,
  pool: (ref: PoolRef) => StoredPool | undefined,
): ProviderCacheView {
  const { addresses } = informers;
  const viewInformers: SharedInformer<KubeObject>[] = [
    addresses as unknown as SharedInformer<KubeObject>,
    ...([...informers.pools.values()] as unknown as SharedInformer<KubeObject>[]),
  ];
  return {
    allocatedAddresses: (ref) =>
      addresses.store.byIndex(POOL_INDEX, poolKey(ref)).map((address) => ({
        namespace: address.metadata.namespace ?? '',
        name: address.metadata.name,
        address: address.spec.address,
        prefix: address.spec.prefix,
        claimName: address.spec.claimRef.name,
      })),
    pools: () => {
      const views: PoolView[] = [];
      for (const informer of informers.pools.values()) {
        for (const object of informer.store.list()) {
          const ref = poolRefOfPool(object);
          if (ref) views.push({ ref, pool: object });
        }
      }
      return views;
    },
    pool,
    hasSynced: () => viewInformers.every((informer) => informer.hasSynced()),
    waitForSync: async (signal) => {
      await Promise.all(viewInformers.map((informer) => informer.whenSynced(signal)));
      return viewInformers.every((informer) => informer.hasSynced());
    },
  };
}
