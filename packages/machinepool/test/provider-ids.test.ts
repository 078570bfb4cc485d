import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareCodePoints, normalizeProviderIDList, ProviderIDListError, providerIDListsEqual } from '../src/index.js';

const providerID = fc.oneof(
  fc.string({ minLength: 0, maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 10 }),
  fc.nat(50).map((index) => `sample://ns/worker-${index}`),
);

describe('normalizeProviderIDList (InfraMachinePool: providerIDList)', () => {
  it('is sorted, unique and holds exactly the non-empty inputs', () => {
    fc.assert(
      fc.property(fc.array(fc.option(providerID, { nil: undefined }), { maxLength: 60 }), (ids) => {
        const list = normalizeProviderIDList(ids);
        const expected = new Set(ids.filter((id): id is string => id !== undefined && id !== ''));
        expect(new Set(list)).toEqual(expected);
        expect(list.length).toBe(expected.size);
        for (let index = 1; index < list.length; index++) {
          expect(compareCodePoints(list[index - 1] ?? '', list[index] ?? '')).toBeLessThan(0);
        }
      }),
    );
  });

  it('does not depend on the input order and is idempotent', () => {
    fc.assert(
      fc.property(
        fc
          .array(providerID, { maxLength: 40 })
          .chain((ids) =>
            fc.tuple(fc.constant(ids), fc.shuffledSubarray(ids, { minLength: ids.length, maxLength: ids.length })),
          ),
        ([ids, shuffled]) => {
          const list = normalizeProviderIDList(ids);
          expect(normalizeProviderIDList(shuffled)).toEqual(list);
          expect(normalizeProviderIDList(list)).toEqual(list);
        },
      ),
    );
  });

  it('orders like Go sort.Strings (UTF-8 bytes), not by UTF-16 code units', () => {
    // U+FF5E (3 UTF-8 bytes, one UTF-16 unit 0xFF5E) sorts before U+1F680 (4 bytes, surrogates 0xD83D…) in Go.
    expect(normalizeProviderIDList(['id-🚀', 'id-～'])).toEqual(['id-～', 'id-🚀']);
    expect(['id-🚀', 'id-～'].sort()).toEqual(['id-🚀', 'id-～']);
  });

  it('refuses an ID over 512 characters and more than 10 000 IDs, naming the limit', () => {
    expect(() => normalizeProviderIDList(['x'.repeat(513)])).toThrow(ProviderIDListError);
    expect(() => normalizeProviderIDList(['x'.repeat(513)])).toThrow(/513 characters long.*at most 512/);
    expect(normalizeProviderIDList(['x'.repeat(512)])).toHaveLength(1);
    const many = Array.from({ length: 10_001 }, (_, index) => `id-${index}`);
    expect(() => normalizeProviderIDList(many)).toThrow(/10001 provider IDs exceed .* 10000/);
    expect(normalizeProviderIDList(many.slice(1))).toHaveLength(10_000);
  });
});

describe('providerIDListsEqual (CAPI compares with reflect.DeepEqual)', () => {
  it('is order-sensitive and tells an absent list from an empty one', () => {
    expect(providerIDListsEqual(['a', 'b'], ['a', 'b'])).toBe(true);
    expect(providerIDListsEqual(['a', 'b'], ['b', 'a'])).toBe(false);
    expect(providerIDListsEqual(undefined, undefined)).toBe(true);
    expect(providerIDListsEqual(undefined, [])).toBe(false);
    expect(providerIDListsEqual([], [])).toBe(true);
  });
});
