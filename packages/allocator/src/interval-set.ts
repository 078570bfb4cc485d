/**
 * An immutable set of bigints stored as sorted, disjoint, non-adjacent inclusive intervals.
 *
 * Pools are described by a handful of entries, so these sets stay small (tens of intervals) even when they
 * cover 2^64 addresses; every operation is linear in the number of intervals, never in the number of values.
 */

export interface Interval {
  readonly first: bigint;
  readonly last: bigint;
}

function compareIntervals(a: Interval, b: Interval): number {
  if (a.first !== b.first) return a.first < b.first ? -1 : 1;
  if (a.last === b.last) return 0;
  return a.last < b.last ? -1 : 1;
}

// Math.max/min throw on bigints.
function greater(a: bigint, b: bigint): bigint {
  if (a > b) return a;
  return b;
}

function lesser(a: bigint, b: bigint): bigint {
  if (a < b) return a;
  return b;
}

export class IntervalSet implements Iterable<Interval> {
  static readonly EMPTY: IntervalSet = new IntervalSet([]);

  /** Normalises any intervals (unsorted, overlapping, adjacent) into a set. */
  static of(intervals: Iterable<Interval>): IntervalSet {
    const sorted = [...intervals].sort(compareIntervals);
    const merged: Interval[] = [];
    for (const interval of sorted) {
      if (interval.first > interval.last) {
        throw new RangeError(`interval ${interval.first}-${interval.last} has first > last`);
      }
      const previous = merged.at(-1);
      if (previous !== undefined && interval.first <= previous.last + 1n) {
        if (interval.last > previous.last) merged[merged.length - 1] = { first: previous.first, last: interval.last };
      } else {
        merged.push({ first: interval.first, last: interval.last });
      }
    }
    return new IntervalSet(merged);
  }

  static range(first: bigint, last: bigint): IntervalSet {
    return IntervalSet.of([{ first, last }]);
  }

  static values(values: Iterable<bigint>): IntervalSet {
    return IntervalSet.of([...values].map((value) => ({ first: value, last: value })));
  }

  private constructor(private readonly list: readonly Interval[]) {}

  get intervalCount(): number {
    return this.list.length;
  }

  get isEmpty(): boolean {
    return this.list.length === 0;
  }

  /** The number of values in the set. */
  get size(): bigint {
    let total = 0n;
    for (const { first, last } of this.list) total += last - first + 1n;
    return total;
  }

  get min(): bigint | undefined {
    return this.list[0]?.first;
  }

  get max(): bigint | undefined {
    return this.list.at(-1)?.last;
  }

  [Symbol.iterator](): Iterator<Interval> {
    return this.list[Symbol.iterator]();
  }

  get intervals(): readonly Interval[] {
    return this.list;
  }

  /** Every value, lowest first, lazily; callers must bound this themselves (a /64 has 2^64 values). */
  *values(): Generator<bigint, void, undefined> {
    for (const { first, last } of this.list) {
      for (let value = first; value <= last; value += 1n) yield value;
    }
  }

  /** Index of the interval with the greatest `first` ≤ value, or -1. */
  private floorIndex(value: bigint): number {
    let low = 0;
    let high = this.list.length - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const interval = this.list[middle]!;
      if (interval.first <= value) {
        found = middle;
        low = middle + 1;
      } else {
        high = middle - 1;
      }
    }
    return found;
  }

  contains(value: bigint): boolean {
    const index = this.floorIndex(value);
    return index >= 0 && this.list[index]!.last >= value;
  }

  /** True when every value of [first, last] is in the set. */
  containsInterval(first: bigint, last: bigint): boolean {
    const index = this.floorIndex(first);
    return index >= 0 && this.list[index]!.last >= last;
  }

  /** True when some value of [first, last] is in the set. */
  overlaps(first: bigint, last: bigint): boolean {
    const index = this.floorIndex(last);
    return index >= 0 && this.list[index]!.last >= first;
  }

  union(other: IntervalSet): IntervalSet {
    return IntervalSet.of([...this.list, ...other.list]);
  }

  intersect(other: IntervalSet): IntervalSet {
    const result: Interval[] = [];
    let i = 0;
    let j = 0;
    while (i < this.list.length && j < other.list.length) {
      const a = this.list[i]!;
      const b = other.list[j]!;
      const first = greater(a.first, b.first);
      const last = lesser(a.last, b.last);
      if (first <= last) result.push({ first, last });
      if (a.last < b.last) i += 1;
      else j += 1;
    }
    return new IntervalSet(result);
  }

  subtract(other: IntervalSet): IntervalSet {
    const result: Interval[] = [];
    let j = 0;
    for (const interval of this.list) {
      let first = interval.first;
      while (j < other.list.length && other.list[j]!.last < first) j += 1;
      let k = j;
      while (k < other.list.length && other.list[k]!.first <= interval.last) {
        const cut = other.list[k]!;
        if (cut.first > first) result.push({ first, last: cut.first - 1n });
        first = cut.last + 1n;
        if (first > interval.last) break;
        k += 1;
      }
      if (first <= interval.last) result.push({ first, last: interval.last });
    }
    return new IntervalSet(result);
  }

  equals(other: IntervalSet): boolean {
    return (
      this.list.length === other.list.length &&
      this.list.every((interval, index) => compareIntervals(interval, other.list[index]!) === 0)
    );
  }

  toString(): string {
    return `{${this.list.map(({ first, last }) => (first === last ? `${first}` : `${first}-${last}`)).join(', ')}}`;
  }
}
