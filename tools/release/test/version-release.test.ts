import { existsSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readChangesets, releaseChangesetName, versionRelease } from '../src/version-release.js';
import { listWorkspaces, REPOSITORY_ROOT, type Workspace } from '../src/workspace.js';
import { copyTree } from './copy-tree.js';

const copy = copyTree(REPOSITORY_ROOT, 'tally-version-release-');
let pending = 0;
let result: { packages: readonly Workspace[]; consumed: number };

function setVersion(dir: string, version: string): void {
  const file = join(copy, dir, 'package.json');
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  writeFileSync(file, `${JSON.stringify({ ...manifest, version }, null, 2)}\n`);
}

/** Every package.json, changeset and metadata.yaml of the copy: what a refused step must leave as it was. */
function snapshot(): string {
  const files = listWorkspaces(copy).flatMap((w) => [join(w.dir, 'package.json'), join(w.dir, 'metadata.yaml')]);
  const changesets = [...readChangesets(copy).keys()].map((name) => join('.changeset', name));
  return [...files, ...changesets]
    .filter((file) => existsSync(join(copy, file)))
    .map((file) => `${file}\n${readFileSync(join(copy, file), 'utf8')}`)
    .join('\n');
}

beforeAll(() => {
  // Whatever the repository's release state: the copy is put at 0.1.0 with no changelogs, with the repository's
  // pending changesets and one more mixing patch bumps, so the step always has work that a wrong bump would show.
  for (const workspace of listWorkspaces(copy)) {
    setVersion(workspace.dir, '0.1.0');
    if (existsSync(join(copy, workspace.dir, 'CHANGELOG.md'))) unlinkSync(join(copy, workspace.dir, 'CHANGELOG.md'));
  }
  writeFileSync(
    join(copy, '.changeset', 'release-test-probe.md'),
    '---\n"@tally-ipam/allocator": patch\n"@tally-ipam/ship": patch\n---\n\nrelease test probe\n',
  );
  pending = readChangesets(copy).size;
  result = versionRelease(copy, '0.2.0');
});

afterAll(() => {
  rmSync(copy, { recursive: true, force: true });
});

it('gives every workspace package exactly the next minor version, whatever mix of patch and minor was pending', () => {
  expect(result.consumed).toBe(pending);
  expect(result.packages.length).toBeGreaterThanOrEqual(10);
  expect(listWorkspaces(copy).filter((w) => w.version !== '0.2.0')).toEqual([]);
});

it('consumes every changeset, its own included, into a CHANGELOG.md per package under "## 0.2.0"', () => {
  expect([...readChangesets(copy).keys()]).toEqual([]);
  expect(existsSync(join(copy, '.changeset', releaseChangesetName('0.2.0')))).toBe(false);
  for (const workspace of listWorkspaces(copy)) {
    const changelog = readFileSync(join(copy, workspace.dir, 'CHANGELOG.md'), 'utf8');
    expect(changelog, workspace.name).toContain('## 0.2.0');
  }
  expect(readFileSync(join(copy, 'packages/allocator/CHANGELOG.md'), 'utf8')).toContain('release test probe');
});

it('refuses a version that is not the next minor release, changing nothing', () => {
  const before = snapshot();
  expect(() => versionRelease(copy, '0.2.0')).toThrow(
    /0\.2\.0 is not the next minor release after 0\.2\.0 \(that is 0\.3\.0\)/,
  );
  expect(() => versionRelease(copy, '0.4.0')).toThrow(/not the next minor release after 0\.2\.0/);
  expect(() => versionRelease(copy, '0.3.1')).toThrow(/"0\.3\.1" is not a minor release version/);
  expect(() => versionRelease(copy, `0.3.0${'x'.repeat(500)}`)).toThrow(/^"0\.3\.0x{15}" is not a minor/);
  expect(snapshot()).toBe(before);
});

it('refuses packages on different versions, a major bump, and an app without the release series, changing nothing', () => {
  writeFileSync(join(copy, '.changeset', 'breaking.md'), '---\n"@tally-ipam/allocator": major\n---\n\nbreaking\n');
  // metadata.yaml has the 0.3 series in no app: clusterctl would refuse v0.3.0; checked before anything is written.
  let before = snapshot();
  expect(() => versionRelease(copy, '0.3.0')).toThrow(
    /apps\/[a-z-]+\/metadata\.yaml has no release series 0\.3: clusterctl would refuse v0\.3\.0/,
  );
  expect(snapshot()).toBe(before);

  for (const dir of ['apps/ipam-controller', 'apps/sim-infra-controller']) {
    const file = join(copy, dir, 'metadata.yaml');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace(
        'releaseSeries:\n',
        'releaseSeries:\n  - major: 0\n    minor: 3\n    contract: v1beta2\n',
      ),
    );
  }
  before = snapshot();
  expect(() => versionRelease(copy, '0.3.0')).toThrow(
    /a major bump would not give 0\.3\.0: breaking\.md \(@tally-ipam\/allocator\)/,
  );
  expect(snapshot()).toBe(before);

  unlinkSync(join(copy, '.changeset', 'breaking.md'));
  setVersion('packages/allocator', '0.2.1');
  before = snapshot();
  expect(() => versionRelease(copy, '0.3.0')).toThrow(/not on one version \(.*@tally-ipam\/allocator@0\.2\.1/);
  expect(snapshot()).toBe(before);
});
