import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fnv1a32, formatLabelValue, isValidLabelValue, labelValueMatches } from '../src/index.js';

/**
 * Outputs of CAPI v1.12.10's `format.MustFormatValue`, produced by running it (test/fixtures/capi-format/main.go
 * against the module cache): the port must give exactly these.
 */
const CAPI_OUTPUTS = JSON.parse(
  readFileSync(new URL('./fixtures/capi-format-values.json', import.meta.url), 'utf8'),
) as Record<string, string>;

const LABEL_VALUE_ALPHABET = 'abcXYZ019-_.';

describe('formatLabelValue (CAPI util/labels/format.MustFormatValue)', () => {
  it.each(Object.entries(CAPI_OUTPUTS))('%j → %j as CAPI computes it', (input, expected) => {
    expect(formatLabelValue(input)).toBe(expected);
  });

  it('matches the value in CAPI own unit test', () => {
    expect(formatLabelValue('machineSetName'.repeat(12))).toBe('hash_FR_ghQ_z');
  });

  it('FNV-1a 32 of known vectors', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  });

  it('keeps 63 characters, hashes 64', () => {
    expect(formatLabelValue('a'.repeat(63))).toBe('a'.repeat(63));
    expect(formatLabelValue('a'.repeat(64))).toMatch(/^hash_[A-Za-z0-9_-]{6}_z$/);
  });

  it('always returns a valid label value, and valid values unchanged', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (value) => {
        const formatted = formatLabelValue(value);
        expect(isValidLabelValue(formatted)).toBe(true);
        if (isValidLabelValue(value)) expect(formatted).toBe(value);
        else expect(formatted).toMatch(/^hash_[A-Za-z0-9_-]{6}_z$/);
        expect(labelValueMatches(value, formatted)).toBe(true);
        expect(formatLabelValue(formatted)).toBe(formatted);
      }),
    );
  });

  it('DNS-subdomain-like names up to 63 characters are kept, longer ones hashed', () => {
    const name = fc
      .array(fc.constantFrom(...LABEL_VALUE_ALPHABET.replace(/[-_.]/g, '')), { minLength: 1, maxLength: 120 })
      .map((characters) => characters.join(''));
    fc.assert(
      fc.property(name, (value) => {
        expect(formatLabelValue(value) === value).toBe(value.length <= 63);
      }),
    );
  });

  it('labelValueMatches refuses another name hash and the raw long name', () => {
    const long = 'x'.repeat(70);
    expect(labelValueMatches(long, long)).toBe(false);
    expect(labelValueMatches(long, formatLabelValue('y'.repeat(70)))).toBe(false);
  });
});
