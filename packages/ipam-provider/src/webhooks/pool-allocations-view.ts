import { isTallyPoolReference } from '@tally-ipam/api-types';
import type { Cache } from '@tally-ipam/controller-kit';
import { ADDRESS_RESOURCE, POOL_RESOURCES, type StoredAddress } from '../resources.js';
import type { IPAMProvider } from '../setup.js';
import { POOL_KINDS, type TallyPool } from './pool-kinds.js';

/** Which pool an IPAddress belongs to: kind, name, and the namespace for namespaced kinds. */
export interface PoolIdentity {
  readonly kind: string;
  readonly name: string;
  /** Undefined for the cluster-scoped (Global) kinds, whose addresses live in every namespace. */
  readonly namespace?: string | undefined;
}

/** One address (or prefix) a pool has handed out, as its IPAddress says. */
export interface PoolAllocation {
  readonly address: string;
  readonly prefix: number;
  readonly claimName: string;
}

/**
 * The read-only state the pool webhooks need: what a pool has handed out, and every other pool. Reads come from an
 * informer cache, like the reference provider's cached reader: admission must answer in milliseconds, and the
 * controller keeps the same state in memory anyway.
 */
export interface PoolAllocationsView {
  addressesOf(pool: PoolIdentity): Promise<readonly PoolAllocation[]>;
  listPools(): Promise<readonly TallyPool[]>;
}

/** How long a review waits for a cache that has not listed yet before it fails (and the API server retries). */
const SYNC_WAIT_MS = 10_000;

/** Pools are cached with their spec unparsed; admission parses each and leaves out the ones that do not parse. */
function parsePools(objects: readonly unknown[]): TallyPool[] {
  return objects.flatMap((object) => {
    const kind = POOL_KINDS.find((candidate) => candidate.kind === (object as { kind?: unknown }).kind);
    const parsed = kind?.schema.safeParse(object);
    return parsed?.success ? [parsed.data] : [];
  });
}

/** The view over the provider's own caches (the same informers its controllers use, in the same namespace scope). */
export function providerPoolAllocationsView(provider: IPAMProvider): PoolAllocationsView {
  const synced = async (): Promise<void> => {
    if (provider.hasSynced()) return;
    if (!(await provider.waitForSync(AbortSignal.timeout(SYNC_WAIT_MS)))) {
      throw new Error(`the IPAddress and pool caches have not synced after ${SYNC_WAIT_MS / 1000} s; try again`);
    }
  };
  return {
    async addressesOf(pool) {
      await synced();
      const kind = POOL_KINDS.find((candidate) => candidate.kind === pool.kind);
      if (!kind) return [];
      return provider.allocatedAddresses({ kind: kind.kind, name: pool.name, namespace: pool.namespace });
    },
    async listPools() {
      await synced();
      return parsePools(provider.pools().map((view) => view.pool));
    },
  };
}

// A private index name: the provider's controllers index IPAddresses by pool with their own key format.
const POOL_INDEX = 'tally-webhooks.poolRef';

function poolIndexKey(pool: PoolIdentity): string {
  return `${pool.kind}/${pool.namespace ?? ''}/${pool.name}`;
}

const NAMESPACED_KINDS = new Set<string>(POOL_KINDS.filter((kind) => kind.namespaced).map((kind) => kind.kind));

function addressPoolKey(address: StoredAddress): string {
  const ref = address.spec.poolRef;
  const namespace = NAMESPACED_KINDS.has(ref.kind) ? address.metadata.namespace : undefined;
  return poolIndexKey({ kind: ref.kind, name: ref.name, namespace });
}

/**
 * A view straight over a shared informer cache (all namespaces), for a webhook server running without the
 * provider's controllers. The informers are the provider's resources, so they are shared if both run.
 */
export function cachePoolAllocationsView(cache: Cache): PoolAllocationsView {
  cache.informerFor(ADDRESS_RESOURCE, {
    indexers: {
      [POOL_INDEX]: (address) => (isTallyPoolReference(address.spec.poolRef) ? [addressPoolKey(address)] : []),
    },
  });
  for (const kind of POOL_KINDS) cache.informerFor(POOL_RESOURCES[kind.kind]);
  return {
    async addressesOf(pool) {
      const addresses = await cache.list(ADDRESS_RESOURCE, { index: { name: POOL_INDEX, value: poolIndexKey(pool) } });
      return addresses.map((address) => ({
        address: address.spec.address,
        prefix: address.spec.prefix,
        claimName: address.spec.claimRef.name,
      }));
    },
    async listPools() {
      const lists = await Promise.all(POOL_KINDS.map((kind) => cache.list(POOL_RESOURCES[kind.kind])));
      return parsePools(lists.flat());
    },
  };
}
