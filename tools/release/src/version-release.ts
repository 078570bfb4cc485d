/**
 * The version step of a release: every workspace package goes from the one version they share to exactly the next
 * minor release, consuming every pending changeset into the changelogs.
 *
 *   pnpm --filter @tally-ipam/release version-release 0.2.0    (then review, `pnpm install`, commit, tag v0.2.0)
 *
 * All packages move together (one release train: the apps' images, clusterctl components and npm packages of one
 * version are tested together). `changeset version` alone would bump each package by its own changesets — 0.1.1 here,
 * 0.2.0 there, nothing where no changeset names a package — so this adds one changeset that bumps every workspace
 * package `minor`, runs `changeset version`, and checks the result. Before 1.0 a `major` changeset would jump to
 * 1.0.0 and is refused; breaking changes before 1.0 are minor releases, and their changesets say so in their text.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { z } from 'zod';
import { listWorkspaces, REPOSITORY_ROOT, run, type Workspace } from './workspace.js';

const Bump = z.enum(['patch', 'minor', 'major']);
const Metadata = z.object({
  releaseSeries: z.array(z.object({ major: z.number(), minor: z.number(), contract: z.string() })),
});
const MINOR_RELEASE = /^(0|[1-9]\d{0,3})\.(0|[1-9]\d{0,3})\.0$/;

/** The changeset this step adds (and `changeset version` consumes) for `version`. */
export function releaseChangesetName(version: string): string {
  return `release-${version.replaceAll('.', '-')}.md`;
}

/** `{ package: bump }` of every pending changeset, by file name. */
export function readChangesets(root: string): Map<string, Record<string, z.infer<typeof Bump>>> {
  const dir = join(root, '.changeset');
  const changesets = new Map<string, Record<string, z.infer<typeof Bump>>>();
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.md') && name !== 'README.md')) {
    // An empty front matter (`changeset --empty`: a change that bumps no package) is a changeset too.
    const match = /^---\n((?:[\s\S]*?\n)?)---\n/.exec(readFileSync(join(dir, file), 'utf8'));
    if (!match) throw new Error(`.changeset/${file} has no front matter`);
    const bumps = z.record(z.string(), Bump).safeParse(parse(match[1] ?? '') ?? {});
    if (!bumps.success) throw new Error(`.changeset/${file}: ${z.prettifyError(bumps.error)}`);
    changesets.set(file, bumps.data);
  }
  return changesets;
}

export interface ReleaseResult {
  readonly version: string;
  readonly packages: readonly Workspace[];
  /** How many changesets were consumed (the repository's, not counting the one this step adds). */
  readonly consumed: number;
}

/** The version every package is at now; throws when they are not on one. */
function sharedVersion(workspaces: readonly Workspace[]): string {
  const versions = new Set(workspaces.map((w) => w.version));
  const [only] = versions;
  if (versions.size !== 1 || only === undefined) {
    throw new Error(
      `the packages are not on one version (${workspaces.map((w) => `${w.name}@${w.version}`).join(', ')}): ` +
        'a release moves them together, so put them on one first',
    );
  }
  return only;
}

/** Why `target` is not the next minor release after `current`, or undefined when it is. */
function notNextMinor(current: string, target: string): string | undefined {
  const wanted = MINOR_RELEASE.exec(target);
  if (!wanted) return `"${target.slice(0, 20)}" is not a minor release version (x.y.0)`;
  const [major, minor] = current.split('.').map(Number);
  if (major === undefined || minor === undefined) return `the current version ${current} is not x.y.z`;
  if (Number(wanted[1]) !== major || Number(wanted[2]) !== minor + 1) {
    return `${target} is not the next minor release after ${current} (that is ${major}.${minor + 1}.0)`;
  }
  return undefined;
}

/**
 * Runs the version step for `version` in `root` (see the file comment); throws, changing nothing, when it can't:
 * packages on different versions, a version that is not the next minor, a `major` changeset, a changeset naming a
 * package that is not in the workspace, or an app whose `metadata.yaml` has no release series for it.
 */
export function versionRelease(root: string, version: string, log: (line: string) => void = () => {}): ReleaseResult {
  const before = listWorkspaces(root);
  const current = sharedVersion(before);
  const wrongTarget = notNextMinor(current, version);
  if (wrongTarget) throw new Error(wrongTarget);
  const [major, minor] = version.split('.').map(Number);
  for (const workspace of before) {
    const metadataFile = join(root, workspace.dir, 'metadata.yaml');
    if (!existsSync(metadataFile)) continue;
    const metadata = Metadata.parse(parse(readFileSync(metadataFile, 'utf8')));
    if (!metadata.releaseSeries.some((series) => series.major === major && series.minor === minor)) {
      throw new Error(
        `${workspace.dir}/metadata.yaml has no release series ${major}.${minor}: clusterctl would refuse v${version}`,
      );
    }
  }
  const changesets = readChangesets(root);
  const majors = [...changesets].flatMap(([file, bumps]) =>
    Object.entries(bumps)
      .filter(([, bump]) => bump === 'major')
      .map(([name]) => `${file} (${name})`),
  );
  if (majors.length > 0) {
    throw new Error(`a major bump would not give ${version}: ${majors.join(', ')} (before 1.0, breaking is minor)`);
  }
  const names = new Set(before.map((w) => w.name));
  const unknown = [...changesets].flatMap(([file, bumps]) =>
    Object.keys(bumps)
      .filter((name) => !names.has(name))
      .map((name) => `${file} (${name})`),
  );
  if (unknown.length > 0) {
    throw new Error(`changesets name packages that are not in the workspace: ${unknown.join(', ')}`);
  }

  const added = releaseChangesetName(version);
  log(`${changesets.size} pending changesets; adding ${added} (minor for all ${before.length} packages)`);
  const frontMatter = before.map((w) => `"${w.name}": minor`).join('\n');
  writeFileSync(join(root, '.changeset', added), `---\n${frontMatter}\n---\n\nRelease ${version}.\n`);
  run(process.execPath, [join(root, 'node_modules', '@changesets', 'cli', 'bin.js'), 'version'], root);

  const after = listWorkspaces(root);
  const wrong = after.filter((w) => w.version !== version);
  if (wrong.length > 0) {
    throw new Error(
      `changeset version left ${wrong.map((w) => `${w.name}@${w.version}`).join(', ')} (expected ${version})`,
    );
  }
  const left = readChangesets(root);
  if (left.size > 0) throw new Error(`changesets left after changeset version: ${[...left.keys()].join(', ')}`);
  log(`every package is ${version}: ${after.map((w) => w.name).join(', ')}`);
  return { version, packages: after, consumed: changesets.size };
}

function main(argv: readonly string[]): void {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: { root: { type: 'string', default: REPOSITORY_ROOT } },
  });
  const [version, ...extra] = positionals;
  if (version === undefined || extra.length > 0) throw new Error('usage: version-release <x.y.0> [--root dir]');
  const root = resolve(values.root);
  const result = versionRelease(root, version, (line) => process.stdout.write(`${line}\n`));
  process.stdout.write(
    `consumed ${result.consumed} changesets into CHANGELOG.md files; now run \`pnpm install\`, commit the result ` +
      `and tag it v${result.version}\n`,
  );
}

const script = process.argv[1];
if (script && import.meta.url === pathToFileURL(resolve(script)).href) {
  try {
    main(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`version-release: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
