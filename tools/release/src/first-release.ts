/**
 * The version step of the first release: every workspace package goes from 0.0.0 to exactly 0.1.0, consuming every
 * pending changeset into the changelogs.
 *
 *   pnpm --filter @tally-ipam/release first-release        (then review, `pnpm install`, commit)
 *
 * `changeset version` alone would give 0.1.0 only to packages some changeset bumps `minor`, 0.0.1 to the rest, and
 * nothing to packages no changeset names. So this adds one changeset that bumps every workspace package `minor`
 * (refusing a `major` anywhere, which would give 1.0.0), runs `changeset version`, and checks the result.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { z } from 'zod';
import { listWorkspaces, REPOSITORY_ROOT, run, type Workspace } from './workspace.js';

export const FIRST_RELEASE_VERSION = '0.1.0';
export const FIRST_RELEASE_CHANGESET = 'first-release-0-1-0.md';

const Bump = z.enum(['patch', 'minor', 'major']);
const Metadata = z.object({
  releaseSeries: z.array(z.object({ major: z.number(), minor: z.number(), contract: z.string() })),
});

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

export interface FirstReleaseResult {
  readonly packages: readonly Workspace[];
  /** How many changesets were consumed (the repository's, not counting the one this step adds). */
  readonly consumed: number;
}

/** Runs the first release's version step in `root` (see the file comment); throws, changing nothing, when it can't. */
export function versionFirstRelease(root: string, log: (line: string) => void = () => {}): FirstReleaseResult {
  const before = listWorkspaces(root);
  const released = before.filter((workspace) => workspace.version !== '0.0.0');
  if (released.length > 0) {
    throw new Error(
      `not a first release: ${released.map((w) => `${w.name}@${w.version}`).join(', ')} already versioned`,
    );
  }
  const changesets = readChangesets(root);
  const majors = [...changesets].flatMap(([file, bumps]) =>
    Object.entries(bumps)
      .filter(([, bump]) => bump === 'major')
      .map(([name]) => `${file} (${name})`),
  );
  if (majors.length > 0) throw new Error(`a major bump would give 1.0.0, not 0.1.0: ${majors.join(', ')}`);
  const names = new Set(before.map((w) => w.name));
  const unknown = [...changesets].flatMap(([file, bumps]) =>
    Object.keys(bumps)
      .filter((name) => !names.has(name))
      .map((name) => `${file} (${name})`),
  );
  if (unknown.length > 0)
    throw new Error(`changesets name packages that are not in the workspace: ${unknown.join(', ')}`);

  log(
    `${changesets.size} pending changesets; adding ${FIRST_RELEASE_CHANGESET} (minor for all ${before.length} packages)`,
  );
  const frontMatter = before.map((w) => `"${w.name}": minor`).join('\n');
  writeFileSync(
    join(root, '.changeset', FIRST_RELEASE_CHANGESET),
    `---\n${frontMatter}\n---\n\nFirst release: ${FIRST_RELEASE_VERSION}.\n`,
  );
  run(process.execPath, [join(root, 'node_modules', '@changesets', 'cli', 'bin.js'), 'version'], root);

  const after = listWorkspaces(root);
  const wrong = after.filter((w) => w.version !== FIRST_RELEASE_VERSION);
  if (wrong.length > 0) {
    throw new Error(
      `changeset version left ${wrong.map((w) => `${w.name}@${w.version}`).join(', ')} (expected ${FIRST_RELEASE_VERSION})`,
    );
  }
  const left = readChangesets(root);
  if (left.size > 0) throw new Error(`changesets left after changeset version: ${[...left.keys()].join(', ')}`);
  for (const workspace of after) {
    const metadataFile = join(root, workspace.dir, 'metadata.yaml');
    if (!existsSync(metadataFile)) continue;
    const metadata = Metadata.parse(parse(readFileSync(metadataFile, 'utf8')));
    if (!metadata.releaseSeries.some((series) => series.major === 0 && series.minor === 1)) {
      throw new Error(`${workspace.dir}/metadata.yaml has no release series 0.1: clusterctl would refuse v0.1.0`);
    }
  }
  log(`every package is ${FIRST_RELEASE_VERSION}: ${after.map((w) => w.name).join(', ')}`);
  return { packages: after, consumed: changesets.size };
}

function main(argv: readonly string[]): void {
  const { values } = parseArgs({ args: [...argv], options: { root: { type: 'string', default: REPOSITORY_ROOT } } });
  const root = resolve(values.root);
  const result = versionFirstRelease(root, (line) => process.stdout.write(`${line}\n`));
  process.stdout.write(
    `consumed ${result.consumed} changesets into CHANGELOG.md files; now run \`pnpm install\` and commit the result\n`,
  );
}

const script = process.argv[1];
if (script && import.meta.url === pathToFileURL(resolve(script)).href) {
  try {
    main(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`first-release: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
