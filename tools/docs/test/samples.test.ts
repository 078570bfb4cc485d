import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { guidePages, REPOSITORY_ROOT } from './support/guide.js';

/**
 * The shipped pool samples are the guide's examples, not copies of them: each file appears, byte for byte, inside a
 * ```yaml block of the guide, which examples.test.ts applies and follows to the state the guide shows.
 */
const SAMPLES_DIR = join(REPOSITORY_ROOT, 'packages/api-types/samples');

describe('packages/api-types/samples in the guide', () => {
  const samples = readdirSync(SAMPLES_DIR).filter((name) => name.endsWith('.yaml'));
  const blocks = guidePages().flatMap((page) =>
    page.blocks.filter((block) => block.lang === 'yaml' && !block.flags.includes('expect')).map((block) => block.text),
  );

  it('has samples', () => {
    expect(samples.length).toBeGreaterThan(0);
  });

  for (const sample of samples) {
    it(`${sample} is an applied block of the guide, verbatim`, () => {
      const text = readFileSync(join(SAMPLES_DIR, sample), 'utf8');
      expect(blocks.filter((block) => block.includes(text)).length, `no yaml block of docs/guide holds ${sample}`).toBe(
        1,
      );
    });
  }
});
