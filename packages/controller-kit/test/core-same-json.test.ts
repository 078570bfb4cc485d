import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sameJSON } from '../src/cache/same-json.js';

/** The JSON text of a value with every object's keys sorted: equal texts are what `sameJSON` answers for. */
function sortedText(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}

/** The same value with every object's keys in reverse order, as another writer might order them. */
function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([key, inner]) => [key, reordered(inner)]),
  );
}

describe('sameJSON', () => {
  it('holds between a value and the same value with its keys in another order', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(sameJSON(value, reordered(value))).toBe(true);
      }),
    );
  });

  it('answers as the key-sorted JSON texts compare, for any two values', () => {
    const nearValues = fc
      .jsonValue({ maxDepth: 2 })
      .chain((value) =>
        fc.tuple(fc.constant(value), fc.oneof(fc.constant(reordered(value)), fc.jsonValue({ maxDepth: 2 }))),
      );
    fc.assert(
      fc.property(nearValues, ([a, b]) => {
        expect(sameJSON(a, b)).toBe(sortedText(a) === sortedText(b));
      }),
    );
  });

  it('skips properties that are undefined, as JSON does, and tells arrays from objects', () => {
    expect(sameJSON({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameJSON({ a: 1 }, { a: 1, b: null })).toBe(false);
    expect(sameJSON([1, 2], { 0: 1, 1: 2 })).toBe(false);
    expect(sameJSON([{ a: 1, b: 2 }], [{ b: 2, a: 1 }])).toBe(true);
    expect(sameJSON([1, 2], [2, 1])).toBe(false);
    expect(sameJSON(undefined, undefined)).toBe(true);
    expect(sameJSON({ total: 10, used: 2 }, undefined)).toBe(false);
  });
});
