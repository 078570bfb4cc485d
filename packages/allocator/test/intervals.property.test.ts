import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Interval, IntervalSet } from '../src/interval-set.js';
import { IntervalTree } from '../src/interval-tree.js';
import { randomBelow } from '../src/random-below.js';

const UNIVERSE = 64n;
const value = fc.bigInt({ min: 0n, max: UNIVERSE - 1n });
const interval = fc
  .tuple(value, value)
  .map(([a, b]): Interval => (a <= b ? { first: a, last: b } : { first: b, last: a }));
const intervals = fc.array(interval, { maxLength: 6 });

function members(intervalList: Iterable<Interval>): bigint[] {
  const result: bigint[] = [];
  for (const { first, last } of intervalList) for (let v = first; v <= last; v += 1n) result.push(v);
  return result;
}

function modelOf(list: Interval[]): Set<bigint> {
  return new Set(members(list));
}

function sorted(values: Iterable<bigint>): bigint[] {
  return [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Normal form: sorted, and no two intervals touch or overlap. */
function isNormal(list: readonly Interval[]): boolean {
  return list.every((current, index) => {
    const previous = list[index - 1];
    return current.first <= current.last && (previous === undefined || previous.last + 1n < current.first);
  });
}

describe('IntervalSet against a Set model', () => {
  it('normalises, and union/intersect/subtract/contains/size agree with set algebra', () => {
    fc.assert(
      fc.property(intervals, intervals, value, (a, b, probe) => {
        const setA = IntervalSet.of(a);
        const setB = IntervalSet.of(b);
        const modelA = modelOf(a);
        const modelB = modelOf(b);
        expect(isNormal(setA.intervals)).toBe(true);
        expect(members(setA)).toEqual(sorted(modelA));
        expect(setA.size).toBe(BigInt(modelA.size));
        expect(setA.contains(probe)).toBe(modelA.has(probe));
        expect(members(setA.union(setB))).toEqual(sorted(new Set([...modelA, ...modelB])));
        expect(members(setA.intersect(setB))).toEqual(sorted([...modelA].filter((v) => modelB.has(v))));
        expect(members(setA.subtract(setB))).toEqual(sorted([...modelA].filter((v) => !modelB.has(v))));
        for (const result of [setA.union(setB), setA.intersect(setB), setA.subtract(setB)]) {
          expect(isNormal(result.intervals)).toBe(true);
        }
        expect([...setA.values()]).toEqual(sorted(modelA));
      }),
    );
  });

  it('containsInterval and overlaps agree with the model', () => {
    fc.assert(
      fc.property(intervals, interval, (a, probe) => {
        const set = IntervalSet.of(a);
        const model = modelOf(a);
        const probed = members([probe]);
        expect(set.containsInterval(probe.first, probe.last)).toBe(probed.every((v) => model.has(v)));
        expect(set.overlaps(probe.first, probe.last)).toBe(probed.some((v) => model.has(v)));
      }),
    );
  });
});

type TreeOp =
  | { kind: 'add'; value: bigint }
  | { kind: 'remove'; value: bigint }
  | { kind: 'takeMin' }
  | { kind: 'select'; offset: bigint }
  | { kind: 'takeAt'; offset: bigint };

const treeOp: fc.Arbitrary<TreeOp> = fc.oneof(
  value.map((v): TreeOp => ({ kind: 'add', value: v })),
  value.map((v): TreeOp => ({ kind: 'remove', value: v })),
  fc.constant<TreeOp>({ kind: 'takeMin' }),
  fc.bigInt({ min: 0n, max: UNIVERSE }).map((offset): TreeOp => ({ kind: 'select', offset })),
  fc.bigInt({ min: -1n, max: UNIVERSE }).map((offset): TreeOp => ({ kind: 'takeAt', offset })),
);

describe('IntervalTree against a Set model', () => {
  it('add/remove/takeMin/select/contains keep the tree equal to the model and normalised', () => {
    fc.assert(
      fc.property(intervals, fc.array(treeOp, { maxLength: 80 }), (initial, ops) => {
        const normal = IntervalSet.of(initial);
        const tree = IntervalTree.fromSorted(normal);
        const model = new Set(normal.values());
        for (const op of ops) {
          if (op.kind === 'add') {
            if (model.has(op.value)) {
              expect(() => tree.add(op.value)).toThrow(RangeError);
            } else {
              tree.add(op.value);
              model.add(op.value);
            }
          } else if (op.kind === 'remove') {
            expect(tree.remove(op.value)).toBe(model.delete(op.value));
          } else if (op.kind === 'takeMin') {
            const expected = sorted(model)[0];
            expect(tree.takeMin()).toBe(expected);
            if (expected !== undefined) model.delete(expected);
          } else if (op.kind === 'select') {
            expect(tree.select(op.offset)).toBe(sorted(model)[Number(op.offset)]);
          } else {
            const expected = op.offset < 0n ? undefined : sorted(model)[Number(op.offset)];
            expect(tree.takeAt(op.offset)).toBe(expected);
            if (expected !== undefined) model.delete(expected);
          }
          const treeIntervals = [...tree.intervals()];
          expect(isNormal(treeIntervals)).toBe(true);
          expect(members(treeIntervals)).toEqual(sorted(model));
          expect(tree.size).toBe(BigInt(model.size));
          expect(tree.intervalCount).toBe(treeIntervals.length);
          expect(tree.min).toBe(sorted(model)[0]);
        }
        for (let v = 0n; v < UNIVERSE; v += 1n) expect(tree.contains(v)).toBe(model.has(v));
      }),
    );
  });

  it('removes a whole sub-interval in one step, or refuses without change', () => {
    const tree = IntervalTree.fromSorted([
      { first: 0n, last: 9n },
      { first: 20n, last: 29n },
    ]);
    expect(tree.remove(3n, 5n)).toBe(true);
    expect(tree.remove(8n, 21n)).toBe(false);
    expect([...tree.intervals()]).toEqual([
      { first: 0n, last: 2n },
      { first: 6n, last: 9n },
      { first: 20n, last: 29n },
    ]);
  });

  it('rejects unsorted or overlapping input to fromSorted and merges adjacent input', () => {
    expect(() =>
      IntervalTree.fromSorted([
        { first: 5n, last: 9n },
        { first: 1n, last: 2n },
      ]),
    ).toThrow('intervals are not sorted and disjoint: 1 follows 9');
    const merged = IntervalTree.fromSorted([
      { first: 1n, last: 2n },
      { first: 3n, last: 4n },
    ]);
    expect([...merged.intervals()]).toEqual([{ first: 1n, last: 4n }]);
    expect(merged.intervalCount).toBe(1);
  });

  it('stays shallow enough for 100k intervals (no stack overflow when built and drained)', () => {
    const count = 100_000;
    const tree = IntervalTree.fromSorted(
      Array.from({ length: count }, (_, index) => ({ first: BigInt(index * 2), last: BigInt(index * 2) })),
    );
    expect(tree.size).toBe(BigInt(count));
    for (let index = 0; index < count; index += 2) tree.add(BigInt(index * 2 + 1));
    expect(tree.intervalCount).toBe(count / 2);
    let taken = 0;
    while (tree.takeMin() !== undefined) taken += 1;
    expect(taken).toBe(count + count / 2);
  });
});

describe('randomBelow', () => {
  const draw = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

  it('stays in [0, bound) for any bound and any draws, and grows with the draws', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 1n << 130n }), fc.infiniteStream(draw), draw, (bound, stream, constant) => {
        const iterator = stream[Symbol.iterator]();
        const value = randomBelow(bound, () => iterator.next().value as number);
        expect(value >= 0n && value < bound).toBe(true);
        expect(randomBelow(bound, () => 0)).toBe(0n);
        expect(randomBelow(bound, () => 1 - 2 ** -53)).toBe(bound - 1n);
        const low = randomBelow(bound, () => constant / 2);
        expect(low <= randomBelow(bound, () => constant)).toBe(true);
      }),
    );
  });

  it('rejects a non-positive bound and a source outside [0, 1)', () => {
    expect(() => randomBelow(0n, Math.random)).toThrow('randomBelow needs a positive bound, got 0');
    expect(() => randomBelow(10n, () => -0.1)).toThrow('random() must return a number in [0, 1)');
    expect(() => randomBelow(10n, () => Number.NaN)).toThrow('random() must return a number in [0, 1)');
  });
});
