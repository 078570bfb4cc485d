import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { writeCRDs } from '../src/crd/crd-files.js';
import { validationMessageProblems } from '../src/crd/validation-messages.js';
import { diffCRDs, generatedCRDFiles, tallyCRDDirectory, tallyCRDsYaml } from '../src/index.js';

describe('committed CRDs match the zod schemas (run `pnpm --filter @tally-ipam/api-types gen-crds` to update)', () => {
  const generated = generatedCRDFiles();

  it('config/crd holds exactly the generated files, byte for byte', async () => {
    expect(await diffCRDs(tallyCRDDirectory(), generated)).toEqual({ changed: [], stale: [] });
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

describe('CEL validation messages', () => {
  it('every rule of every committed CRD has a static message in English, never the CEL source', async () => {
    const committed = await Promise.all(
      generatedCRDFiles().map(async (file) => parse(await readFile(join(tallyCRDDirectory(), file.fileName), 'utf8'))),
    );
    expect(committed.flatMap((crd) => validationMessageProblems(crd))).toEqual([]);
  });

  it('finds a rule without a message and a message that is CEL', () => {
    const [file] = generatedCRDFiles();
    if (!file) throw new Error('expected a generated CRD');
    const crd = structuredClone(file.crd);
    const schema = crd.spec.versions[0]?.schema.openAPIV3Schema as Record<string, unknown>;
    schema['x-kubernetes-validations'] = [{ rule: 'self.a == 1' }, { rule: 'true', message: 'self.a == 1' }];
    expect(validationMessageProblems(crd).map((problem) => problem.problem)).toEqual([
      'no message',
      'message reads as CEL: self.a == 1',
    ]);
  });
});

describe('diffCRDs / writeCRDs', () => {
  it('report and fix changed, missing and stale files, and leave other files alone', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crd-files-'));
    try {
      const [first, second] = generatedCRDFiles();
      if (!first || !second) throw new Error('expected at least two generated CRDs');
      await writeFile(join(dir, first.fileName), first.yaml);
      await writeFile(join(dir, second.fileName), `${second.yaml}# edited by hand\n`);
      await writeFile(join(dir, 'old_kind.yaml'), '---\n');
      await writeFile(join(dir, 'kustomization.yml'), 'resources: []\n');
      const files = generatedCRDFiles();
      const expectedChanged = files.map((file) => file.fileName).filter((name) => name !== first.fileName);
      expect(await diffCRDs(dir, files)).toEqual({ changed: expectedChanged, stale: ['old_kind.yaml'] });
      expect(await writeCRDs(dir, files)).toEqual({ changed: expectedChanged, stale: ['old_kind.yaml'] });
      expect(await diffCRDs(dir, files)).toEqual({ changed: [], stale: [] });
      expect(await readFile(join(dir, second.fileName), 'utf8')).toBe(second.yaml);
      expect((await readdir(dir)).sort()).toEqual([...files.map((file) => file.fileName), 'kustomization.yml'].sort());
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
