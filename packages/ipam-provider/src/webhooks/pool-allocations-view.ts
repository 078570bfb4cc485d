import { type IPAddress, isTallyPoolReference } from '@tally-ipam/api-types';
import type { Cache } from '@tally-ipam/controller-kit';
import { ADDRESS_RESOURCE, POOL_RESOURCES } from '../resources.js';
import { POOL_KINDS, type TallyPool } from './pool-kinds.js';

/** Which pool an IPAddress belongs to: kind, name, and the namespace for namespaced kinds. */
export interface PoolIdentity {
  readonly kind: string;
  readonly name: string;
  /** Undefined for the cluster-scoped (Global) kinds, whose addresses live in every namespace. */
  readonly namespace?: string | undefined;
}

/**
 * The read-only state the pool webhooks need: which IPAddresses a pool has handed out, and every other pool.
 * Reads come from an informer cache, like the reference provider's cached reader: admission must answer in
 * milliseconds, and the controller keeps the same state in memory anyway.
 */
export interface PoolAllocationsView {
  addressesOf(pool: PoolIdentity): Promise<readonly IPAddress[]>;
  listPools(): Promise<readonly TallyPool[]>;
}

// A private index name: the provider's own controllers may index IPAddresses by pool with another key format.
const POOL_INDEX = 'tally-webhooks.poolRef';

function poolIndexKey(pool: PoolIdentity): string {
  return `${pool.kind}/${pool.namespace ?? ''}/${pool.name}`;
}

const NAMESPACED_KINDS = new Set<string>(POOL_KINDS.filter((kind) => kind.namespaced).map((kind) => kind.kind));

function addressPoolKey(address: IPAddress): string {
  const ref = address.spec.poolRef;
  const namespace = NAMESPACED_KINDS.has(ref.kind) ? address.metadata.namespace : undefined;
  return poolIndexKey({ kind: ref.kind, name: ref.name, namespace });
}

/**
 * A view over the shared informer cache: IPAddresses indexed by the pool they name, and one informer per pool kind.
 * The informers are the provider's own (same resources, so they are shared, not duplicated) and are created here,
 * so a manager waits for them to sync before it reports ready. The provider caches pools with their spec unparsed
 * (an invalid pool must still be seen); admission parses each one and leaves out the ones that do not parse.
 */
export function cachePoolAllocationsView(cache: Cache): PoolAllocationsView {
  cache.informerFor(ADDRESS_RESOURCE, {
    indexers: {
      [POOL_INDEX]: (address) => (isTallyPoolReference(address.spec.poolRef) ? [addressPoolKey(address)] : []),
    },
  });
  for (const kind of POOL_KINDS) cache.informerFor(POOL_RESOURCES[kind.kind]);
  return {
    addressesOf: (pool) => cache.list(ADDRESS_RESOURCE, { index: { name: POOL_INDEX, value: poolIndexKey(pool) } }),
    async listPools() {
      const lists = await Promise.all(
        POOL_KINDS.map(async (kind) => {
          const stored = await cache.list(POOL_RESOURCES[kind.kind]);
          return stored.flatMap((object) => {
            const parsed = kind.schema.safeParse(object);
            return parsed.success ? [parsed.data] : [];
          });
        }),
      );
      return lists.flat();
    },
  };
}
