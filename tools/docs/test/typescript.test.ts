import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { at, guidePages } from './support/guide.js';
import type { CodeBlock, Page } from './support/markdown.js';
import { referencePages } from './support/readmes.js';

/**
 * Every ```ts block of the guide and of the reference pages (READMEs, docs) type-checks, strict, against the
 * packages as they are published (their built declarations, resolved from this package as a user's project
 * resolves them). Each block is its own module.
 */

/**
 * Where the blocks are written: inside this package's node_modules, so that `@tally-ipam/*` resolves through it as in
 * a user's project, and so that no other tool reading the workspace's sources (tools/architecture) meets them.
 */
const WORK_PARENT = fileURLToPath(new URL('../node_modules/', import.meta.url));
const BASE_TSCONFIG = fileURLToPath(new URL('../../../tsconfig.base.json', import.meta.url));
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');

interface Located {
  readonly page: Page;
  readonly block: CodeBlock;
}

function tsBlocks(pages: readonly Page[]): Located[] {
  return pages.flatMap((page) =>
    page.blocks.filter((block) => block.lang === 'ts' || block.lang === 'typescript').map((block) => ({ page, block })),
  );
}

/** Runs tsc over the blocks, one module each, in a directory of this package; returns tsc's report with the
 * temporary file names replaced by `page:line`, and its exit status. */
function typeCheck(dir: string, blocks: readonly Located[]): { status: number | null; report: string } {
  const files = blocks.map(({ page, block }) => {
    const name = `${page.path.replace(/[^a-z0-9]+/gi, '-')}-${block.line}.ts`;
    writeFileSync(join(dir, name), block.text);
    return { name, where: at(page, block.line) };
  });
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: BASE_TSCONFIG,
      compilerOptions: {
        noEmit: true,
        composite: false,
        incremental: false,
        declaration: false,
        declarationMap: false,
        sourceMap: false,
        rootDir: '.',
      },
      files: files.map((file) => file.name),
    }),
  );
  const run = spawnSync(process.execPath, [TSC, '-p', join(dir, 'tsconfig.json')], {
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (run.error) throw run.error;
  // tsc names the file of each error; the file names say which block of which page.
  const report = files.reduce((text, file) => text.replaceAll(file.name, file.where), `${run.stdout}${run.stderr}`);
  return { status: run.status, report };
}

describe('TypeScript blocks type-check', () => {
  const dirs: string[] = [];
  const workDir = (): string => {
    const dir = mkdtempSync(join(WORK_PARENT, '.docs-ts-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const guide = tsBlocks(guidePages());
  const reference = tsBlocks(referencePages());

  it('the guide and the READMEs have TypeScript blocks', () => {
    expect(guide.length).toBeGreaterThan(0);
    expect(reference.length).toBeGreaterThan(0);
  });

  it('every block of the guide compiles with tsc --strict', () => {
    const { status, report } = typeCheck(workDir(), guide);
    expect(status, report).toBe(0);
  });

  it('every block of the READMEs and docs compiles with tsc --strict', () => {
    const { status, report } = typeCheck(workDir(), reference);
    expect(status, report).toBe(0);
  });
});
