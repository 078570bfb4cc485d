import { IPAM_GROUP, METAL3_IPAM_GROUP } from '@tally-ipam/api-types';
import { type Client, isNotFound, type ObjectOf, type ResourceKind } from '@tally-ipam/controller-kit/client';
import { POOL_RESOURCES } from '@tally-ipam/ipam-provider';
import { LEDGER_RESOURCE, ledgerNameOfEntryKey } from '@tally-ipam/ledger';
import { METAL3_ADDRESS_RESOURCE, METAL3_CLAIM_RESOURCE, METAL3_POOL_RESOURCE } from '@tally-ipam/metal3-ipam';
import { ADDRESS_RESOURCE, CLAIM_RESOURCE, CLUSTER_RESOURCE, MACHINE_RESOURCE } from '@tally-ipam/sim-infra';
import { z } from 'zod';

/** The fields of a Metal3 IPAddress the inventory reads (the cached schema leaves them loose). */
const Metal3AddressSpec = z.object({
  address: z.string(),
  prefix: z.number().int().optional(),
  claim: z.object({ name: z.string() }),
  pool: z.object({ name: z.string() }),
});

/** One allocation as its IPAddress (of either API) says: which claim holds which address of which pool. */
export interface Holding {
  readonly api: 'capi' | 'metal3';
  /** `namespace/name` of the claim. */
  readonly claim: string;
  readonly address: string;
  readonly prefix: number | undefined;
  /** `Kind namespace/name` or `Kind name` of the pool. */
  readonly pool: string;
  /** The IPAddress's uid: the same allocation, not one made again. */
  readonly uid: string;
}

/** One ledger entry: the address it holds and the claim it names. */
export interface LedgerHolding {
  readonly address: string;
  readonly claim: string;
  readonly claimUid: string;
  readonly claimKind: string;
  readonly heldSince: string;
  readonly released: boolean;
  /**
   * The entry is in the ledger the running layout names for it. False for the ledgers of another block size (0.1.0's
   * 256-address ledgers after an upgrade), which no longer count and are deleted once each entry is held again.
   */
  readonly inLayout: boolean;
}

/** What one management cluster holds, read live (never from a cache) and sorted, so two reads compare as values. */
export interface Inventory {
  readonly clusters: readonly string[];
  readonly machines: readonly string[];
  /** Pools of every kind and API: `Kind namespace/name` (namespaced) or `Kind name` (global). */
  readonly pools: readonly string[];
  /** Claims of both APIs: `api namespace/name`. */
  readonly claims: readonly string[];
  readonly holdings: readonly Holding[];
  readonly ledger: readonly LedgerHolding[];
}

/** The items of a list, or none when the kind is not installed (its CRD deleted with `--include-crd`). */
async function listOrNone<R extends ResourceKind>(
  client: Client,
  resource: R,
  namespace?: string,
): Promise<ObjectOf<R>[]> {
  try {
    return (await client.list(resource, namespace === undefined ? {} : { namespace })).items;
  } catch (error) {
    if (isNotFound(error)) return [];
    throw error;
  }
}

function sorted<T>(items: T[], key: (item: T) => string): T[] {
  return items.sort((a, b) => key(a).localeCompare(key(b)));
}

const holdingKey = (holding: Holding): string => `${holding.api} ${holding.claim} ${holding.address}`;

