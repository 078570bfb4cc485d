/**
 * The allocation engine shared by address pools and prefix pools. It hands out "units" — bigints drawn from an
 * allocatable IntervalSet: addresses for an address pool, /N block indices for a prefix pool. It knows nothing of
 * text, families or why a value is not allocatable; the pool adapters do.
 *
 * State, every part O(log n) to update:
 * - `fresh`: free units with no release time that still matters, as intervals (lowest-first and rank/select).
 * - `cooling`: released units inside the reuse grace period, ordered by (release time, unit).
 * - `ready`: (LeastRecentlyReleased only) released units past the grace period, ordered by (release time, unit),
 *   handed out after every fresh unit, oldest release first.
 * - `used`: allocated units.
 * Orderings by (time, unit) reuse IntervalTree with the composite key `time << 128 | unit`.
 */

import type { Interval, IntervalSet } from './interval-set.js';
import { IntervalTree } from './interval-tree.js';
import { randomBelow } from './random-below.js';

export type AllocationStrategy = 'LowestFree' | 'Random' | 'LeastRecentlyReleased';

export const ALLOCATION_STRATEGIES: readonly AllocationStrategy[] = ['LowestFree', 'Random', 'LeastRecentlyReleased'];

export interface AllocatorOptions {
  /** Default `LowestFree`, the reference provider's behaviour. */
  readonly strategy?: AllocationStrategy;
  /** A released value cannot be handed out again (except by an explicit override) until this long after release. */
  readonly reuseGracePeriodMs?: number;
  /** Milliseconds since the epoch (or any monotonic origin shared with the release times); default `Date.now`. */
  readonly clock?: () => number;
  /** Uniform in [0, 1), like `Math.random` (the default); used by the Random strategy only. */
  readonly random?: () => number;
}

export interface UnitCounts {
  readonly total: bigint;
  readonly usedInRange: bigint;
  readonly coolingDown: bigint;
  readonly free: bigint;
}

export type TakeResult = { ok: true; unit: bigint } | { ok: false; coolingDown: bigint; nextAvailableAtMs?: number };

export type TakeSpecificResult =
  | { ok: true }
  | { ok: false; reason: 'taken' }
  | { ok: false; reason: 'in-grace-period'; availableAtMs: number };

const KEY_SHIFT = 128n;
const UNIT_MASK = (1n << KEY_SHIFT) - 1n;

