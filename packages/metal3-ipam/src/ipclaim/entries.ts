import type { AssumedObjects, Store } from '@tally-ipam/controller-kit/cache';
import type { AddressLedgers, Holding, OperationResult } from '@tally-ipam/ledger';
import { assumeHold, ledgerSlot, type Metal3ClaimIdentity, type Metal3PoolIdentity, metal3Entry } from '../holdings.js';
import type { StoredMetal3Claim, StoredMetal3Pool } from '../resources.js';
import { ENTRY_CLAIM_UID_INDEX } from './deps.js';

/**
 * The ledger entries as this process knows them: the entry view with the process's own acknowledged holds on top
 * (`AssumedObjects`). The view follows the ledger informer, which trails the write; without the overlay, claims of one
 * pool reconciled in parallel would choose an address already won by a hold whose ledger update has not arrived yet,
 * and be refused by the ledger one after the other. The overlay is a hint that saves a refused write, never the
 * guarantee: the ledger write decides.
 */
export interface EntriesDeps {
  readonly ledgers: Pick<AddressLedgers, 'submit' | 'ledger'>;
  readonly entries: Pick<Store<Holding>, 'list' | 'byIndex'>;
  readonly assumedEntries: AssumedObjects<Holding>;
}

/** The claim an entry is held for: namespace, name and the uid that tells two claims of one name apart. */
export function claimIdentity(claim: StoredMetal3Claim): Metal3ClaimIdentity {
  return { namespace: claim.metadata.namespace ?? '', name: claim.metadata.name, uid: claim.metadata.uid ?? '' };
}

/** The pool an entry is taken for. */
export function poolIdentity(pool: StoredMetal3Pool): Metal3PoolIdentity {
  return { namespace: pool.metadata.namespace ?? '', name: pool.metadata.name };
}

/** Every entry, each in the newer of the view's copy and this process's last write of it. */
export function knownEntries(deps: EntriesDeps): { list(): Holding[] } {
  return {
    list: () => {
      const viewed = deps.entries.list();
      const pending = deps.assumedEntries.pending();
      if (pending.length === 0) return viewed;
      const newer = new Map<string, Holding>();
      for (const written of pending) {
        const current = deps.assumedEntries.get(written.metadata.name);
        if (current) newer.set(current.metadata.name, current);
      }
      const entries = viewed.map((entry) => {
        const own = newer.get(entry.metadata.name);
        newer.delete(entry.metadata.name);
        return own ?? entry;
      });
      return [...entries, ...newer.values()];
    },
  };
}

/** Whether the entry of `address` is held, unreleased, for the claim `uid` (in the view or the overlay). */
export function isHeldBy(deps: EntriesDeps, address: string, uid: string): boolean {
  const entry = deps.assumedEntries.get(ledgerSlot(address).key);
  return entry !== undefined && entry.spec.claimRef.uid === uid && entry.spec.releasedAt === undefined;
}

/** The addresses of the claim's unreleased entries, in the view or the overlay. */
export function addressesHeldBy(deps: EntriesDeps, uid: string): string[] {
  const keys = new Set<string>();
  for (const entry of deps.entries.byIndex(ENTRY_CLAIM_UID_INDEX, uid)) keys.add(entry.metadata.name);
  for (const entry of deps.assumedEntries.pending()) keys.add(entry.metadata.name);
  const addresses: string[] = [];
  for (const key of keys) {
    const entry = deps.assumedEntries.get(key);
    if (entry && entry.spec.claimRef.uid === uid && entry.spec.releasedAt === undefined) {
      addresses.push(entry.spec.address);
    }
  }
  return addresses;
}

/** Holds `address` in its ledger for the claim; a hold won is assumed in the overlay (`assumeHold`). */
export async function holdAddress(
  deps: EntriesDeps,
  address: string,
  pool: Metal3PoolIdentity,
  claim: Metal3ClaimIdentity,
): Promise<OperationResult> {
  const { ledgerName } = ledgerSlot(address);
  const result = await deps.ledgers.submit(ledgerName, {
    kind: 'hold',
    reuseGracePeriodMs: 0,
    entry: metal3Entry(address, pool, claim),
  });
  assumeHold(deps.assumedEntries, deps.ledgers, ledgerName, result);
  return result;
}

/** Gives the claim's entry of `address` back (removed: Metal3 has no reuse grace period). */
export async function releaseAddress(deps: EntriesDeps, address: string, uid: string): Promise<void> {
  const { ledgerName, key } = ledgerSlot(address);
  // Forgotten first: the entry's removal may reach the informer (and wake the pool's waiting claims) before the
  // write's own answer; a hold still assumed here would make them find the pool exhausted once more.
  if (deps.assumedEntries.get(key)?.spec.claimRef.uid === uid) deps.assumedEntries.forget(key);
  await deps.ledgers.submit(ledgerName, { kind: 'release', key, claimUID: uid });
}
