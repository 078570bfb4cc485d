import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  clipText,
  clipUtf8,
  describeJSON,
  ELLIPSIS,
  MAX_OBJECT_VALUES,
  parseTallyIPPool,
  parseTallyPrefixPool,
} from '../src/index.js';

const ipPool = (spec: Record<string, unknown>) => ({
  apiVersion: 'ipam.cluster.x-k8s.io/v1alpha1',
  kind: 'TallyIPPool',
  metadata: { name: 'p', namespace: 'n' },
  spec: { addresses: ['10.0.0.1-10.0.0.5'], prefix: 24, ...spec },
});

describe('numbers are range-checked before the cross-field rules use them', () => {
  it.each([-(2 ** 30), -(2 ** 31), -1e9, 2 ** 53, 1e300, 1.5])(
    'prefix %d is refused by its own check, naming the field and the value',
    (prefix) => {
      const result = parseTallyIPPool(ipPool({ prefix }));
      expect(result.success).toBe(false);
      if (result.success) return;
      expect(result.error.issues.map((issue) => issue.path)).toEqual(result.error.issues.map(() => 'spec.prefix'));
      expect(result.error.message).toContain(`(value: ${JSON.stringify(prefix)})`);
    },
  );

  it.each([-(2 ** 31), 0, 129, 2 ** 53, 0.5])('allocationPrefixLength %d is refused by its own check', (length) => {
    const result = parseTallyPrefixPool({
      apiVersion: 'ipam.cluster.x-k8s.io/v1alpha1',
      kind: 'TallyPrefixPool',
      metadata: { name: 'p', namespace: 'n' },
      spec: { prefixes: ['10.0.0.0/16'], allocationPrefixLength: length },
    });
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(new Set(result.error.issues.map((issue) => issue.path))).toEqual(new Set(['spec.allocationPrefixLength']));
  });

  it('a list far longer than allowed is reported once, by its length check', () => {
    const result = parseTallyIPPool(
      ipPool({ reservations: Array.from({ length: 20_000 }, () => ({ claimName: 'a', address: '10.0.0.1' })) }),
    );
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(result.error.issues.map((issue) => issue.path)).toEqual(['spec.reservations']);
  });

  it('a parse error lists at most ten problems and cuts every value', () => {
    const result = parseTallyIPPool(ipPool({ addresses: Array.from({ length: 100 }, () => 'x'.repeat(100_000)) }));
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(result.error.message).toContain('and 90 more');
    expect(result.error.message.length).toBeLessThan(10 * 450);
  });
});

describe('clipText', () => {
  it('keeps short text, cuts long text to the limit with an ellipsis, never splitting a surrogate pair', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.integer({ min: 1, max: 200 }), (text, max) => {
        const clipped = clipText(text, max);
        expect(clipped.length).toBeLessThanOrEqual(max);
        if (text.length <= max) expect(clipped).toBe(text);
        else {
          expect(clipped.endsWith(ELLIPSIS)).toBe(true);
          expect(text.startsWith(clipped.slice(0, -ELLIPSIS.length))).toBe(true);
          expect(Buffer.from(clipped, 'utf8').toString('utf8')).toBe(clipped);
        }
      }),
    );
  });
});

describe('clipUtf8', () => {
  it('fits the byte limit, keeps as much as fits, and marks the cut', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 400 }), fc.integer({ min: 4, max: 300 }), (text, max) => {
        const clipped = clipUtf8(text, max);
        const bytes = Buffer.byteLength(clipped, 'utf8');
        expect(bytes).toBeLessThanOrEqual(max);
        if (Buffer.byteLength(text, 'utf8') <= max) expect(clipped).toBe(text);
        else {
          expect(clipped.endsWith(ELLIPSIS)).toBe(true);
          // As much as fits is kept: at most one more character (4 bytes) would have fit next to the ellipsis.
          expect(bytes).toBeGreaterThan(max - 4 - Buffer.byteLength(ELLIPSIS, 'utf8'));
        }
      }),
    );
  });
});

describe('describeJSON', () => {
  it('is JSON.stringify for short values and a bounded prefix of it for long ones', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 4, max: 300 }), (value, max) => {
        const full = JSON.stringify(value);
        const described = describeJSON(value, max);
        expect(described.length).toBeLessThanOrEqual(max);
        if (full.length <= max) expect(described).toBe(full);
        else expect(full.startsWith(described.slice(0, -ELLIPSIS.length))).toBe(true);
      }),
    );
  });

  it('stays short and does not overflow on values nested a hundred thousand levels deep', () => {
    let deep: unknown = 'x';
    for (let level = 0; level < 100_000; level += 1) deep = [deep];
    expect(describeJSON(deep, 80).length).toBeLessThanOrEqual(80);
  });
});

describe('objects with more values than any real one holds', () => {
  it('are refused before zod looks at them, naming the field where the count passed the limit', () => {
    const ownerReferences = Array.from({ length: 100_000 }, () => '10.0.0.1');
    const result = parseTallyIPPool({ ...ipPool({}), metadata: { name: 'p', namespace: 'n', ownerReferences } });
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(result.error.issues.map((issue) => issue.path)).toEqual(['metadata.ownerReferences']);
    expect(result.error.message).toContain(`more than ${MAX_OBJECT_VALUES} values`);
  });

  it('are walked without recursion, however deep', () => {
    let deep: unknown = 'x';
    for (let level = 0; level < 100_000; level += 1) deep = { a: deep };
    const result = parseTallyIPPool(ipPool({ gateway: deep }));
    expect(result.success).toBe(false);
  });
});
