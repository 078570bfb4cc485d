import {
  type AddressLedgers,
  type HeldUnit,
  type Holding,
  holdingOfEntry,
  ledgerNameOf,
  parseEntryKey,
} from '@tally-ipam/ledger';
import { type PoolRef, tallyPoolReference } from './pool-ref.js';
import type { StoredClaim } from './resources.js';

/** The claim a holding is taken for. */
export interface Holder {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

export function holderOf(claim: StoredClaim): Holder {
  return {
    namespace: claim.metadata.namespace ?? '',
    name: claim.metadata.name,
    uid: claim.metadata.uid ?? '',
  };
}

export type AcquireResult =
  | { readonly acquired: true; readonly holding: Holding }
  /** Another claim holds it (or it is a released entry still in its grace period). */
  | { readonly acquired: false; readonly holder: Holding };

/**
 * Where the API server decides who holds an address: entries of per-block TallyAddressLedgers. A holding is a ledger
 * entry seen as an object of its own (`holdingOfEntry`), so the claim steps, the pool states and the garbage collector
 * read one holding per address while the API server keeps one object per block.
 */
export interface AddressHolds {
  /** Takes `unit` for `holder` (the holding rules: ours again, stale name or cooled release taken over, else refused). */
  acquire(
    unit: HeldUnit,
    pool: PoolRef,
    holder: Holder,
    reuseGracePeriodMs: number,
    signal: AbortSignal,
  ): Promise<AcquireResult>;
  /**
   * Gives a holding back: kept with `releasedAt` (`keepAsReleased`), else removed; only if it is still this one.
   * `background`: the caller will not wait for it (see `backgroundReleases`), so it may be batched with later releases.
   */
  release(
    holding: Holding,
    keepAsReleased: boolean,
    now: Date,
    signal: AbortSignal,
    options?: ReleaseOptions,
  ): Promise<void>;
  /** The holding of a key as the API server has it now. */
  live(key: string, signal: AbortSignal): Promise<Holding | undefined>;
  /** Removes exactly this holding (garbage collection): nothing if it changed since it was read. */
  drop(holding: Holding, signal: AbortSignal): Promise<void>;
  /**
   * Gives back the holding of `key` if, and only if, the API server shows it held for `claimUID` — decided inside the
   * write, so the caller needs no read first.
   */
  releaseIfHeldBy(
    key: string,
    claimUID: string,
    keepAsReleased: boolean,
    now: Date,
    options?: ReleaseOptions,
  ): Promise<void>;
  /** Whether this process has a release of `key` for `claimUID` queued or in flight (ledgers; no request). */
  releasing(key: string, claimUID: string): boolean;
}

export interface ReleaseOptions {
  /** Nobody waits on this release: it may wait for others of its ledger to share their write (`RELEASE_COALESCE_MS`). */
  readonly background?: boolean | undefined;
}

function unitOfHolding(holding: Holding): HeldUnit {
  const isPrefix = holding.spec.prefix !== undefined;
  return { address: holding.spec.address, prefix: holding.spec.prefix ?? 0, isPrefix, entryKey: holding.metadata.name };
}

/** The unit an entry key (a holding name) stands for; undefined for a name no address has. */
export function heldUnitOfKey(key: string): HeldUnit | undefined {
  const value = parseEntryKey(key);
  if (!value) return undefined;
  const isPrefix = value.kind === 'prefix';
  return { address: value.address, prefix: isPrefix ? value.prefixLength : 0, isPrefix, entryKey: key };
}

export function ledgerHolds(ledgers: AddressLedgers): AddressHolds {
  return {
    acquire: async (unit, pool, holder, reuseGracePeriodMs) => {
      const result = await ledgers.hold(unit, tallyPoolReference(pool), holder, reuseGracePeriodMs);
      const ledger = ledgers.ledger(ledgerNameOf(unit));
      if (!ledger) throw new Error(`TallyAddressLedger ${ledgerNameOf(unit)} vanished right after its write`);
      if (result.ok) {
        if (!result.entry) throw new Error(`ledger hold of ${unit.entryKey} answered without an entry`);
        return { acquired: true, holding: holdingOfEntry(result.entry, ledger) };
      }
      return { acquired: false, holder: holdingOfEntry(result.holder, ledger) };
    },
    release: async (holding, keepAsReleased, at, _signal, options) => {
      await ledgers.release(unitOfHolding(holding), holding.spec.claimRef.uid, keepAsReleased ? at : undefined, {
        coalesce: options?.background,
      });
    },
    releaseIfHeldBy: async (key, claimUID, keepAsReleased, at, options) => {
      const unit = heldUnitOfKey(key);
      if (unit) {
        await ledgers.release(unit, claimUID, keepAsReleased ? at : undefined, { coalesce: options?.background });
      }
    },
    releasing: (key, claimUID) => {
      const unit = heldUnitOfKey(key);
      return unit !== undefined && ledgers.isReleasing(unit, claimUID);
    },
    live: async (key, signal) => {
      const unit = heldUnitOfKey(key);
      if (!unit) return undefined;
      const found = await ledgers.liveLedgerEntry(ledgerNameOf(unit), key, signal);
      return found ? holdingOfEntry(found.entry, found.ledger) : undefined;
    },
    drop: async (holding) => {
      await ledgers.submit(ledgerNameOf(unitOfHolding(holding)), {
        kind: 'drop',
        observed: {
          key: holding.metadata.name,
          address: holding.spec.address,
          ...(holding.spec.prefix === undefined ? {} : { prefix: holding.spec.prefix }),
          poolRef: holding.spec.poolRef,
          claimRef: holding.spec.claimRef,
          heldSince: holding.metadata.creationTimestamp ?? '',
          ...(holding.spec.releasedAt === undefined ? {} : { releasedAt: holding.spec.releasedAt }),
        },
      });
    },
  };
}
