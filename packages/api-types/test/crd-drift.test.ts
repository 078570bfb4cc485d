import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { generatedCRDFiles, tallyCRDsYaml } from '../src/index.js';

const crdDir = fileURLToPath(new URL('../config/crd/', import.meta.url));

describe('committed CRDs match the zod schemas (run `pnpm --filter @tally-ipam/api-types gen-crds` to update)', () => {
  const generated = generatedCRDFiles();

  it('config/crd holds exactly the generated files', () => {
    const committed = readdirSync(crdDir)
      .filter((name) => name.endsWith('.yaml'))
      .sort();
    expect(committed).toEqual(generated.map((file) => file.fileName).sort());
  });

  it.each(generated.map((file) => [file.fileName, file] as const))('%s is byte-identical to a fresh run', (_, file) => {
    expect(readFileSync(`${crdDir}${file.fileName}`, 'utf8')).toBe(file.yaml);
  });

  it('the YAML round-trips to the CRD objects and the stream holds all of them', () => {
    for (const file of generated) expect(parse(file.yaml)).toEqual(file.crd);
    const documents = tallyCRDsYaml()
      .split(/^---\n/m)
      .filter((document) => document.trim() !== '');
    expect(documents.map((document) => (parse(document) as { metadata: { name: string } }).metadata.name)).toEqual(
      generated.map((file) => file.crd.metadata.name),
    );
  });
});
