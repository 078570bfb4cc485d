import { clipText, clipUtf8, POOL_READY_CONDITION } from '@tally-ipam/api-types';
import {
  type Client,
  type Condition,
  type ConditionInput,
  type EventRecorder,
  getCondition,
  isNotFound,
  type ReconcileContext,
  sameJSON,
  setCondition,
} from '@tally-ipam/controller-kit';
import * as z from 'zod';
import { MAX_CONDITION_MESSAGE_LENGTH, POOL_STATUS_COALESCE_MS } from '../constants.js';
import type { ServedPoolKind } from '../pool-kinds.js';
import { type PoolRef, poolKey } from '../pool-ref.js';
import { POOL_RESOURCES, type StoredPool } from '../resources.js';
import type { PoolStatusBudget } from './status-budget.js';

/** Where the counts go in the pool's status: `ipAddresses` for IP pools, `prefixes` for prefix pools. */
export type CountsField = 'ipAddresses' | 'prefixes';

export interface PoolStatusWritesDeps {
  readonly client: Client;
  readonly recorder: EventRecorder;
  /** Remembers a pool this process just wrote (the assume cache), so the next reconcile does not write a stale one. */
  readonly assumePool: (pool: StoredPool) => void;
  readonly now: () => number;
  /** Counts-only status writes shared by every pool of the process (`status-budget.ts`); none: no shared limit. */
  readonly statusBudget?: PoolStatusBudget | undefined;
}

const StatusView = z.looseObject({ conditions: z.array(z.looseObject({})).optional() }).optional();

/**
 * The status writes of one pool kind, and when each is made. A write that changes only the counts (and the condition's
 * message, which quotes them) is coalesced: at most one per pool every `POOL_STATUS_COALESCE_MS`, the last one deferred
 * until then, and counts-only writes of all pools of the process also share `PoolStatusBudget`. Everything else (a new
 * condition status or reason, a new generation) is written at once.
 */
export class PoolStatusWrites {
  /** Pool key → when this process last wrote the pool's status. */
  private readonly writtenAt = new Map<string, number>();
  /** Pools whose last reconcile deferred a status write and re-queued itself for it (see `isDeferred`). */
  private readonly deferred = new Set<string>();

  constructor(
    private readonly kind: ServedPoolKind,
    private readonly countsField: CountsField,
    private readonly deps: PoolStatusWritesDeps,
  ) {}

  /** True while a reconcile of the pool has deferred its status write and is queued to run when it is due. */
  isDeferred(ref: PoolRef): boolean {
    return this.deferred.has(poolKey(ref));
  }

  /** A reconcile of the pool runs: whatever it decides replaces an earlier deferral. */
  reconciling(ref: PoolRef): void {
    this.deferred.delete(poolKey(ref));
  }

  /** The pool is gone: its last write time and its slot of the shared budget with it. */
  forget(ref: PoolRef): void {
    this.writtenAt.delete(poolKey(ref));
    this.deps.statusBudget?.forget(poolKey(ref));
  }

