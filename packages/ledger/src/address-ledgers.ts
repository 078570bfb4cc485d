// Over 300 lines on purpose: this is one class, the batching writer, whose per-ledger queues, coalescing timers and
// compare-and-swap loop share their state and read as one.
import type { AddressLedgerEntry, LedgerPoolReference } from '@tally-ipam/api-types';
import { ledgerStatus, TALLY_ADDRESS_LEDGER_KIND, TALLY_V1ALPHA1_API_VERSION } from '@tally-ipam/api-types';
import { type Client, isAlreadyExists, isConflict, isNewer, isNotFound, type Store } from '@tally-ipam/controller-kit';
import { applyOperations, type EntryHolder, type LedgerOperation, type OperationResult } from './ledger-entries.js';
import { type LedgerUnit, ledgerNameOf } from './ledger-name.js';
import { LEDGER_RESOURCE, type StoredLedger } from './resource.js';

/** A unit to hold: what the ledger name is computed from, plus the entry key (the old holding name). */
export interface HeldUnit extends LedgerUnit {
  readonly entryKey: string;
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
  /**
   * How long releases submitted with `coalesce` wait for more of their ledger before they are written (default
   * `RELEASE_COALESCE_MS`), plus a random part of up to twice that. 0 writes them at the end of the turn, as a hold.
   */
  readonly releaseCoalesceMs?: number | undefined;
}

/**
 * Releases of a deletion burst are written at most once every 1–3 s per ledger and process: nobody waits on them (the
 * deleting claim's finalizer comes off while its release is queued), so one compare-and-swap write carries every
 * release of its block that arrived meanwhile. The random part (up to twice this) spreads two active replicas releasing
 * the same claims: the later one usually finds them already released in its informer's copy and writes nothing.
 */
export const RELEASE_COALESCE_MS = 1_000;

export interface SubmitOptions {
  /**
   * Nobody waits on the answer soon (a release of a deleted claim, written in the background): wait up to
   * `releaseCoalesceMs` for more operations of the ledger before writing. An operation submitted without it flushes
   * the whole queue of its ledger at the end of the turn.
   */
  readonly coalesce?: boolean | undefined;
}

interface Queued {
  readonly operation: LedgerOperation;
  readonly coalesce: boolean;
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
  /** Ledgers whose coalescing timer runs. */
  private readonly waiting = new Map<string, NodeJS.Timeout>();
  /** Releases submitted and not yet answered, by `ledger/key/claim uid`. */
  private readonly releasing = new Map<string, number>();
  private writeCount = 0;
  private conflictCount = 0;

  constructor(private readonly options: AddressLedgersOptions) {}

  /** Ledger writes (creates, updates, deletes) sent so far, conflicts included. */
  get writes(): number {
    return this.writeCount;
  }

  /** Writes answered Conflict, AlreadyExists or NotFound (another writer was first), each followed by a read. */
  get conflicts(): number {
    return this.conflictCount;
  }

  /**
   * Takes `unit` for `holder` in the ledger of its block, recording `poolRef` as the pool it was allocated from (see
   * `decideHold` for what an existing entry means).
   */
  hold(
    unit: HeldUnit,
    poolRef: LedgerPoolReference,
    holder: EntryHolder,
    reuseGracePeriodMs: number,
  ): Promise<OperationResult> {
    return this.submit(ledgerNameOf(unit), {
      kind: 'hold',
      reuseGracePeriodMs,
      entry: {
        key: unit.entryKey,
        address: unit.address,
        ...(unit.isPrefix ? { prefix: unit.prefix } : {}),
        poolRef,
        claimRef: { namespace: holder.namespace, name: holder.name, uid: holder.uid },
      },
    });
  }

  /** Gives the claim's entry of `unit` back: kept with `releasedAt` when given, else removed. */
  release(unit: HeldUnit, claimUID: string, releasedAt?: Date, options: SubmitOptions = {}): Promise<OperationResult> {
    const ledgerName = ledgerNameOf(unit);
    const pendingKey = `${ledgerName}/${unit.entryKey}/${claimUID}`;
    this.releasing.set(pendingKey, (this.releasing.get(pendingKey) ?? 0) + 1);
    const settled = (): void => {
      const left = (this.releasing.get(pendingKey) ?? 1) - 1;
      if (left > 0) this.releasing.set(pendingKey, left);
      else this.releasing.delete(pendingKey);
    };
    const answer = this.submit(
      ledgerName,
      {
        kind: 'release',
        key: unit.entryKey,
        claimUID,
        ...(releasedAt ? { releasedAt: releasedAt.toISOString() } : {}),
      },
      options,
    );
    answer.then(settled, settled);
    return answer;
  }

