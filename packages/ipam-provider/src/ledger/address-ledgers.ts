import type { AddressLedgerEntry } from '@tally-ipam/api-types';
import { TALLY_ADDRESS_LEDGER_KIND, TALLY_V1ALPHA1_API_VERSION } from '@tally-ipam/api-types';
import { type Client, isAlreadyExists, isConflict, isNotFound, type Store } from '@tally-ipam/controller-kit';
import { isNewer } from '../assumed-objects.js';
import { type PoolRef, tallyPoolReference } from '../pool-ref.js';
import { LEDGER_RESOURCE, type StoredLedger } from '../resources.js';
import { applyOperations, type EntryHolder, type LedgerOperation, type OperationResult } from './ledger-entries.js';
import { type LedgerUnit, ledgerNameOf } from './ledger-name.js';

/** A unit to hold: what the ledger name is computed from, plus the entry key (the old lock name). */
export interface HeldUnit extends LedgerUnit {
  readonly lockName: string;
}

export interface AddressLedgersOptions {
  readonly client: Client;
  /**
   * The ledger informer's store, when the process runs one: the copy a write starts from, so the burst path reads
   * nothing before it writes. Without it, the first write of a ledger this process has not seen costs one read.
   */
  readonly store?: Pick<Store<StoredLedger>, 'get'> | undefined;
  readonly now: () => number;
  /** Attempts of one batch against writers racing on the same ledger before its operations fail. Default 16. */
  readonly maxAttempts?: number | undefined;
}

interface Queued {
  readonly operation: LedgerOperation;
  readonly resolve: (result: OperationResult) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * The writer of TallyAddressLedgers. Operations on one ledger are queued and written together: while one write of a
 * ledger is in flight, everything that arrives for it waits and goes into the next write — one API request for as
 * many claims as are in flight on the block. Each write is a create (the ledger does not exist yet: AlreadyExists if
 * it does) or an update carrying the resourceVersion the entries were computed from (Conflict if anyone wrote in
 * between); on either the ledger is read again and the batch decided again, so the API server, not this process,
 * decides every race. A ledger left without entries is deleted with uid and resourceVersion preconditions.
 */
export class AddressLedgers {
  private readonly queues = new Map<string, Queued[]>();
  private readonly flushing = new Set<string>();
  /** The latest copy this process wrote or read of each ledger; null when it saw it deleted. */
  private readonly known = new Map<string, StoredLedger | null>();
  private writeCount = 0;

  constructor(private readonly options: AddressLedgersOptions) {}

  /** Ledger writes (creates, updates, deletes) sent so far, conflicts included. */
  get writes(): number {
    return this.writeCount;
  }

  /** Takes `unit` for `holder` in the ledger of its block (see `decideHold` for what an existing entry means). */
  hold(unit: HeldUnit, pool: PoolRef, holder: EntryHolder, reuseGracePeriodMs: number): Promise<OperationResult> {
    return this.submit(ledgerNameOf(unit), {
      kind: 'hold',
      reuseGracePeriodMs,
      entry: {
        key: unit.lockName,
        address: unit.address,
        ...(unit.isPrefix ? { prefix: unit.prefix } : {}),
        poolRef: tallyPoolReference(pool),
        claimRef: { namespace: holder.namespace, name: holder.name, uid: holder.uid },
      },
    });
  }

  /** Gives the claim's entry of `unit` back: kept with `releasedAt` when given, else removed. */
  release(unit: HeldUnit, claimUID: string, releasedAt?: Date): Promise<OperationResult> {
    return this.submit(ledgerNameOf(unit), {
      kind: 'release',
      key: unit.lockName,
      claimUID,
      ...(releasedAt ? { releasedAt: releasedAt.toISOString() } : {}),
    });
  }

