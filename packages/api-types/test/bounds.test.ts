import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  clipText,
  clipUtf8,
  describeJSON,
  ELLIPSIS,
  MAX_IP_LENGTH,
  parseMetal3IPPool,
  parseTallyIPPool,
  parseTallyPrefixPool,
} from '../src/index.js';
import { METAL3_MAX_CLAIM_NAME_LENGTH } from '../src/metal3/v1alpha1/constants.js';
import { MAX_OBJECT_VALUES } from '../src/parse.js';
import { MAX_ENTRY_LENGTH } from '../src/tally/v1alpha1/constants.js';
import { codePointLength } from '../src/text/clip.js';
import { metal3Pool } from './fixtures/metal3.js';

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

/**
 * The API server counts a string's `maxLength` and CEL's `size()` in code points; JavaScript's `length` counts UTF-16
 * code units, two for an astral character such as an emoji. Text near each limit with astral characters in it must
 * be judged by zod as by the API server: refused at its field, never accepted unchecked.
 */
describe('lengths are counted in code points, as the API server counts them', () => {
  const astral = fc.integer({ min: 0x1_0000, max: 0x10_ffff }).map((point) => String.fromCodePoint(point));
  const ipCharacter = fc.constantFrom(...'0123456789abcdef.:-/'.split(''));
  const character = fc.oneof({ weight: 3, arbitrary: ipCharacter }, { weight: 1, arbitrary: astral });
  const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit));

  /** `min` to `max` characters (code points), at least one of them astral. */
  const astralText = (min: number, max: number): fc.Arbitrary<string> =>
    fc
      .tuple(fc.array(character, { minLength: min - 1, maxLength: max - 1 }), astral, fc.nat())
      .map(([characters, one, at]) => {
        const all = [...characters];
        all.splice(at % (all.length + 1), 0, one);
        return all.join('');
      });

  it('codePointLength counts what the string iterator yields, a lone surrogate as one', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.oneof(character, loneSurrogate), maxLength: 120 }), (text) => {
        expect(codePointLength(text)).toBe(Array.from(text).length);
      }),
      { numRuns: 1_000 },
    );
  });

  it('a reservation address near the limit with astral characters is refused at its field, by the right check', () => {
    fc.assert(
      fc.property(astralText(MAX_IP_LENGTH - 5, MAX_IP_LENGTH + 5), (address) => {
        const result = parseTallyIPPool(ipPool({ reservations: [{ claimName: 'cp-0', address }] }));
        expect(result.success).toBe(false);
        if (result.success) return;
        const issue = result.error.issues.find((candidate) => candidate.path === 'spec.reservations[0].address');
        expect(issue, result.error.message).toBeDefined();
        // Over the limit the API server answers "Too long"; within it, its CEL isIP rule refuses the value.
        if (codePointLength(address) > MAX_IP_LENGTH) expect(issue?.message).toMatch(/^Too big/);
        else expect(issue?.message.startsWith(`"${address}" is not an IP address: `)).toBe(true);
        expect(issue?.value).toBe(address);
      }),
      { numRuns: 500 },
    );
  });

  it('an address entry near the limit with astral characters is refused at its field', () => {
    fc.assert(
      fc.property(astralText(MAX_ENTRY_LENGTH - 5, MAX_ENTRY_LENGTH + 5), (entry) => {
        const result = parseTallyIPPool(ipPool({ addresses: [entry] }));
        expect(result.success).toBe(false);
        if (result.success) return;
        expect(result.error.issues.map((issue) => issue.path)).toContain('spec.addresses[0]');
      }),
      { numRuns: 300 },
    );
  });

  it('a Metal3 pre-allocation claim name is accepted up to the limit in characters, whatever their UTF-16 length', () => {
    const metal3 = (claim: string) =>
      metal3Pool('p', {
        namePrefix: 'p',
        pools: [{ start: '10.0.0.10', end: '10.0.0.50', subnet: '10.0.0.0/24' }],
        preAllocations: { [claim]: '10.0.0.11' },
      });
    fc.assert(
      fc.property(astralText(METAL3_MAX_CLAIM_NAME_LENGTH - 5, METAL3_MAX_CLAIM_NAME_LENGTH + 5), (claim) => {
        const result = parseMetal3IPPool(metal3(claim));
        if (codePointLength(claim) <= METAL3_MAX_CLAIM_NAME_LENGTH) {
          expect(result.success ? undefined : result.error.message).toBeUndefined();
          return;
        }
        expect(result.success).toBe(false);
        if (result.success) return;
        expect(result.error.issues.every((issue) => issue.path.startsWith('spec.preAllocations'))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
