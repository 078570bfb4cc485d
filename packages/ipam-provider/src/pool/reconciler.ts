import { toStatusCount } from '@tally-ipam/allocator';
import {
  DELETE_FOR_MOVE_ANNOTATION,
  POOL_DELETING_REASON,
  POOL_EXHAUSTED_REASON,
  POOL_INVALID_SPEC_REASON,
  POOL_READY_CONDITION,
  POOL_READY_REASON,
} from '@tally-ipam/api-types';
import {
  addFinalizer,
  type Cache,
  type ConditionInput,
  hasFinalizer,
  isNotFound,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
  removeFinalizer,
  type SharedInformer,
} from '@tally-ipam/controller-kit';
import type { AllocationEvents } from '../allocation-events.js';
import { EVENT_ADDRESSES_ALLOCATED } from '../constants.js';
import { POOL_INDEX } from '../indexes.js';
import type { ProviderMetrics } from '../metrics.js';
import { pauseReason, poolClusterName } from '../pause.js';
import { finalizersOf, isInClusterPoolKind, type ServedPoolKind } from '../pool-kinds.js';
import { describePool, type PoolRef, poolKey, poolRefOfAddress } from '../pool-ref.js';
import type { PoolStates } from '../pool-states.js';
import {
  ADDRESS_RESOURCE,
  type HoldingSource,
  POOL_RESOURCES,
  type StoredAddress,
  type StoredCluster,
  type StoredPool,
} from '../resources.js';
import { inClusterPoolCounts } from './in-cluster-counts.js';
import { type CountsField, PoolStatusWrites, type PoolStatusWritesDeps } from './status-writes.js';

export interface PoolReconcilerDeps extends PoolStatusWritesDeps {
  readonly cache: Cache;
  readonly pools: (ref: PoolRef) => StoredPool | undefined;
  readonly holdings: HoldingSource;
  /** The IPAddresses in the provider's scope: an in-cluster pool's counts are its IPAddresses, counted the reference's way. */
  readonly addresses: Pick<SharedInformer<StoredAddress>, 'store'>;
  readonly clusters: SharedInformer<StoredCluster>;
  readonly states: PoolStates;
  readonly metrics: ProviderMetrics;
  readonly allocationEvents: AllocationEvents;
  /** Restricts the IPAddress list of a deleting global pool (all namespaces unless the provider is namespaced). */
  readonly namespace?: string | undefined;
}

/**
 * Reconciles one pool kind (namespaced or global): the finalizer that keeps a pool with allocations, the status
 * counts from the allocation state (never from a previous status), and the `Ready` condition with observedGeneration.
 *
 * IPAddress and holding events re-queue the pool (not while a write is deferred: see `statusWriteDeferred`), so in a
 * burst of allocations the counts change with every claim.
 * A write that changes only the counts (and the condition's message, which quotes them) is coalesced: at most one per
 * pool every `POOL_STATUS_COALESCE_MS`, the last one deferred until then — so a burst of 2,000 allocations costs a few
 * status writes, and the status still ends exact. Everything else (a new condition status or reason, a new
 * generation, the counts metrics) is written at once. Counts-only writes of all pools of the process also share
 * `PoolStatusBudget` (two per second), so many pools allocating at once do not each write every interval. When a
 * write is made is `PoolStatusWrites`' (status-writes.ts); what the status says is decided here.
 */
export class PoolReconciler implements Reconciler {
  private readonly statusWrites: PoolStatusWrites;

  constructor(
    private readonly kind: ServedPoolKind,
    countsField: CountsField,
    private readonly deps: PoolReconcilerDeps,
  ) {
    this.statusWrites = new PoolStatusWrites(kind, countsField, deps);
  }

  /**
   * True while a reconcile of the pool has deferred its status write and is queued to run when it is due: until then
   * another reconcile could only compute the same deferral, so the IPAddress and ledger events of a burst need not
   * queue the pool (each did, costing one reconcile per event for a status written every `POOL_STATUS_COALESCE_MS`).
   * The deferred reconcile reads the allocation state as it is then, so what those events changed is in its write.
   */
  statusWriteDeferred(ref: PoolRef): boolean {
    return this.statusWrites.isDeferred(ref);
  }

