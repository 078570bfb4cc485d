import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clipText, clipUtf8, ELLIPSIS, parseTallyIPPool, parseTallyPrefixPool } from '../src/index.js';

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
