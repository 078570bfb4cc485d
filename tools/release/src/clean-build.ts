/**
 * The release's build, run by the root `pnpm release` before `changeset publish`:
 *
 *   pnpm --filter @tally-ipam/release clean-build
 *
 * `tsc -b` never deletes the outputs of sources that were removed or moved, and turbo's cache replays a `dist/` that
 * had them, so a release cut from a developer's tree would pack stale files (with source maps pointing at sources that
 * no longer exist). Here every publishable package's `dist/` is emptied first (its `.tsbuildinfo` lives there, so tsc
 * rebuilds everything) and turbo builds with `--force` (no cached outputs replayed). `npm test`'s build is untouched:
 * it stays incremental and cached.
 */
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { listWorkspaces, REPOSITORY_ROOT, run } from './workspace.js';

export interface CleanBuildOptions {
  /** Only these publishable packages (and what turbo builds for them); default: the whole workspace. */
  readonly packages?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
}

/** Empties the publishable packages' `dist/` and builds with turbo, cache reads off; returns the emptied dirs. */
export function cleanBuild(root: string = REPOSITORY_ROOT, options: CleanBuildOptions = {}): string[] {
  const publishable = listWorkspaces(root).filter((workspace) => !workspace.private);
  const selected = options.packages ?? publishable.map((workspace) => workspace.name);
  const unknown = selected.filter((name) => !publishable.some((workspace) => workspace.name === name));
  if (unknown.length > 0) throw new Error(`clean-build: not a publishable workspace package: ${unknown.join(', ')}`);
  const emptied = publishable
    .filter((workspace) => selected.includes(workspace.name))
    .map((workspace) => join(root, workspace.dir, 'dist'));
  for (const dist of emptied) rmSync(dist, { recursive: true, force: true });
  const filters = options.packages ? options.packages.map((name) => `--filter=${name}`) : [];
  run(
    process.execPath,
    [join(root, 'node_modules/turbo/bin/turbo'), 'run', 'build', '--force', ...filters],
    root,
    options.env,
  );
  return emptied;
}

const script = process.argv[1];
if (script && import.meta.url === pathToFileURL(resolve(script)).href) {
  try {
    for (const dist of cleanBuild()) process.stdout.write(`emptied and rebuilt: ${dist}\n`);
  } catch (error) {
    process.stderr.write(`clean-build: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