  async reconcile(request: Request, context: ReconcileContext): Promise<Result> {
    const { deps } = this;
    const ref: PoolRef = request.namespace
      ? { kind: this.kind, name: request.name, namespace: request.namespace }
      : { kind: this.kind, name: request.name };
    this.statusWrites.reconciling(ref);
    let pool = deps.pools(ref);
    if (!pool) {
      deps.states.forget(ref);
      deps.allocationEvents.forget(ref);
      this.statusWrites.forget(ref);
      this.clearMetrics(ref);
      return {};
    }
    const paused = pauseReason(pool, poolClusterName(pool), (ns, name) => deps.clusters.store.get(`${ns}/${name}`));
    if (paused) {
      context.logger.info({ reason: paused }, 'pool reconciliation paused');
      return {};
    }
    const resource = POOL_RESOURCES[this.kind];
    const finalizer = finalizersOf(this.kind).pool;
    if (pool.metadata.deletionTimestamp !== undefined) return this.reconcileDelete(pool, ref, context);
    if (!hasFinalizer(pool, finalizer)) {
      try {
        pool = await addFinalizer(deps.client, resource, pool, finalizer, { signal: context.signal });
      } catch (error) {
        // Deleted before it had our finalizer: nothing to protect (not an error anyone must act on).
        if (isNotFound(error)) return {};
        throw error;
      }
      deps.assumePool(pool);
    }

    const lookup = deps.states.lookup(ref);
    if (!lookup) return {};
    if (isInClusterPoolKind(this.kind)) return this.reconcileInClusterStatus(ref, pool, lookup, context);
    if (lookup.status === 'invalid') {
      const dueInMs = await this.statusWrites.write(
        ref,
        pool,
        undefined,
        {
          type: POOL_READY_CONDITION,
          status: 'False',
          reason: POOL_INVALID_SPEC_REASON,
          message: `the spec cannot be used, fix it: ${lookup.message}`,
          observedGeneration: pool.metadata.generation ?? 0,
        },
        context,
      );
      return requeueFor(dueInMs);
    }
    const counts = lookup.state.counts();
    const status = {
      total: toStatusCount(counts.total),
      used: toStatusCount(counts.used),
      free: toStatusCount(counts.free),
      outOfRange: toStatusCount(counts.outOfRange),
    };
    this.setMetrics(ref, status);
    const unit = lookup.state.allocation.isPrefixPool ? 'prefixes' : 'addresses';
    const outOfRange =
      counts.outOfRange > 0n
        ? `; ${counts.outOfRange} allocated ${unit} are outside the current spec (they stay until their claims go)`
        : '';
    const condition: ConditionInput =
      counts.free > 0n
        ? {
            type: POOL_READY_CONDITION,
            status: 'True',
            reason: POOL_READY_REASON,
            message: `${counts.free} of ${counts.total} ${unit} free${outOfRange}`,
            observedGeneration: pool.metadata.generation ?? 0,
          }
        : {
            type: POOL_READY_CONDITION,
            status: 'False',
            reason: POOL_EXHAUSTED_REASON,
            message:
              `all ${counts.total} ${unit} are allocated or in their reuse grace period${outOfRange}: ` +
              `add ${unit} to the pool or delete claims`,
            observedGeneration: pool.metadata.generation ?? 0,
          };
    const dueInMs = await this.statusWrites.write(ref, pool, status, condition, context);
    const summaryDueInMs = this.recordAllocationSummary(ref, pool);
    const next = Math.min(dueInMs ?? Number.POSITIVE_INFINITY, summaryDueInMs ?? Number.POSITIVE_INFINITY);
    return Number.isFinite(next) ? { requeueAfterMs: next } : {};
  }

  /** An in-cluster pool's status as the reference writes it (`inClusterPoolCounts`), and nothing else. */
  private async reconcileInClusterStatus(
    ref: PoolRef,
    pool: StoredPool,
    lookup: NonNullable<ReturnType<PoolStates['lookup']>>,
    context: ReconcileContext,
  ): Promise<Result> {
    const counts = inClusterPoolCounts(ref, lookup, this.deps.addresses, context.logger);
    if (!counts) return {};
    this.setMetrics(ref, counts);
    return requeueFor(await this.statusWrites.writeCountsOnly(ref, pool, counts, context));
  }

  /**
   * One Event on the pool for the allocations whose AddressAllocated Event on the claim was rate-limited (see
   * `AllocationEvents`); returns when the next one is due if one is pending.
   */
  private recordAllocationSummary(ref: PoolRef, pool: StoredPool): number | undefined {
    const summary = this.deps.allocationEvents.takeSummary(ref);
    if (summary.count > 0) {
      void this.deps.recorder.normal(
        pool,
        EVENT_ADDRESSES_ALLOCATED,
        'Allocate',
        `${summary.count} more addresses allocated from ${describePool(ref)}; their AddressAllocated Events on the ` +
          "claims were rate-limited (each claim's Ready condition names its address)",
      );
    }
    return summary.dueInMs;
  }