  /** Whether a release of `unit` for `claimUID` was submitted and is not answered yet (no request). */
  isReleasing(unit: HeldUnit, claimUID: string): boolean {
    return this.releasing.has(`${ledgerNameOf(unit)}/${unit.entryKey}/${claimUID}`);
  }

  /** Queues one operation on a ledger; resolves once a write carrying it (or a decision needing none) succeeded. */
  submit(ledgerName: string, operation: LedgerOperation, options: SubmitOptions = {}): Promise<OperationResult> {
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(ledgerName);
      if (!queue) {
        queue = [];
        this.queues.set(ledgerName, queue);
      }
      queue.push({ operation, coalesce: options.coalesce === true, resolve, reject });
      if (!this.flushing.has(ledgerName)) this.schedule(ledgerName, queue);
    });
  }

  /**
   * Operations submitted together share a write: the flush is deferred to the end of this turn of the event loop, or,
   * when everything queued may wait, to the end of the coalescing window.
   */
  private schedule(ledgerName: string, queue: readonly Queued[]): void {
    const coalesceMs = this.options.releaseCoalesceMs ?? RELEASE_COALESCE_MS;
    if (coalesceMs > 0 && queue.every((queued) => queued.coalesce)) {
      if (this.waiting.has(ledgerName)) return;
      const timer = setTimeout(
        () => {
          this.waiting.delete(ledgerName);
          void this.flush(ledgerName);
        },
        coalesceMs + Math.floor(Math.random() * 2 * coalesceMs),
      );
      this.waiting.set(ledgerName, timer);
      return;
    }
    const timer = this.waiting.get(ledgerName);
    if (timer !== undefined) {
      clearTimeout(timer);
      this.waiting.delete(ledgerName);
    }
    setImmediate(() => void this.flush(ledgerName));
  }

  /**
   * Writes everything queued now, coalescing windows cut short, and resolves once nothing is queued or being written:
   * for a graceful stop, so that the releases of claims deleted in the last seconds are written by this process rather
   * than left in the ledgers until the orphan rule drops them. Bounded by the caller (the manager's shutdown deadline).
   */
  async flushPending(): Promise<void> {
    while (this.queues.size > 0 || this.flushing.size > 0) {
      for (const timer of this.waiting.values()) clearTimeout(timer);
      this.waiting.clear();
      const idle = [...this.queues.keys()].filter((name) => !this.flushing.has(name));
      // A ledger being written is flushed again by its own write's end if more arrived for it meanwhile.
      if (idle.length > 0) await Promise.all(idle.map((name) => this.flush(name)));
      else await new Promise((resolve) => setTimeout(resolve, 10));
    }
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
    const timer = this.waiting.get(ledgerName);
    if (timer !== undefined) {
      clearTimeout(timer);
      this.waiting.delete(ledgerName);
    }
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
      const queue = this.queues.get(ledgerName);
      if (queue !== undefined && queue.length > 0) this.schedule(ledgerName, queue);
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
            // The summary kubectl get shows, in the same write: never out of step with the entries, never read.
            status: ledgerStatus(applied.entries),
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
            status: ledgerStatus(applied.entries),
          });
          this.known.set(ledgerName, updated);
        }
        return applied.results;
      } catch (error) {
        // Someone else wrote the ledger since `base` (or created it, or deleted it): decide again on what it is now.
        if (!isConflict(error) && !isAlreadyExists(error) && !isNotFound(error)) throw error;
        this.conflictCount += 1;
        base = await this.read(ledgerName);
        confirmed = true;
      }
    }
    throw new Error(
      `TallyAddressLedger ${ledgerName}: ${attempts} writes in a row lost to other writers; the reconcile will retry`,
    );
  }
}
