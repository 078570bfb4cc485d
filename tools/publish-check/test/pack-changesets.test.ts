import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse } from 'yaml';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CHANGESET_BIN = join(ROOT, 'node_modules/@changesets/cli/bin.js');
const BUMPS = ['patch', 'minor', 'major'] as const;
type Bump = (typeof BUMPS)[number];

interface Workspace {
  name: string;
  dir: string;
  version: string;
}

function run(command: string, args: readonly string[], cwd: string): string {
  try {
    return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const detail = error as { stderr?: string; stdout?: string; message: string };
    throw new Error(
      `${command} ${args.join(' ')} failed: ${detail.message}\n${detail.stdout ?? ''}${detail.stderr ?? ''}`,
      {
        cause: error,
      },
    );
  }
}

/** The workspace packages of a tree (pnpm-workspace.yaml globs of the form `dir/*` or `dir`). */
function workspaces(root: string): Workspace[] {
  const globs = (parse(readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8')) as { packages: string[] }).packages;
  const dirs = globs.flatMap((glob) =>
    glob.endsWith('/*')
      ? readdirSync(join(root, glob.slice(0, -2))).map((name) => join(glob.slice(0, -2), name))
      : [glob],
  );
  return dirs
    .filter((dir) => existsSync(join(root, dir, 'package.json')))
    .map((dir) => {
      const manifest = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as {
        name: string;
        version: string;
      };
      return { name: manifest.name, dir, version: manifest.version };
    });
}

/** `{ package: bump }` and the summary of one changeset file. */
function readChangeset(path: string): { bumps: Record<string, Bump>; summary: string } {
  // An empty front matter (`changeset --empty`: a change that bumps no package) is a changeset too.
  const match = /^---\n((?:[\s\S]*?\n)?)---\n([\s\S]*)$/.exec(readFileSync(path, 'utf8'));
  if (!match) throw new Error(`${path} is not a changeset (front matter, then a summary)`);
  const bumps = (parse(match[1] ?? '') ?? {}) as Record<string, Bump>;
  return { bumps, summary: (match[2] ?? '').trim() };
}

function bumped(version: string, bump: Bump): string {
  const [major = 0, minor = 0, patch = 0] = version.split('.').map(Number);
  if (bump === 'major') return `${major + 1}.0.0`;
  if (bump === 'minor') return `${major}.${minor + 1}.0`;
  return `${major}.${minor}.${patch + 1}`;
}

const PROBE_CHANGESET = 'publish-check-probe.md';
const copy = mkdtempSync(join(tmpdir(), 'tally-changesets-'));
const before = new Map<string, Workspace>();
const pending = new Map<string, { bumps: Record<string, Bump>; summary: string }>();

beforeAll(() => {
  // A copy of the tree as git sees it (tracked and new files, nothing ignored): the work tree is never touched.
  const files = run('git', ['ls-files', '-co', '--exclude-standard', '-z'], ROOT).split('\0').filter(Boolean);
  for (const file of files) {
    if (!existsSync(join(ROOT, file))) continue; // deleted in the work tree, not yet committed
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    cpSync(join(ROOT, file), join(copy, file));
  }
  // The changelog generator is resolved from the tree's node_modules.
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  for (const workspace of workspaces(copy)) before.set(workspace.name, workspace);
  // The repository may hold any number of changesets (none right after a release): this one makes sure there is
  // always something for `changeset version` to consume, whatever the release state.
  writeFileSync(
    join(copy, '.changeset', PROBE_CHANGESET),
    `---\n"@tally-ipam/allocator": patch\n---\n\npublish-check probe: a patch for the allocator\n`,
  );
  for (const file of readdirSync(join(copy, '.changeset')).filter((f) => f.endsWith('.md') && f !== 'README.md')) {
    pending.set(file, readChangeset(join(copy, '.changeset', file)));
  }
  run(process.execPath, [CHANGESET_BIN, 'version'], copy);
});

afterAll(() => {
  rmSync(copy, { recursive: true, force: true });
});

it('reads every changeset (the repository ones and a probe), each naming workspace packages with a valid bump', () => {
  expect(pending.has(PROBE_CHANGESET)).toBe(true);
  for (const [file, changeset] of pending) {
    for (const [name, bump] of Object.entries(changeset.bumps)) {
      expect(before.has(name), `${file}: ${name} is a workspace package`).toBe(true);
      expect(BUMPS, `${file}: ${name}`).toContain(bump);
    }
  }
});

it('`changeset version` consumes every changeset and bumps each named package by its largest bump', () => {
  expect(readdirSync(join(copy, '.changeset')).filter((f) => f.endsWith('.md') && f !== 'README.md')).toEqual([]);
  const largest = new Map<string, Bump>();
  for (const { bumps } of pending.values()) {
    for (const [name, bump] of Object.entries(bumps)) {
      const current = largest.get(name);
      if (!current || BUMPS.indexOf(bump) > BUMPS.indexOf(current)) largest.set(name, bump);
    }
  }
  const after = new Map(workspaces(copy).map((w) => [w.name, w]));
  for (const [name, bump] of largest) {
    const old = before.get(name);
    expect(after.get(name)?.version, name).toBe(bumped(old?.version ?? '', bump));
  }
});

it('writes a CHANGELOG.md per bumped package with the new version and every summary that named it', () => {
  const after = new Map(workspaces(copy).map((w) => [w.name, w]));
  for (const [file, { bumps, summary }] of pending) {
    for (const name of Object.keys(bumps)) {
      const workspace = after.get(name);
      const changelog = readFileSync(join(copy, workspace?.dir ?? '', 'CHANGELOG.md'), 'utf8');
      expect(changelog, `${name} CHANGELOG.md`).toContain(`## ${workspace?.version}`);
      const firstLine = summary.split('\n')[0] ?? '';
      expect(changelog, `${name} CHANGELOG.md has ${file}`).toContain(firstLine);
    }
  }
});

it('the IPAM controller release series it produces is in the clusterctl metadata with contract v1beta2', () => {
  const controller = workspaces(copy).find((w) => w.name === '@tally-ipam/ipam-controller');
  const [major, minor] = (controller?.version ?? '').split('.').map(Number);
  const metadata = parse(readFileSync(join(copy, controller?.dir ?? '', 'metadata.yaml'), 'utf8')) as {
    releaseSeries: { major: number; minor: number; contract: string }[];
  };
  expect(metadata.releaseSeries).toContainEqual({ major, minor, contract: 'v1beta2' });
});
