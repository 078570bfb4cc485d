import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { at, guidePages } from './support/guide.js';

/**
 * Every ```ts block of the guide type-checks, strict, against the packages as they are published (their built
 * declarations, resolved from this package as a user's project resolves them). Each block is its own module.
 */

const PACKAGE_DIR = fileURLToPath(new URL('../', import.meta.url));
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');

describe("the guide's TypeScript blocks type-check", () => {
  const blocks = guidePages().flatMap((page) =>
    page.blocks.filter((block) => block.lang === 'ts' || block.lang === 'typescript').map((block) => ({ page, block })),
  );
  // Inside this package, so that `@tally-ipam/*` resolves through its node_modules.
  const dir = mkdtempSync(join(PACKAGE_DIR, '.guide-ts-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('has TypeScript blocks', () => {
    expect(blocks.length).toBeGreaterThan(0);
  });

  it('every block compiles with tsc --strict', () => {
    const files = blocks.map(({ page, block }) => {
      const name = `${page.path.replace(/[^a-z0-9]+/gi, '-')}-${block.line}.ts`;
      writeFileSync(join(dir, name), block.text);
      return { name, where: at(page, block.line) };
    });
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: '../../../tsconfig.base.json',
        compilerOptions: {
          noEmit: true,
          composite: false,
          incremental: false,
          declaration: false,
          declarationMap: false,
          sourceMap: false,
          rootDir: '.',
        },
        include: ['*.ts'],
      }),
    );
    const run = spawnSync(process.execPath, [TSC, '-p', join(dir, 'tsconfig.json')], {
      encoding: 'utf8',
      timeout: 300_000,
    });
    if (run.error) throw run.error;
    // tsc names the file of each error; the file names say which block of which page.
    const report = files.reduce((text, file) => text.replaceAll(file.name, file.where), `${run.stdout}${run.stderr}`);
    expect(run.status, report).toBe(0);
  });
});
