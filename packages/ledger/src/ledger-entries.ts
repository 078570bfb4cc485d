import { type AddressLedgerEntry, sameClaimName } from '@tally-ipam/api-types';

/**
 * What one write of a ledger decides, as a pure function of the entries the write starts from. A batch of operations
 * is applied in order to one copy of the entries, so two holds of one key in one batch behave exactly like two holds in
 * two writes: the first wins, the second sees it.
 */

/** The claim an entry is held for. */
export interface EntryHolder {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/** An entry as a hold asks for it; `heldSince` is set when it is written. */
export type WantedEntry = Omit<AddressLedgerEntry, 'heldSince' | 'releasedAt'>;

export type LedgerOperation =
  /** Take `entry.key` for `entry.claimRef` (see `decideHold`). */
  | { readonly kind: 'hold'; readonly entry: WantedEntry; readonly reuseGracePeriodMs: number }
  /** Give the claim's entry back: removed, or kept with `releasedAt` while reuse waits. */
  | { readonly kind: 'release'; readonly key: string; readonly claimUID: string; readonly releasedAt?: string }
  /** Remove exactly this entry (garbage collection): nothing if it changed since it was observed. */
  | { readonly kind: 'drop'; readonly observed: AddressLedgerEntry };

export type OperationResult =
  | { readonly ok: true; readonly entry: AddressLedgerEntry | undefined }
  /** The key is held by another claim (or released and still in its grace period). */
  | { readonly ok: false; readonly holder: AddressLedgerEntry };

export interface AppliedOperations {
  readonly entries: AddressLedgerEntry[];
  readonly results: OperationResult[];
  readonly changed: boolean;
}

/**
 * Whether a hold may take the key from what holds it now, the rules the address holdings had:
 * - nothing holds it: taken;
 * - this claim (same uid) holds it, unreleased: already ours (a retry, a second replica, a crash before the IPAddress);
 * - a claim of the same API group, kind, namespace and name but another uid: that claim is gone (two claims of one name cannot coexist),
 *   the entry is stale — taken over; so is the claim's own released entry;
 * - released, and the reuse grace period of the asking pool is over: taken over;
 * - otherwise it stays with its holder.
 */
export function decideHold(
  current: AddressLedgerEntry | undefined,
  wanted: WantedEntry,
  reuseGracePeriodMs: number,
  nowMs: number,
): 'take' | 'ours' | 'held' {
  if (current === undefined) return 'take';
  const by = current.claimRef;
  const holder = wanted.claimRef;
  if (by.uid === holder.uid && current.releasedAt === undefined) return 'ours';
  if (sameClaimName(by, holder)) return 'take';
  if (current.releasedAt !== undefined && nowMs - Date.parse(current.releasedAt) >= reuseGracePeriodMs) return 'take';
  return 'held';
}

export function applyOperations(
  entries: readonly AddressLedgerEntry[],
  operations: readonly LedgerOperation[],
  nowMs: number,
): AppliedOperations {
  const byKey = new Map<string, AddressLedgerEntry>(entries.map((entry) => [entry.key, entry]));
  const results: OperationResult[] = [];
  let changed = false;
  const now = new Date(nowMs).toISOString();
  for (const operation of operations) {
    switch (operation.kind) {
      case 'hold': {
        const current = byKey.get(operation.entry.key);
        const decision = decideHold(current, operation.entry, operation.reuseGracePeriodMs, nowMs);
        if (decision === 'held' && current) {
          results.push({ ok: false, holder: current });
        } else if (decision === 'ours') {
          results.push({ ok: true, entry: current });
        } else {
          const entry: AddressLedgerEntry = { ...operation.entry, heldSince: now };
          byKey.set(entry.key, entry);
          changed = true;
          results.push({ ok: true, entry });
        }
        break;
      }
      case 'release': {
        const current = byKey.get(operation.key);
        if (current === undefined || current.claimRef.uid !== operation.claimUID) {
          results.push({ ok: true, entry: undefined });
        } else if (operation.releasedAt === undefined) {
          byKey.delete(operation.key);
          changed = true;
          results.push({ ok: true, entry: undefined });
        } else if (current.releasedAt === undefined) {
          const released = { ...current, releasedAt: operation.releasedAt };
          byKey.set(operation.key, released);
          changed = true;
          results.push({ ok: true, entry: released });
        } else {
          results.push({ ok: true, entry: current });
        }
        break;
      }
      case 'drop': {
        const current = byKey.get(operation.observed.key);
        if (current !== undefined && sameEntry(current, operation.observed)) {
          byKey.delete(current.key);
          changed = true;
        }
        results.push({ ok: true, entry: undefined });
        break;
      }
    }
  }
  // Sorted by key: a ledger reads the same whoever wrote it, and unchanged entries never show up as a diff.
  const sorted = [...byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { entries: sorted, results, changed };
}

export function sameEntry(a: AddressLedgerEntry, b: AddressLedgerEntry): boolean {
  return (
    a.key === b.key &&
    a.address === b.address &&
    a.prefix === b.prefix &&
    a.claimRef.uid === b.claimRef.uid &&
    sameClaimName(a.claimRef, b.claimRef) &&
    a.poolRef.apiGroup === b.poolRef.apiGroup &&
    a.poolRef.kind === b.poolRef.kind &&
    a.poolRef.name === b.poolRef.name &&
    a.poolRef.namespace === b.poolRef.namespace &&
    a.heldSince === b.heldSince &&
    a.releasedAt === b.releasedAt
  );
}
