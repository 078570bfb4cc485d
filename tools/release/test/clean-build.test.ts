import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { cleanBuild } from '../src/clean-build.js';
import { listWorkspaces, REPOSITORY_ROOT, run } from '../src/workspace.js';
import { copyTree } from './copy-tree.js';

// A leaf package (no workspace dependencies): the clean build of it alone is a few seconds.
const PACKAGE = '@tally-ipam/allocator';
const workspace = listWorkspaces(REPOSITORY_ROOT).find((candidate) => candidate.name === PACKAGE);
const work = mkdtempSync(join(tmpdir(), 'tally-clean-build-'));
const temporary: string[] = [work];
let copy = '';
let packageDir = '';

/** The files of the tarball `pnpm pack` writes for the package (what `changeset publish` uploads). */
function packedFiles(destination: string): string[] {
  run('pnpm', ['pack', '--pack-destination', destination], packageDir);
  const tarball = readdirSync(destination).find((file) => file.endsWith('.tgz'));
  if (!tarball) throw new Error(`pnpm pack wrote no tarball into ${destination}`);
  return run('tar', ['-tzf', join(destination, tarball)], work)
    .split('\n')
    .filter(Boolean);
}

beforeAll(() => {
  if (!workspace) throw new Error(`${PACKAGE} is not a workspace package`);
  // A developer's tree, in a copy: the built dist/ plus an output whose source was removed (tsc -b never deletes it).
  copy = copyTree(REPOSITORY_ROOT, 'tally-clean-build-tree-');
  temporary.push(copy);
  packageDir = join(copy, workspace.dir);
  cpSync(join(REPOSITORY_ROOT, workspace.dir, 'dist'), join(packageDir, 'dist'), { recursive: true });
  symlinkSync(join(REPOSITORY_ROOT, workspace.dir, 'node_modules'), join(packageDir, 'node_modules'));
  writeFileSync(join(packageDir, 'dist', 'stray.js'), 'export const removedLongAgo = 1;\n');
});

afterAll(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

it('a pack of the developer tree ships the stray output (why the release cleans)', () => {
  const before = join(work, 'before');
  expect(packedFiles(before)).toContain('package/dist/stray.js');
});

it("the release's clean build empties dist/ and rebuilds it: the tarball has the build and not the stray file", () => {
  expect(cleanBuild(copy, { packages: [PACKAGE] })).toEqual([join(packageDir, 'dist')]);
  const files = packedFiles(join(work, 'after'));
  expect(files).toContain('package/dist/index.js');
  expect(files).toContain('package/dist/index.d.ts');
  expect(files).not.toContain('package/dist/stray.js');
});

it('the root `pnpm release` publishes only after the clean build', () => {
  const manifest = z
    .object({ scripts: z.object({ release: z.string() }) })
    .parse(JSON.parse(readFileSync(join(REPOSITORY_ROOT, 'package.json'), 'utf8')));
  expect(manifest.scripts.release).toBe('pnpm --filter @tally-ipam/release clean-build && changeset publish');
});

it('refuses a package that is not publishable', () => {
  expect(() => cleanBuild(copy, { packages: ['@tally-ipam/ipam-controller'] })).toThrow(
    'clean-build: not a publishable workspace package: @tally-ipam/ipam-controller',
  );
});