  /**
   * The in-cluster provider's pool kinds: `status.ipAddresses` and nothing else (their status has no conditions and
   * no observedGeneration), unless current. Every change is a counts-only change, coalesced and budgeted as Tally's
   * counts-only writes are; returns in how many ms a deferred write is due.
   */
  async writeCountsOnly(
    ref: PoolRef,
    pool: StoredPool,
    counts: Record<string, number>,
    context: ReconcileContext,
  ): Promise<number | undefined> {
    const current = z.looseObject({}).optional().safeParse(pool.status);
    const currentCounts = current.success ? current.data?.[this.countsField] : undefined;
    const key = poolKey(ref);
    const writtenAt = this.writtenAt.get(key);
    const now = performance.now();
    if (sameJSON(currentCounts, counts)) {
      if (writtenAt === undefined || now - writtenAt >= POOL_STATUS_COALESCE_MS) return undefined;
      this.deferred.add(key);
      return writtenAt + POOL_STATUS_COALESCE_MS - now;
    }
    if (writtenAt !== undefined && now - writtenAt < POOL_STATUS_COALESCE_MS) {
      this.deferred.add(key);
      return writtenAt + POOL_STATUS_COALESCE_MS - now;
    }
    const slotInMs = this.deps.statusBudget?.take(key, now) ?? 0;
    if (slotInMs > 0) {
      this.deferred.add(key);
      return slotInMs;
    }
    this.writtenAt.set(key, now);
    try {
      const written = await this.deps.client.patchStatus(
        POOL_RESOURCES[this.kind],
        pool,
        { [this.countsField]: counts },
        { signal: context.signal },
      );
      this.deps.assumePool(written);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    return undefined;
  }

  /** Writes the status unless it is current; returns in how many ms a coalesced (deferred) write is due. */
  async write(
    ref: PoolRef,
    pool: StoredPool,
    counts: Record<string, number> | undefined,
    condition: ConditionInput,
    context: ReconcileContext,
    options: { readonly event?: boolean } = {},
  ): Promise<number | undefined> {
    const current = StatusView.safeParse(pool.status);
    const currentStatus = (current.success ? current.data : undefined) as
      | (Record<string, unknown> & { conditions?: Condition[] })
      | undefined;
    const conditions = currentStatus?.conditions ?? [];
    const previous = getCondition(conditions, POOL_READY_CONDITION);
    const sameCondition =
      previous !== undefined &&
      previous.status === condition.status &&
      previous.reason === condition.reason &&
      previous.message === (condition.message ?? '') &&
      previous.observedGeneration === condition.observedGeneration;
    const generation = pool.metadata.generation ?? 0;
    const sameCounts = counts === undefined || sameJSON(currentStatus?.[this.countsField], counts);
    const sameGeneration = currentStatus?.observedGeneration === generation;
    const key = poolKey(ref);
    const writtenAt = this.writtenAt.get(key);
    // A scheduling interval, measured on the monotonic clock (`deps.now` is the clock of conditions and may be fixed).
    const now = performance.now();
    if (sameCondition && sameCounts && sameGeneration) {
      // Current. Right after a write, the events of the allocations it counted are still coming: stay deferred until
      // the interval ends (one reconcile then) instead of being queued once per event.
      if (writtenAt === undefined || now - writtenAt >= POOL_STATUS_COALESCE_MS) return undefined;
      this.deferred.add(key);
      return writtenAt + POOL_STATUS_COALESCE_MS - now;
    }
    const countsOnly =
      sameGeneration &&
      previous !== undefined &&
      previous.status === condition.status &&
      previous.reason === condition.reason &&
      previous.observedGeneration === condition.observedGeneration;
    if (countsOnly && writtenAt !== undefined && now - writtenAt < POOL_STATUS_COALESCE_MS) {
      // Every caller returns this as the reconcile's requeueAfter.
      this.deferred.add(key);
      return writtenAt + POOL_STATUS_COALESCE_MS - now;
    }
    if (countsOnly) {
      const slotInMs = this.deps.statusBudget?.take(key, now) ?? 0;
      if (slotInMs > 0) {
        this.deferred.add(key);
        return slotInMs;
      }
    } else this.deps.statusBudget?.forget(key);
    const event = options.event ?? true;
    if (event && !sameCondition && condition.status === 'False' && condition.reason !== previous?.reason) {
      void this.deps.recorder.warning(pool, condition.reason, 'Reconcile', clipUtf8(condition.message ?? '', 1024));
    }
    const bounded = { ...condition, message: clipText(condition.message ?? '', MAX_CONDITION_MESSAGE_LENGTH) };
    const status: Record<string, unknown> = {
      conditions: setCondition(conditions, bounded, new Date(this.deps.now())),
      observedGeneration: generation,
    };
    if (counts) status[this.countsField] = counts;
    this.writtenAt.set(key, now);
    try {
      const written = await this.deps.client.patchStatus(POOL_RESOURCES[this.kind], pool, status, {
        signal: context.signal,
      });
      this.deps.assumePool(written);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    return undefined;
  }
}
