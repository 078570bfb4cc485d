import { parseIP } from '@tally-ipam/allocator';
import {
  type LedgerClaimReference,
  METAL3_IP_CLAIM_KIND,
  METAL3_IP_POOL_KIND,
  METAL3_IPAM_GROUP,
} from '@tally-ipam/api-types';
import type { AssumedObjects, Store } from '@tally-ipam/controller-kit/cache';
import {
  type AddressLedgers,
  addressEntryKey,
  type Holding,
  holdingOfEntry,
  ledgerNameOf,
  type OperationResult,
  type WantedEntry,
} from '@tally-ipam/ledger';
import type { HeldAddress } from './allocate.js';
import type { Metal3PoolPlan } from './ranges.js';

/**
 * Metal3 allocations in Tally's address ledgers. An IPClaim's address is an entry like any Tally claim's, keyed by the
 * address (`ip4-10.0.0.5`) in the ledger of its block, so a Metal3 IPPool and a Tally pool whose ranges overlap share
 * the entry and the API server decides every race between them. The entry names its claim's API group and kind, so a
 * Metal3 IPClaim and an IPAddressClaim of one namespace and name are two claims.
 */

/** The pool an entry was taken for. */
export interface Metal3PoolIdentity {
  readonly namespace: string;
  readonly name: string;
}

/** The claim an entry is held for. */
export interface Metal3ClaimIdentity {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/** Whether an entry's claim is a Metal3 IPClaim. */
export function isMetal3ClaimReference(ref: LedgerClaimReference): boolean {
  return ref.apiGroup === METAL3_IPAM_GROUP && ref.kind === METAL3_IP_CLAIM_KIND;
}

/** Whether an entry's pool is a Metal3 IPPool. */
export function isMetal3PoolReference(ref: { readonly apiGroup: string; readonly kind: string }): boolean {
  return ref.apiGroup === METAL3_IPAM_GROUP && ref.kind === METAL3_IP_POOL_KIND;
}

/** The ledger holding `address` and the entry key of it. */
export function ledgerSlot(address: string): { readonly ledgerName: string; readonly key: string } {
  return { ledgerName: ledgerNameOf({ address, prefix: 0, isPrefix: false }), key: addressEntryKey(address) };
}

/** The entry a hold of `address` for an IPClaim asks for. */
export function metal3Entry(address: string, pool: Metal3PoolIdentity, claim: Metal3ClaimIdentity): WantedEntry {
  return {
    key: addressEntryKey(address),
    address,
    poolRef: { apiGroup: METAL3_IPAM_GROUP, kind: METAL3_IP_POOL_KIND, name: pool.name, namespace: pool.namespace },
    claimRef: {
      apiGroup: METAL3_IPAM_GROUP,
      kind: METAL3_IP_CLAIM_KIND,
      namespace: claim.namespace,
      name: claim.name,
      uid: claim.uid,
    },
  };
}

/**
 * Every address entry of the ledgers that lies in one of the plan's ranges, whatever pool and API hold it, as the held
 * addresses `allocateForClaim` takes. Only an entry of a Metal3 IPClaim of `namespace` carries its claim's name (so an
 * entry left by a claim's earlier reconcile is reused); every other entry blocks its address for everyone. Released
 * entries are left out: a hold takes them over (`decideHold`).
 */
export function ledgerHeldInPlan(
  entries: Pick<Store<Holding>, 'list'>,
  plan: Metal3PoolPlan,
  namespace: string,
): HeldAddress[] {
  const held: HeldAddress[] = [];
  for (const entry of entries.list()) {
    if (entry.spec.prefix !== undefined || entry.spec.releasedAt !== undefined) continue;
    let ip: ReturnType<typeof parseIP>;
    try {
      ip = parseIP(entry.spec.address);
    } catch {
      continue;
    }
    const inRange = plan.ranges.some(
      (range) => range.family === ip.family && range.first <= ip.value && ip.value <= range.last,
    );
    if (!inRange) continue;
    const claimRef = entry.spec.claimRef;
    const sameNamespaceIPClaim = isMetal3ClaimReference(claimRef) && claimRef.namespace === namespace;
    held.push({ address: entry.spec.address, claimName: sameNamespaceIPClaim ? claimRef.name : undefined });
  }
  return held;
}

/**
 * Assumes the entry a hold of `ledgerName` returned in the overlay of this process's writes, as a holding with the
 * resourceVersion of the ledger after the write, until the entry view shows it or its removal. Not when the overlay
 * or the view already shows that very entry (same claim uid and `heldSince`): a hold answered "already yours" writes
 * nothing, and a copy with a newer version than the view's would then stay until the entry is removed.
 */
export function assumeHold(
  assumed: Pick<AssumedObjects<Holding>, 'assume' | 'get'>,
  ledgers: Pick<AddressLedgers, 'ledger'>,
  ledgerName: string,
  result: OperationResult,
): void {
  const ledger = ledgers.ledger(ledgerName);
  if (!result.ok || !result.entry || !ledger) return;
  const holding = holdingOfEntry(result.entry, ledger);
  const shown = assumed.get(holding.metadata.name);
  const same =
    shown !== undefined &&
    shown.metadata.uid === holding.metadata.uid &&
    shown.spec.releasedAt === holding.spec.releasedAt;
  if (!same) assumed.assume(holding);
}
