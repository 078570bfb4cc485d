import { existsSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FIRST_RELEASE_CHANGESET, readChangesets, versionFirstRelease } from '../src/first-release.js';
import { listWorkspaces, REPOSITORY_ROOT, type Workspace } from '../src/workspace.js';
import { copyTree } from './copy-tree.js';

const copy = copyTree(REPOSITORY_ROOT, 'tally-first-release-');
let pending = 0;
let result: { packages: readonly Workspace[]; consumed: number };

beforeAll(() => {
  // Whatever the repository's release state: the copy is put back to "never released" (0.0.0, no changelogs), with
  // the repository's pending changesets and one more, so the step always has work that a wrong bump would show.
  for (const workspace of listWorkspaces(copy)) {
    const file = join(copy, workspace.dir, 'package.json');
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as { version: string };
    writeFileSync(file, `${JSON.stringify({ ...manifest, version: '0.0.0' }, null, 2)}\n`);
    if (existsSync(join(copy, workspace.dir, 'CHANGELOG.md'))) unlinkSync(join(copy, workspace.dir, 'CHANGELOG.md'));
  }
  writeFileSync(
    join(copy, '.changeset', 'release-test-probe.md'),
    '---\n"@tally-ipam/allocator": patch\n"@tally-ipam/ship": patch\n---\n\nrelease test probe\n',
  );
  pending = readChangesets(copy).size;
  result = versionFirstRelease(copy);
});

afterAll(() => {
  rmSync(copy, { recursive: true, force: true });
});

it('gives every workspace package exactly 0.1.0, whatever mix of patch and minor changesets was pending', () => {
  expect(result.consumed).toBe(pending);
  expect(result.packages.length).toBeGreaterThanOrEqual(10);
  expect(listWorkspaces(copy).filter((w) => w.version !== '0.1.0')).toEqual([]);
});

it('consumes every changeset, its own included, into a CHANGELOG.md per package under "## 0.1.0"', () => {
  expect([...readChangesets(copy).keys()]).toEqual([]);
  expect(existsSync(join(copy, '.changeset', FIRST_RELEASE_CHANGESET))).toBe(false);
  for (const workspace of listWorkspaces(copy)) {
    const changelog = readFileSync(join(copy, workspace.dir, 'CHANGELOG.md'), 'utf8');
    expect(changelog, workspace.name).toContain('## 0.1.0');
  }
  expect(readFileSync(join(copy, 'packages/allocator/CHANGELOG.md'), 'utf8')).toContain('release test probe');
});

it('refuses to run again on a released tree, and refuses a major bump, changing nothing', () => {
  expect(() => versionFirstRelease(copy)).toThrow(/not a first release: @tally-ipam\/allocator@0\.1\.0/);
  const file = join(copy, 'packages/allocator/package.json');
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  for (const workspace of listWorkspaces(copy)) {
    const path = join(copy, workspace.dir, 'package.json');
    writeFileSync(
      path,
      `${JSON.stringify({ ...JSON.parse(readFileSync(path, 'utf8')), version: '0.0.0' }, null, 2)}\n`,
    );
  }
  writeFileSync(join(copy, '.changeset', 'breaking.md'), '---\n"@tally-ipam/allocator": major\n---\n\nbreaking\n');
  expect(() => versionFirstRelease(copy)).toThrow(/a major bump would give 1\.0\.0, not 0\.1\.0: breaking\.md/);
  expect(existsSync(join(copy, '.changeset', FIRST_RELEASE_CHANGESET))).toBe(false);
  expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ ...manifest, version: '0.0.0' });
});
