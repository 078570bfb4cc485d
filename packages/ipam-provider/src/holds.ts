import { type Cache, type Client, isConflict, isNotFound } from '@tally-ipam/controller-kit';
import type { AddressLedgers, HeldUnit } from './ledger/address-ledgers.js';
import { entryAsLock } from './ledger/entry-view.js';
import { ledgerNameOf } from './ledger/ledger-name.js';
import { parseLockName } from './lock-name.js';
import { type AcquireResult, acquireLock, type LockHolder, releaseLock } from './locks.js';
import type { PoolRef } from './pool-ref.js';
import { LOCK_RESOURCE, type StoredLock } from './resources.js';

/**
 * Where the API server decides who holds an address: one TallyAddressLock per address (`lockHolds`), or entries of
 * per-block TallyAddressLedgers (`ledgerHolds`). Either way a holding is seen as a `StoredLock` (a ledger entry through
 * `entryAsLock`), so the claim steps, the pool states and the garbage collector do not depend on which.
 */
export interface AddressHolds {
  /** Takes `unit` for `holder` (the lock rules: ours again, stale name or cooled release taken over, else refused). */
  acquire(
    unit: HeldUnit,
    pool: PoolRef,
    holder: LockHolder,
    reuseGracePeriodMs: number,
    signal: AbortSignal,
  ): Promise<AcquireResult>;
  /**
   * Gives a holding back: kept with `releasedAt` (`keepAsReleased`), else removed; only if it is still this one.
   * `background`: the caller will not wait for it (see `backgroundReleases`), so it may be batched with later releases.
   */
  release(
    lock: StoredLock,
    keepAsReleased: boolean,
    now: Date,
    signal: AbortSignal,
    options?: ReleaseOptions,
  ): Promise<void>;
  /** The holding of a key as the API server has it now. */
  live(key: string, signal: AbortSignal): Promise<StoredLock | undefined>;
  /** Removes exactly this holding (garbage collection): nothing if it changed since it was read. */
  drop(lock: StoredLock, signal: AbortSignal): Promise<void>;
  /**
   * Gives back the holding of `key` if, and only if, the API server shows it held for `claimUID` — decided inside the
   * write, so the caller needs no read first. Absent where a release needs the holding's own identity (locks).
   */
  releaseIfHeldBy?(
    key: string,
    claimUID: string,
    keepAsReleased: boolean,
    now: Date,
    options?: ReleaseOptions,
  ): Promise<void>;
  /**
   * Whether a deleted claim's releases may be left to finish after its finalizer is removed: true for ledgers, whose
   * releases of one block are then written together (an entry left by a crash meanwhile is an orphan, which the garbage
   * collector drops); false for locks, released one by one before the finalizer goes.
   */
  readonly backgroundReleases: boolean;
  /** Whether this process has a release of `key` for `claimUID` queued or in flight (ledgers; no request). */
  releasing(key: string, claimUID: string): boolean;
}

export interface ReleaseOptions {
  /** Nobody waits on this release: it may wait for others of its ledger to share their write (`RELEASE_COALESCE_MS`). */
  readonly background?: boolean | undefined;
}

export function lockHolds(client: Client, cache: Cache, now: () => number): AddressHolds {
  return {
    acquire: (unit, pool, holder, reuseGracePeriodMs, signal) =>
      acquireLock(unit, pool, holder, { client, cache, now, reuseGracePeriodMs, signal }),
    release: (lock, keepAsReleased, at, signal) => releaseLock(lock, keepAsReleased, client, at, signal),
    backgroundReleases: false,
    releasing: () => false,
    live: (key, signal) => cache.liveGet(LOCK_RESOURCE, { name: key }, signal),
    drop: async (lock, signal) => {
      try {
        await client.delete(
          LOCK_RESOURCE,
          { name: lock.metadata.name },
          { preconditions: { uid: lock.metadata.uid, resourceVersion: lock.metadata.resourceVersion }, signal },
        );
      } catch (error) {
        if (!isNotFound(error) && !isConflict(error)) throw error;
      }
    },
  };
}

function unitOfLock(lock: StoredLock): HeldUnit {
  const isPrefix = lock.spec.prefix !== undefined;
  return { address: lock.spec.address, prefix: lock.spec.prefix ?? 0, isPrefix, lockName: lock.metadata.name };
}

/** The unit an entry key (a lock name) stands for; undefined for a name no address has. */
export function heldUnitOfKey(key: string): HeldUnit | undefined {
  const value = parseLockName(key);
  if (!value) return undefined;
  const isPrefix = value.kind === 'prefix';
  return { address: value.address, prefix: isPrefix ? value.prefixLength : 0, isPrefix, lockName: key };
}

export function ledgerHolds(ledgers: AddressLedgers): AddressHolds {
  return {
    acquire: async (unit, pool, holder, reuseGracePeriodMs) => {
      const result = await ledgers.hold(unit, pool, holder, reuseGracePeriodMs);
      const ledger = ledgers.ledger(ledgerNameOf(unit));
      if (!ledger) throw new Error(`TallyAddressLedger ${ledgerNameOf(unit)} vanished right after its write`);
      if (result.ok) {
        if (!result.entry) throw new Error(`ledger hold of ${unit.lockName} answered without an entry`);
        return { acquired: true, lock: entryAsLock(result.entry, ledger) };
      }
      return { acquired: false, holder: entryAsLock(result.holder, ledger) };
    },
    release: async (lock, keepAsReleased, at, _signal, options) => {
      await ledgers.release(unitOfLock(lock), lock.spec.claimRef.uid, keepAsReleased ? at : undefined, {
        coalesce: options?.background,
      });
    },
    releaseIfHeldBy: async (key, claimUID, keepAsReleased, at, options) => {
      const unit = heldUnitOfKey(key);
      if (unit) {
        await ledgers.release(unit, claimUID, keepAsReleased ? at : undefined, { coalesce: options?.background });
      }
    },
    backgroundReleases: true,
    releasing: (key, claimUID) => {
      const unit = heldUnitOfKey(key);
      return unit !== undefined && ledgers.isReleasing(unit, claimUID);
    },
    live: async (key, signal) => {
      const unit = heldUnitOfKey(key);
      if (!unit) return undefined;
      const found = await ledgers.liveLedgerEntry(ledgerNameOf(unit), key, signal);
      return found ? entryAsLock(found.entry, found.ledger) : undefined;
    },
    drop: async (lock) => {
      await ledgers.submit(ledgerNameOf(unitOfLock(lock)), {
        kind: 'drop',
        observed: {
          key: lock.metadata.name,
          address: lock.spec.address,
          ...(lock.spec.prefix === undefined ? {} : { prefix: lock.spec.prefix }),
          poolRef: lock.spec.poolRef,
          claimRef: lock.spec.claimRef,
          heldSince: lock.metadata.creationTimestamp ?? '',
          ...(lock.spec.releasedAt === undefined ? {} : { releasedAt: lock.spec.releasedAt }),
        },
      });
    },
  };
}