export function checkTimestamp(value: number, what: string): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${what} must be a non-negative integer number of milliseconds, got ${value}`);
  }
  return value;
}

/** Sorts ascending and drops duplicates. */
export function sortUnique(values: readonly bigint[]): bigint[] {
  const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return sorted.filter((value, index) => index === 0 || value !== sorted[index - 1]);
}

/** allocatable minus sorted, distinct points, as sorted intervals, in one pass. */
function* withoutPoints(
  allocatable: Iterable<Interval>,
  points: readonly bigint[],
): Generator<Interval, void, undefined> {
  let index = 0;
  for (const { first, last } of allocatable) {
    let next = first;
    while (index < points.length && points[index]! < first) index += 1;
    while (index < points.length && points[index]! <= last) {
      const point = points[index]!;
      if (point > next) yield { first: next, last: point - 1n };
      next = point + 1n;
      index += 1;
    }
    if (next <= last) yield { first: next, last };
  }
}

export interface InitialUnits {
  readonly used: readonly bigint[];
  readonly released: readonly { readonly unit: bigint; readonly releasedAtMs: number }[];
}

export class UnitEngine {
  readonly strategy: AllocationStrategy;
  readonly reuseGracePeriodMs: number;
  private readonly clock: () => number;
  private readonly random: () => number;
  private fresh: IntervalTree;
  /** Units marked used whose removal from `fresh` is deferred, so a rebuild one by one costs one sort, not U descents. */
  private pendingUsed: bigint[] = [];
  private readonly cooling: IntervalTree;
  private readonly ready: IntervalTree;
  private readonly releasedAt = new Map<bigint, number>();
  private readonly used: Set<bigint>;

  /** Builds in O(U log U) from units known to be allocatable; used wins over released for the same unit. */
  constructor(
    readonly allocatable: IntervalSet,
    options: AllocatorOptions = {},
    initial: InitialUnits = { used: [], released: [] },
  ) {
    this.strategy = options.strategy ?? 'LowestFree';
    if (!ALLOCATION_STRATEGIES.includes(this.strategy)) {
      throw new RangeError(`unknown allocation strategy ${JSON.stringify(this.strategy)}`);
    }
    this.reuseGracePeriodMs = checkTimestamp(options.reuseGracePeriodMs ?? 0, 'reuseGracePeriodMs');
    this.clock = options.clock ?? Date.now;
    this.random = options.random ?? Math.random;

    const used = sortUnique(initial.used);
    this.used = new Set(used);
    const latestRelease = new Map<bigint, number>();
    for (const { unit, releasedAtMs } of initial.released) {
      checkTimestamp(releasedAtMs, `release time of ${unit}`);
      if (this.used.has(unit)) continue;
      const known = latestRelease.get(unit);
      if (known === undefined || releasedAtMs > known) latestRelease.set(unit, releasedAtMs);
    }
    const unavailable = latestRelease.size === 0 ? used : sortUnique([...used, ...latestRelease.keys()]);
    this.fresh = IntervalTree.fromSorted(withoutPoints(allocatable, unavailable));
    const keys = sortUnique([...latestRelease].map(([unit, at]) => (BigInt(at) << KEY_SHIFT) | unit));
    this.cooling = IntervalTree.fromSorted(keys.map((key) => ({ first: key, last: key })));
    this.ready = new IntervalTree();
    for (const [unit, at] of latestRelease) this.releasedAt.set(unit, at);
    this.drainCooled();
  }

  /** The injected clock's time, checked. */
  currentTimeMs(): number {
    return checkTimestamp(this.clock(), 'clock()');
  }

  /**
   * Removes deferred used units from `fresh`: one by one when few, or in one linear pass that rebuilds the tree when
   * they are many compared with its intervals (a rebuild), so either way the cost is O(P log P) amortised.
   */
  private flushPendingUsed(): void {
    if (this.pendingUsed.length === 0) return;
    const pending = sortUnique(this.pendingUsed);
    this.pendingUsed = [];
    const expectedSize = this.fresh.size - BigInt(pending.length);
    if (pending.length * 8 >= this.fresh.intervalCount) {
      this.fresh = IntervalTree.fromSorted(withoutPoints(this.fresh.intervals(), pending));
    } else {
      for (const unit of pending) this.fresh.remove(unit);
    }
    // Every allocatable unit is exactly one of used, fresh, cooling or ready; a miss here is a bug, not bad input.
    if (this.fresh.size !== expectedSize) throw new Error('internal error: a unit marked used was not free');
  }

  /** Brings the state up to date (deferred marks, expired grace periods); every state-reading operation calls it. */
  private drainCooled(): void {
    this.flushPendingUsed();
    const now = this.currentTimeMs();
    for (;;) {
      const key = this.cooling.min;
      if (key === undefined || Number(key >> KEY_SHIFT) + this.reuseGracePeriodMs > now) return;
      this.cooling.remove(key);
      const unit = key & UNIT_MASK;
      if (this.strategy === 'LeastRecentlyReleased') {
        this.ready.add(key);
      } else {
        this.releasedAt.delete(unit);
        this.fresh.add(unit);
      }
    }
  }

  /** Removes a released unit from whichever queue holds it. */
  private forgetRelease(unit: bigint): void {
    const at = this.releasedAt.get(unit);
    if (at === undefined) return;
    const key = (BigInt(at) << KEY_SHIFT) | unit;
    if (!this.cooling.remove(key)) this.ready.remove(key);
    this.releasedAt.delete(unit);
  }

  isUsed(unit: bigint): boolean {
    return this.used.has(unit);
  }

  usedUnits(): IterableIterator<bigint> {
    return this.used.values();
  }

  take(): TakeResult {
    this.drainCooled();
    let unit: bigint | undefined;
    if (this.strategy === 'Random') {
      const size = this.fresh.size;
      if (size > 0n) unit = this.fresh.takeAt(randomBelow(size, this.random));
    } else {
      unit = this.fresh.takeMin();
    }
    if (unit === undefined && this.strategy === 'LeastRecentlyReleased') {
      const key = this.ready.takeMin();
      if (key !== undefined) {
        unit = key & UNIT_MASK;
        this.releasedAt.delete(unit);
      }
    }
    if (unit === undefined) {
      const nextKey = this.cooling.min;
      const coolingDown = this.cooling.size;
      if (nextKey === undefined) return { ok: false, coolingDown };
      return { ok: false, coolingDown, nextAvailableAtMs: Number(nextKey >> KEY_SHIFT) + this.reuseGracePeriodMs };
    }
    this.used.add(unit);
    return { ok: true, unit };
  }

  /** Takes a specific allocatable unit. */
  takeSpecific(unit: bigint, ignoreGracePeriod = false): TakeSpecificResult {
    this.drainCooled();
    if (this.used.has(unit)) return { ok: false, reason: 'taken' };
    const at = this.releasedAt.get(unit);
    if (at !== undefined) {
      const key = (BigInt(at) << KEY_SHIFT) | unit;
      if (this.cooling.contains(key) && !ignoreGracePeriod) {
        return { ok: false, reason: 'in-grace-period', availableAtMs: at + this.reuseGracePeriodMs };
      }
      this.forgetRelease(unit);
    } else if (!this.fresh.remove(unit)) {
      throw new RangeError(`unit ${unit} is not allocatable`);
    }
    this.used.add(unit);
    return { ok: true };
  }

  /** Records an existing allocation (rebuild); returns false if it was already recorded. */
  markUsed(unit: bigint): boolean {
    if (this.used.has(unit)) return false;
    if (this.releasedAt.has(unit)) this.forgetRelease(unit);
    else this.pendingUsed.push(unit);
    this.used.add(unit);
    return true;
  }

  /** Frees a used unit as of `releasedAtMs`; returns false (and changes nothing) if it was not used. */
  release(unit: bigint, releasedAtMs: number): boolean {
    checkTimestamp(releasedAtMs, 'releasedAtMs');
    if (!this.used.delete(unit)) return false;
    this.enqueueRelease(unit, releasedAtMs);
    return true;
  }

  /**
   * Records when a free unit was last released (rebuild), so the grace period and LeastRecentlyReleased order
   * survive a restart. Returns false (and changes nothing) for a used unit; a later time replaces an earlier one.
   */
  markReleased(unit: bigint, releasedAtMs: number): boolean {
    checkTimestamp(releasedAtMs, 'releasedAtMs');
    if (this.used.has(unit)) return false;
    const known = this.releasedAt.get(unit);
    if (known !== undefined) {
      if (known >= releasedAtMs) return true;
      this.forgetRelease(unit);
    } else if (!this.fresh.remove(unit)) {
      throw new RangeError(`unit ${unit} is not allocatable`);
    }
    this.enqueueRelease(unit, releasedAtMs);
    return true;
  }

  private enqueueRelease(unit: bigint, releasedAtMs: number): void {
    this.releasedAt.set(unit, releasedAtMs);
    this.cooling.add((BigInt(releasedAtMs) << KEY_SHIFT) | unit);
    this.drainCooled();
  }

  /** When a cooling unit becomes available again, or undefined if it is not cooling. */
  availableAtMs(unit: bigint): number | undefined {
    this.drainCooled();
    const at = this.releasedAt.get(unit);
    if (at === undefined || !this.cooling.contains((BigInt(at) << KEY_SHIFT) | unit)) return undefined;
    return at + this.reuseGracePeriodMs;
  }

  counts(): UnitCounts {
    this.drainCooled();
    const total = this.allocatable.size;
    const usedInRange = BigInt(this.used.size);
    const coolingDown = this.cooling.size;
    return { total, usedInRange, coolingDown, free: total - usedInRange - coolingDown };
  }

  /** Free units right now, by where they sit; for invariant checks. */
  freeBreakdown(): { fresh: bigint; ready: bigint } {
    this.drainCooled();
    return { fresh: this.fresh.size, ready: this.ready.size };
  }
}