/** Everything the lifecycle assertions compare, in `namespaces` (pools of the global kinds: all of them). */
export async function readInventory(client: Client, namespaces: readonly string[]): Promise<Inventory> {
  const clusters: string[] = [];
  const machines: string[] = [];
  const pools: string[] = [];
  const claims: string[] = [];
  const holdings: Holding[] = [];
  for (const namespace of namespaces) {
    for (const cluster of await listOrNone(client, CLUSTER_RESOURCE, namespace)) {
      clusters.push(`${namespace}/${cluster.metadata.name}`);
    }
    for (const machine of await listOrNone(client, MACHINE_RESOURCE, namespace)) {
      machines.push(`${namespace}/${machine.metadata.name}`);
    }
    for (const kind of ['TallyIPPool', 'TallyPrefixPool'] as const) {
      for (const pool of await listOrNone(client, POOL_RESOURCES[kind], namespace)) {
        pools.push(`${kind} ${namespace}/${pool.metadata.name}`);
      }
    }
    for (const pool of await listOrNone(client, METAL3_POOL_RESOURCE, namespace)) {
      pools.push(`IPPool ${namespace}/${pool.metadata.name}`);
    }
    for (const claim of await listOrNone(client, CLAIM_RESOURCE, namespace)) {
      claims.push(`capi ${namespace}/${claim.metadata.name}`);
    }
    for (const claim of await listOrNone(client, METAL3_CLAIM_RESOURCE, namespace)) {
      claims.push(`metal3 ${namespace}/${claim.metadata.name}`);
    }
    for (const address of await listOrNone(client, ADDRESS_RESOURCE, namespace)) {
      const { poolRef, claimRef } = address.spec;
      const global = poolRef.kind.startsWith('Global');
      holdings.push({
        api: 'capi',
        claim: `${namespace}/${claimRef.name}`,
        address: address.spec.address,
        prefix: address.spec.prefix,
        pool: global ? `${poolRef.kind} ${poolRef.name}` : `${poolRef.kind} ${namespace}/${poolRef.name}`,
        uid: address.metadata.uid ?? '',
      });
    }
    for (const address of await listOrNone(client, METAL3_ADDRESS_RESOURCE, namespace)) {
      const spec = Metal3AddressSpec.parse(address.spec);
      holdings.push({
        api: 'metal3',
        claim: `${namespace}/${spec.claim.name}`,
        address: spec.address,
        prefix: spec.prefix,
        pool: `IPPool ${namespace}/${spec.pool.name}`,
        uid: address.metadata.uid ?? '',
      });
    }
  }
  for (const kind of ['GlobalTallyIPPool', 'GlobalTallyPrefixPool'] as const) {
    for (const pool of await listOrNone(client, POOL_RESOURCES[kind])) pools.push(`${kind} ${pool.metadata.name}`);
  }
  const ledger: LedgerHolding[] = [];
  for (const block of await listOrNone(client, LEDGER_RESOURCE)) {
    for (const entry of block.spec.entries ?? []) {
      const metal3 = entry.claimRef.apiGroup === METAL3_IPAM_GROUP;
      if (!metal3 && entry.claimRef.apiGroup !== undefined && entry.claimRef.apiGroup !== IPAM_GROUP) continue;
      ledger.push({
        address: entry.prefix === undefined ? entry.address : `${entry.address}/${entry.prefix}`,
        claim: `${entry.claimRef.namespace}/${entry.claimRef.name}`,
        claimUid: entry.claimRef.uid,
        claimKind: metal3 ? 'metal3' : 'capi',
        heldSince: entry.heldSince,
        released: entry.releasedAt !== undefined,
        inLayout: ledgerNameOfEntryKey(entry.key) === block.metadata.name,
      });
    }
  }
  return {
    clusters: clusters.sort(),
    machines: machines.sort(),
    pools: pools.sort(),
    claims: claims.sort(),
    holdings: sorted(holdings, holdingKey),
    ledger: sorted(ledger, (entry) => `${entry.claimKind} ${entry.claim} ${entry.address}`),
  };
}

/** `api namespace/name → address[/prefix]`: what each claim holds, the thing a move must keep. */
export function addressesByClaim(inventory: Inventory): Record<string, string> {
  return Object.fromEntries(
    inventory.holdings.map((holding) => [
      `${holding.api} ${holding.claim}`,
      holding.prefix === undefined ? holding.address : `${holding.address}/${holding.prefix}`,
    ]),
  );
}

/** Whether an object exists (a live GET). */
export async function exists(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

/** One line of counts, for the suite's progress output (the note of a run quotes it). */
export function describeCounts(inventory: Inventory): string {
  const live = inventory.ledger.filter((entry) => !entry.released).length;
  return (
    `${inventory.clusters.length} Clusters, ${inventory.machines.length} Machines, ${inventory.pools.length} pools, ` +
    `${inventory.claims.length} claims, ${inventory.holdings.length} IPAddresses, ${live} ledger entries`
  );
}