  /** A deleting pool keeps its finalizer while any IPAddress or held holding still refers to it. */
  private async reconcileDelete(pool: StoredPool, ref: PoolRef, context: ReconcileContext): Promise<Result> {
    const { deps } = this;
    const finalizer = finalizersOf(this.kind).pool;
    if (!hasFinalizer(pool, finalizer)) return {};
    // A live list, not the cache: the finalizer is the last guard, and a lagging cache must not let it go early.
    const listed = await deps.client.listAll(ADDRESS_RESOURCE, {
      namespace: ref.namespace ?? deps.namespace,
      signal: context.signal,
    });
    const inUse = listed.items.filter((address) => {
      const addressRef = poolRefOfAddress(address);
      return addressRef !== undefined && poolKey(addressRef) === poolKey(ref);
    });
    const held = deps.holdings.store
      .byIndex(POOL_INDEX, poolKey(ref))
      .filter((holding) => holding.spec.releasedAt === undefined);
    if (inUse.length > 0 || held.length > 0) {
      // The in-cluster kinds have no conditions: the finalizer stays, and the IPAddress and ledger events of the
      // releases re-queue the pool.
      if (isInClusterPoolKind(this.kind)) return {};
      const names = inUse
        .slice(0, 5)
        .map((address) => `${address.metadata.namespace}/${address.metadata.name}`)
        .join(', ');
      const used = `${inUse.length} ${inUse.length === 1 ? 'IPAddress' : 'IPAddresses'} (${names || 'being created'})`;
      // clusterctl move deletes the source pool once it exists on the target and then removes the finalizers itself;
      // what still uses it here belongs to claims that did not move, which the delete webhook's Event names.
      const forMove = pool.metadata.annotations?.[DELETE_FOR_MOVE_ANNOTATION] !== undefined;
      const dueInMs = await this.statusWrites.write(
        ref,
        pool,
        undefined,
        {
          type: POOL_READY_CONDITION,
          status: 'False',
          reason: POOL_DELETING_REASON,
          message: forMove
            ? `${describePool(ref)} is being deleted by clusterctl move, which removes its finalizer; ${used} here ` +
              'belong to claims that did not move and lose their pool on this cluster'
            : `${describePool(ref)} is being deleted but ${used} still use it: delete their IPAddressClaims to let ` +
              'the pool go',
          observedGeneration: pool.metadata.generation ?? 0,
        },
        context,
        { event: !forMove },
      );
      return requeueFor(dueInMs);
    }
    await removeFinalizer(deps.client, POOL_RESOURCES[this.kind], pool, finalizer, { signal: context.signal });
    deps.states.forget(ref);
    this.clearMetrics(ref);
    context.logger.info('pool has no allocations left, finalizer removed');
    return {};
  }

  private setMetrics(ref: PoolRef, counts: Record<string, number>): void {
    const labels = { kind: ref.kind, namespace: ref.namespace ?? '', name: ref.name };
    this.deps.metrics.poolAddresses.set({ ...labels, state: 'total' }, counts.total ?? 0);
    this.deps.metrics.poolAddresses.set({ ...labels, state: 'used' }, counts.used ?? 0);
    this.deps.metrics.poolAddresses.set({ ...labels, state: 'free' }, counts.free ?? 0);
    this.deps.metrics.poolAddresses.set({ ...labels, state: 'out_of_range' }, counts.outOfRange ?? 0);
  }

  private clearMetrics(ref: PoolRef): void {
    const labels = { kind: ref.kind, namespace: ref.namespace ?? '', name: ref.name };
    for (const state of ['total', 'used', 'free', 'out_of_range']) {
      this.deps.metrics.poolAddresses.remove({ ...labels, state });
    }
  }
}

/** A deferred status write (`writeStatus` returned when it is due) re-queues the pool for then. */
function requeueFor(dueInMs: number | undefined): Result {
  return dueInMs === undefined ? {} : { requeueAfterMs: dueInMs };
}

/**
 * The reconciler of `TallyIPPool` (namespaced) and `GlobalTallyIPPool` (cluster-scoped): counts single addresses
 * into `status.ipAddresses`, like the reference provider's pools.
 */
export function newIPPoolReconciler(kind: ServedPoolKind, deps: PoolReconcilerDeps): PoolReconciler {
  return new PoolReconciler(kind, 'ipAddresses', deps);
}