  /** Queues one operation on a ledger; resolves once a write carrying it (or a decision needing none) succeeded. */
  submit(ledgerName: string, operation: LedgerOperation): Promise<OperationResult> {
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(ledgerName);
      if (!queue) {
        queue = [];
        this.queues.set(ledgerName, queue);
      }
      queue.push({ operation, resolve, reject });
      // Deferred to the end of this turn of the event loop, so operations submitted together share the write.
      if (!this.flushing.has(ledgerName)) setImmediate(() => void this.flush(ledgerName));
    });
  }

  /** The entry of `key` in the newest copy of the ledger this process has (no request). */
  cachedEntry(ledgerName: string, key: string): AddressLedgerEntry | undefined {
    return this.current(ledgerName)?.spec.entries?.find((entry) => entry.key === key);
  }

  /** The newest copy of a ledger this process has (its informer's or its own last write's); no request. */
  ledger(ledgerName: string): StoredLedger | undefined {
    return this.current(ledgerName);
  }

  /** The entry of `key` as the API server has it now, with the ledger read. */
  async liveLedgerEntry(
    ledgerName: string,
    key: string,
    signal?: AbortSignal,
  ): Promise<{ readonly ledger: StoredLedger; readonly entry: AddressLedgerEntry } | undefined> {
    const live = await this.read(ledgerName, signal);
    const entry = live?.spec.entries?.find((candidate) => candidate.key === key);
    return live && entry ? { ledger: live, entry } : undefined;
  }

  /** The entry of `key` as the API server has it now. */
  async liveEntry(ledgerName: string, key: string, signal?: AbortSignal): Promise<AddressLedgerEntry | undefined> {
    const live = await this.read(ledgerName, signal);
    return live?.spec.entries?.find((entry) => entry.key === key);
  }

  private current(ledgerName: string): StoredLedger | undefined {
    const cached = this.options.store?.get(ledgerName);
    const known = this.known.get(ledgerName);
    if (known === undefined) return cached;
    if (known === null) return cached;
    return cached !== undefined && isNewer(cached, known) ? cached : known;
  }

  private async read(ledgerName: string, signal?: AbortSignal): Promise<StoredLedger | undefined> {
    try {
      const live = await this.options.client.get(LEDGER_RESOURCE, { name: ledgerName }, { signal });
      this.known.set(ledgerName, live);
      return live;
    } catch (error) {
      if (!isNotFound(error)) throw error;
      this.known.set(ledgerName, null);
      return undefined;
    }
  }

  private async flush(ledgerName: string): Promise<void> {
    if (this.flushing.has(ledgerName)) return;
    const batch = this.queues.get(ledgerName)?.splice(0) ?? [];
    if (batch.length === 0) return;
    this.flushing.add(ledgerName);
    try {
      const results = await this.write(
        ledgerName,
        batch.map((queued) => queued.operation),
      );
      for (const [index, queued] of batch.entries()) queued.resolve(results[index] as OperationResult);
    } catch (error) {
      for (const queued of batch) queued.reject(error);
    } finally {
      this.flushing.delete(ledgerName);
      if ((this.queues.get(ledgerName)?.length ?? 0) > 0) setImmediate(() => void this.flush(ledgerName));
      else this.queues.delete(ledgerName);
    }
  }

  private async write(ledgerName: string, operations: readonly LedgerOperation[]): Promise<OperationResult[]> {
    const { client } = this.options;
    const attempts = this.options.maxAttempts ?? 16;
    let base = this.current(ledgerName);
    let confirmed = false;
    for (let attempt = 0; attempt < attempts; attempt += 1) {
      const applied = applyOperations(base?.spec.entries ?? [], operations, this.options.now());
      if (!applied.changed) {
        // Nothing to write is only as good as the copy it was decided on: one the API server has not just confirmed
        // (a write based on it succeeding, or a read) may be behind a release, a takeover or an entry this process
        // never saw, so it is read once more before a refusal or an "already yours" is answered. A batch of releases
        // and drops only is answered at once: one that finds nothing to remove on a stale copy can only leave an
        // entry whose claim is gone, which the garbage collector drops (the orphan bound), never a double holding.
        if (confirmed || operations.every((operation) => operation.kind === 'release' || operation.kind === 'drop')) {
          return applied.results;
        }
        base = await this.read(ledgerName);
        confirmed = true;
        continue;
      }
      this.writeCount += 1;
      try {
        if (base === undefined) {
          if (applied.entries.length === 0) return applied.results;
          const created = await client.create(LEDGER_RESOURCE, {
            apiVersion: TALLY_V1ALPHA1_API_VERSION,
            kind: TALLY_ADDRESS_LEDGER_KIND,
            metadata: { name: ledgerName },
            spec: { entries: applied.entries },
          });
          this.known.set(ledgerName, created);
        } else if (applied.entries.length === 0) {
          await client.delete(
            LEDGER_RESOURCE,
            { name: ledgerName },
            { preconditions: { uid: base.metadata.uid, resourceVersion: base.metadata.resourceVersion } },
          );
          this.known.set(ledgerName, null);
        } else {
          const updated = await client.update(LEDGER_RESOURCE, {
            ...base,
            spec: { entries: applied.entries },
          });
          this.known.set(ledgerName, updated);
        }
        return applied.results;
      } catch (error) {
        // Someone else wrote the ledger since `base` (or created it, or deleted it): decide again on what it is now.
        if (!isConflict(error) && !isAlreadyExists(error) && !isNotFound(error)) throw error;
        base = await this.read(ledgerName);
        confirmed = true;
      }
    }
    throw new Error(
      `TallyAddressLedger ${ledgerName}: ${attempts} writes in a row lost to other writers; the reconcile will retry`,
    );
  }
}
