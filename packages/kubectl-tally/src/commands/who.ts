import type { Client } from '@tally-ipam/controller-kit/client';
import { readAddresses, readEntries } from '../kube/holdings.js';
import type { ListScope } from '../kube/list.js';
import { type Found, ownersOf, readClaim, readPool } from '../kube/objects.js';
import type { AnyObject } from '../kube/resources.js';
import { ageOf } from '../view/duration.js';
import { type Holding, joinHoldings } from '../view/holdings.js';
import type { Listing } from '../view/output.js';
import { type ChainLink, formatChain, linkOfKind } from '../view/owner-chain.js';
import type { Target } from '../view/target.js';

/** A holding with the objects it names looked up. */
export interface ResolvedHolding {
  readonly holding: Holding;
  readonly claim:
    | { readonly kind: string; readonly name: string; readonly state: Found<AnyObject>['state'] }
    | undefined;
  readonly pool: { readonly kind: string; readonly name: string; readonly state: Found<AnyObject>['state'] };
  readonly chain: readonly ChainLink[];
  readonly cluster: { readonly name: string; readonly state: string } | undefined;
}

/** Claims looked up once each, however many holdings name them. */
type Memo = Map<string, Promise<Found<AnyObject>>>;

async function resolve(client: Client, holding: Holding, claims: Memo): Promise<ResolvedHolding> {
  const { entry, ipAddress } = holding;
  const claimName = entry?.claim.name ?? ipAddress?.claimName;
  const claimGroup = entry?.claim.apiGroup ?? ipAddress?.apiGroup ?? '';
  const claimKind = entry?.claim.kind ?? (ipAddress?.apiGroup === 'ipam.metal3.io' ? 'IPClaim' : 'IPAddressClaim');
  let claim: ResolvedHolding['claim'];
  let chain: ChainLink[] = [];
  let cluster: ResolvedHolding['cluster'];
  if (claimName !== undefined) {
    const key = `${claimGroup}/${holding.namespace}/${claimName}`;
    const lookup = claims.get(key) ?? readClaim(client, claimGroup, holding.namespace, claimName);
    claims.set(key, lookup);
    const read = await lookup;
    // A claim re-created under the same name is another claim: the entry's uid tells.
    const sameUid = read.state !== 'found' || entry === undefined || read.object.metadata.uid === entry.claim.uid;
    claim = { kind: claimKind, name: claimName, state: sameUid ? read.state : 'missing' };
    if (read.state === 'found' && sameUid) ({ chain, cluster } = await ownersOf(client, read.object));
  }
  const poolRef =
    entry?.pool ??
    (ipAddress
      ? {
          apiGroup: ipAddress.apiGroup === 'ipam.metal3.io' ? 'ipam.metal3.io' : 'ipam.cluster.x-k8s.io',
          ...ipAddress.pool,
        }
      : undefined);
  const pool = poolRef
    ? { kind: poolRef.kind, name: poolRef.name, state: (await readPool(client, poolRef, holding.namespace)).state }
    : { kind: '', name: '<none>', state: 'missing' as const };
  return { holding, claim, pool, chain, cluster };
}

/** Reads every holding that overlaps the target, with its claim, pool and owners. */
export async function readWho(client: Client, target: Target, scope: ListScope): Promise<ResolvedHolding[]> {
  const cluster: ListScope = { ...scope, namespace: undefined };
  const holdings = joinHoldings(target, await readEntries(client, cluster), await readAddresses(client, cluster));
  const claims: Memo = new Map();
  const resolved: ResolvedHolding[] = [];
  for (const holding of holdings) resolved.push(await resolve(client, holding, claims));
  return resolved;
}

function named(kind: string, name: string, state: string): string {
  return state === 'found' ? `${kind}/${name}` : `${kind}/${name} (${state})`;
}

function addressCell(holding: Holding): string {
  return holding.prefix === undefined ? holding.address : `${holding.address}/${holding.prefix}`;
}

/** The `who` listing. */
export function whoListing(target: Target, resolved: readonly ResolvedHolding[], nowMs: number): Listing {
  const headers = ['ADDRESS', 'NAMESPACE', 'CLAIM', 'IPADDRESS', 'POOL', 'HELD', 'MACHINE', 'CLUSTER'];
  const rows = resolved.map(({ holding, claim, pool, chain, cluster }) => [
    addressCell(holding),
    holding.namespace,
    claim ? named(claim.kind, claim.name, claim.state) : '<none>',
    holding.ipAddress ? holding.ipAddress.name : '<missing>',
    named(pool.kind, pool.name, pool.state),
    holding.entry
      ? holding.entry.releasedAt
        ? `released ${ageOf(holding.entry.releasedAt, nowMs)}`
        : ageOf(holding.entry.heldSince, nowMs)
      : '<no entry>',
    linkOfKind(chain, 'Machine'),
    cluster ? (cluster.state === 'found' ? cluster.name : `${cluster.name} (${cluster.state})`) : '<none>',
  ]);
  return {
    kind: 'HoldingList',
    items: resolved.map(({ holding, claim, pool, chain, cluster }) => ({
      address: holding.address,
      ...(holding.prefix === undefined ? {} : { prefix: holding.prefix }),
      namespace: holding.namespace,
      ledgerEntry: holding.entry ?? null,
      ipAddress: holding.ipAddress ?? null,
      claim: claim ?? null,
      pool,
      owners: chain,
      cluster: cluster ?? null,
    })),
    headers,
    rows,
    wideHeaders: [...headers, 'LEDGER', 'OWNERS'],
    wideRows: resolved.map((entry, index) => [
      ...(rows[index] ?? []),
      entry.holding.entry ? `${entry.holding.entry.ledger}/${entry.holding.entry.key}` : '<none>',
      formatChain(entry.chain),
    ]),
    empty: `No address inside ${target.text} is held.`,
  };
}
