/**
 * An earlier release of Tally, built from its git commit, for upgrade tests: the tree at that commit, installed and
 * built in a directory of its own, so its apps' `dist/main.js` run as that release ran and its own generators render
 * its clusterctl components.
 *
 *   pnpm --filter @tally-ipam/release previous-release [--ref <commit or tag>]
 *
 * builds it (or finds it in the cache) and prints where it is.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { cacheRoot } from '@tally-ipam/testenv';
import { REPOSITORY_ROOT, run } from './workspace.js';

/**
 * The release an upgrade starts from. No release has been tagged yet (0.1.0 was never published and the first tag,
 * v0.2.0, comes with the settled ledger layout): until then it is main's commit before the lifecycle fixes, whose
 * apps carry version 0.1.0, which proves the mechanism. Replace it with the tag of the last release when there is one.
 */
export const PREVIOUS_RELEASE = { ref: '3590d2cd275305abac12b3d9210b16b7150b4bd6', version: '0.1.0' } as const;

/** Bumped when the layout of a cached release tree changes. */
const CACHE_FORMAT = 1;

export interface BuiltRelease {
  /** The full commit the tree was built from. */
  readonly commit: string;
  readonly version: string;
  /** The release's tree (installed and built): the `root` of `writeClusterctlRepository` and the apps' `dist/`. */
  readonly root: string;
  /** Whether this call built it (false: found in the cache). */
  readonly builtNow: boolean;
}

/** Where built releases are kept: `<testenv cache root>/releases/<commit>`. */
export function releaseCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'releases');
}

function resolveCommit(ref: string): string {
  try {
    return execFileSync('git', ['-C', REPOSITORY_ROOT, 'rev-parse', '--verify', `${ref}^{commit}`], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  } catch (error) {
    throw new Error(
      `release ref ${ref} is not a commit of ${REPOSITORY_ROOT} (a shallow clone lacks it: fetch the history or the ` +
        `tag first): ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}

/**
 * The release at `ref` (default `PREVIOUS_RELEASE`), installed with its own frozen lockfile and built, kept under
 * `releaseCacheDir()` by commit: a later call finds it. A half-built tree is never found: it is built beside the
 * cache entry and renamed into place at the end.
 */
export function buildRelease(
  options: { ref?: string; version?: string; onProgress?: (message: string) => void } = {},
): BuiltRelease {
  const progress = options.onProgress ?? ((): void => {});
  const ref = options.ref ?? PREVIOUS_RELEASE.ref;
  const version = options.version ?? PREVIOUS_RELEASE.version;
  const commit = resolveCommit(ref);
  const root = join(releaseCacheDir(), `${commit}-${CACHE_FORMAT}`);
  if (existsSync(join(root, '.built'))) return { commit, version, root, builtNow: false };
  const building = `${root}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  try {
    const started = Date.now();
    progress(`extracting ${commit.slice(0, 12)} into ${building}`);
    const archive = execFileSync('git', ['-C', REPOSITORY_ROOT, 'archive', '--format=tar', commit], {
      maxBuffer: 1024 * 1024 * 1024,
    });
    execFileSync('tar', ['-x', '-C', building], { input: archive });
    // Only what the two apps need (their dependencies, and their dev dependencies that render components).
    const apps = ['--filter=@tally-ipam/ipam-controller...', '--filter=@tally-ipam/sim-infra-controller...'];
    progress('pnpm install --frozen-lockfile (the two apps and what they import)');
    run('pnpm', ['install', '--frozen-lockfile', '--prefer-offline', ...apps], building, {
      ...process.env,
      CI: 'true',
    });
    progress('building both apps and what they import');
    run('pnpm', ['exec', 'turbo', 'run', 'build', ...apps, '--concurrency=2'], building, {
      ...process.env,
      TURBO_TELEMETRY_DISABLED: '1',
    });
    writeFileSync(join(building, '.built'), `${commit}\n`);
    rmSync(root, { recursive: true, force: true });
    renameSync(building, root);
    progress(`release ${version} (${commit.slice(0, 12)}) built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    return { commit, version, root, builtNow: true };
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    throw error;
  }
}

function main(argv: readonly string[]): void {
  const { values } = parseArgs({ args: [...argv], options: { ref: { type: 'string' } } });
  const built = buildRelease({
    ...(values.ref ? { ref: values.ref } : {}),
    onProgress: (message) => console.error(`[previous-release] ${message}`),
  });
  console.log(built.root);
}

const script = process.argv[1];
if (script && import.meta.url === pathToFileURL(resolve(script)).href) {
  try {
    main(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`previous-release: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
