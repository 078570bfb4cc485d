import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { sampleManifests } from './fixtures/pools.js';

const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
const samplesDir = fileURLToPath(new URL('../samples/', import.meta.url));

describe('README examples are the tested samples', () => {
  const blocks = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');

  it('shows every sample file, verbatim', () => {
    for (const { file } of sampleManifests()) {
      expect(blocks, file).toContain(readFileSync(`${samplesDir}${file}`, 'utf8'));
    }
  });

  it('shows no manifest that is not a sample', () => {
    const samples = sampleManifests().map(({ file }) => readFileSync(`${samplesDir}${file}`, 'utf8'));
    for (const block of blocks) expect(samples).toContain(block);
  });
});
