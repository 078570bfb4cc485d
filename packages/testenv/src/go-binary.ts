import { createHash } from 'node:crypto';
import { access, chmod, cp, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { ensureCacheEntry, runGoCommand } from './build-cache.js';
import { formatBytes, formatDuration } from './format.js';
import { detectGo, downloadGoModule, type GoToolchain } from './go.js';

/**
 * One helper for every binary this repository builds from Go sources into a content-keyed cache entry
 * (`<cacheDir>/<key>/`): the key, the cross-process lock, the build steps with progress lines, verification, the
 * stamp written last, and the atomic publish (all in `ensureCacheEntry`).
 */

/** Where a build step's sources come from. */
export type GoSource =
  /** `go install <package>@<version>` outside any module: the module builds exactly as its authors pinned it. */
  | { readonly kind: 'install'; readonly version: string }
  /** `go build` in a module directory of this repository (a wrapper module with its own go.mod). */
  | { readonly kind: 'module-dir'; readonly dir: string }
  /**
   * `go build` in a writable copy of a module downloaded from the proxy, for modules `go install` cannot build
   * (replace directives, or a version the proxy's list does not offer to `go install`). `nestedModules` are modules
   * of the same repository that its go.mod replaces with a directory (`replace x/api => ./api`): a module zip never
   * holds a nested module, so each is downloaded at its version into that directory of the copy, as the repository
   * has it at the tag.
   */
  | {
      readonly kind: 'proxy-module';
      readonly module: string;
      readonly version: string;
      readonly nestedModules?: readonly NestedModule[];
    };

/** A module copied into a directory of the module being built (see `GoSource`). */
export interface NestedModule {
  /** Relative to the module root, where its go.mod's replace directive points. */
  readonly dir: string;
  readonly module: string;
  readonly version: string;
}

export interface GoBuildStep {
  /** For progress lines ("clusterctl v1.12.10"). */
  readonly name: string;
  /** Names this step's log (`<key>.build.log.<logName>`) when the entry has several steps. */
  readonly logName: string;
  readonly source: GoSource;
  /** Package paths: without `@version` for `install`; for `go build`, paths inside the module (or `.`). */
  readonly packages: readonly string[];
  readonly tags?: string;
  readonly ldflags: string;
  /** Added to testenv's Go environment for this step (`GOFLAGS`, …). */
  readonly env?: Readonly<Record<string, string>>;
  /** `go build` only: the file name for a single package (`-o <entry>/<output>`); else `-o <entry>/`. */
  readonly output?: string;
  /** `go build` only: binaries Go names differently (etcd's `server`), renamed to their name in the entry. */
  readonly renames?: Readonly<Record<string, string>>;
  /** `proxy-module` only: directories of the module copied into the entry (from → to), e.g. CRDs. */
  readonly copyFromModule?: Readonly<Record<string, string>>;
}

export interface GoBinaryRequest {
  /** Directory holding one entry per key, plus `<key>.lock` and the build logs. */
  readonly cacheDir: string;
  /** What is built, for progress lines and errors ("the Cluster API manager v1.12.10"). */
  readonly what: string;
  /** Bumped when the entry's layout changes; first member of the key material and recorded in the stamp. */
  readonly format: number;
  /** Everything else that determines the binaries' content; see `goBinaryCacheKey`. */
  readonly keyMaterial: (go: GoToolchain) => Record<string, unknown> | Promise<Record<string, unknown>>;
  /** File names every complete entry holds. */
  readonly binaries: readonly string[];
  readonly steps: readonly GoBuildStep[];
  /** Runs the fresh binaries (paths by name) so a bad build never enters the cache. */
  readonly verify?: (paths: Readonly<Record<string, string>>) => Promise<void>;
  /** A further completeness check of an entry directory beyond the binaries and the stamp. */
  readonly isComplete?: (dir: string) => Promise<boolean>;
  /** Recorded in the stamp (versions, for people reading the cache). */
  readonly stampFields?: Readonly<Record<string, string>>;
  /** How long a cold build takes, said before it starts ("several minutes on 2 cores"). */
  readonly coldBuildHint?: string;
  readonly onProgress?: (message: string) => void;
}

export interface GoBinaryEntry {
  readonly dir: string;
  readonly key: string;
  /** Absolute path of each binary, by file name. */
  readonly paths: Readonly<Record<string, string>>;
  readonly goVersion: string;
  /** True when this call built the entry, false when it came from the cache. */
  readonly builtNow: boolean;
  /** How long the build took when it happened, in this or an earlier process. */
  readonly buildDurationMs: number;
  readonly sizes: Readonly<Record<string, number>>;
  /** The entry's stamp as written (versions, step durations). */
  readonly stamp: Readonly<Record<string, unknown>>;
}

const STAMP_FILE = 'stamp.json';

/**
 * The content key: the first 20 hex digits of SHA-256 over `JSON.stringify({ format, ...material })`. Member order
 * is part of the key: CI's warm cache depends on every caller keeping its material byte for byte.
 */
export function goBinaryCacheKey(format: number, material: Readonly<Record<string, unknown>>): string {
  return createHash('sha256')
    .update(JSON.stringify({ format, ...material }))
    .digest('hex')
    .slice(0, 20);
}

/** The key of a request for a given toolchain, without building or reading anything but the key's inputs. */
export async function goBinaryKey(request: GoBinaryRequest, go: GoToolchain): Promise<string> {
  return goBinaryCacheKey(request.format, await request.keyMaterial(go));
}

/** Every stamp written before and since this helper has these; the rest is informational. */
function stampSchema(format: number, key: string) {
  return z
    .object({
      format: z.literal(format),
      key: z.literal(key),
      goVersion: z.string(),
      buildDurationMs: z.number(),
    })
    .loose();
}

type Stamp = z.infer<ReturnType<typeof stampSchema>>;

async function sizesOf(dir: string, binaries: readonly string[]): Promise<Record<string, number>> {
  const sizes: Record<string, number> = {};
  for (const name of binaries) sizes[name] = (await stat(join(dir, name))).size;
  return sizes;
}

async function readCompleteEntry(request: GoBinaryRequest, key: string, dir: string): Promise<Stamp | undefined> {
  try {
    const stamp = stampSchema(request.format, key).parse(JSON.parse(await readFile(join(dir, STAMP_FILE), 'utf8')));
    await Promise.all(request.binaries.map((name) => access(join(dir, name))));
    if (request.isComplete && !(await request.isComplete(dir))) return undefined;
    return stamp;
  } catch {
    return undefined;
  }
}

async function makeWritable(path: string): Promise<void> {
  const info = await stat(path);
  await chmod(path, info.mode | 0o200);
  if (!info.isDirectory()) return;
  for (const entry of await readdir(path)) await makeWritable(join(path, entry));
}

function goArgs(step: GoBuildStep, entryDir: string): string[] {
  const common = ['-v', '-trimpath', ...(step.tags ? ['-tags', step.tags] : []), '-ldflags', step.ldflags];
  if (step.source.kind === 'install') {
    const { version } = step.source;
    return ['install', ...common, ...step.packages.map((p) => `${p}@${version}`)];
  }
  const output = step.output ? join(entryDir, step.output) : `${entryDir}/`;
  return ['build', ...common, '-o', output, ...step.packages];
}

async function runStep(
  step: GoBuildStep,
  entryDir: string,
  logPath: string,
  progress: (message: string) => void,
): Promise<void> {
  const args = goArgs(step, entryDir);
  const options = { logPath, what: step.name, progress };
  if (step.source.kind === 'install') {
    // GOBIN puts the binaries straight into the temporary entry; `/` keeps any go.mod around the caller out.
    await runGoCommand(args, { ...options, cwd: '/', env: { ...step.env, GOBIN: entryDir } });
  } else if (step.source.kind === 'module-dir') {
    await runGoCommand(args, { ...options, cwd: step.source.dir, env: step.env });
  } else {
    const { module, version } = step.source;
    progress(`downloading ${module}@${version} from the Go module proxy`);
    const moduleDir = await downloadGoModule(module, version);
    // The module cache is read-only and `go build` there would refuse to touch go.mod: build a writable copy.
    const workDir = await mkdtemp(join(tmpdir(), 'tally-go-module-'));
    try {
      await cp(moduleDir, workDir, { recursive: true });
      // Writable first: the copy keeps the module cache's read-only modes, and the nested modules go inside it.
      await makeWritable(workDir);
      for (const nested of step.source.nestedModules ?? []) {
        progress(`downloading ${nested.module}@${nested.version} into ${nested.dir}/ of the copy`);
        const target = join(workDir, nested.dir);
        if (
          await access(target).then(
            () => true,
            () => false,
          )
        ) {
          throw new Error(`${module}@${version} already has ${nested.dir}/; it is not a nested module's place`);
        }
        await cp(await downloadGoModule(nested.module, nested.version), target, { recursive: true });
        await makeWritable(target);
      }
      await runGoCommand(args, { ...options, cwd: workDir, env: step.env });
      for (const [from, to] of Object.entries(step.copyFromModule ?? {})) {
        await cp(join(workDir, from), join(entryDir, to), { recursive: true });
      }
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  }
  for (const [built, name] of Object.entries(step.renames ?? {})) {
    await rename(join(entryDir, built), join(entryDir, name));
  }
}

async function build(
  request: GoBinaryRequest,
  go: GoToolchain,
  key: string,
  entryDir: string,
  logPath: string,
  progress: (message: string) => void,
): Promise<Stamp> {
  const started = Date.now();
  const stepDurationsMs: Record<string, number> = {};
  const several = request.steps.length > 1;
  for (const step of request.steps) {
    const stepLog = several ? `${logPath}.${step.logName}` : logPath;
    const stepStarted = Date.now();
    progress(
      `building ${step.name} with ${go.version} (${request.coldBuildHint ? `${request.coldBuildHint}; ` : ''}log: ${stepLog})`,
    );
    await runStep(step, entryDir, stepLog, progress);
    stepDurationsMs[step.name] = Date.now() - stepStarted;
    if (several) progress(`built ${step.name} in ${formatDuration(stepDurationsMs[step.name] ?? 0)}`);
  }
  for (const name of request.binaries) await chmod(join(entryDir, name), 0o755);
  const paths = Object.fromEntries(request.binaries.map((name) => [name, join(entryDir, name)]));
  await request.verify?.(paths);
  const sizes = await sizesOf(entryDir, request.binaries);
  const [onlyBinary] = request.binaries;
  const stamp: Stamp = {
    format: request.format,
    key,
    ...request.stampFields,
    goVersion: go.version,
    builtAt: new Date().toISOString(),
    buildDurationMs: Date.now() - started,
    stepDurationsMs,
    sizes,
    // Entries written before this helper recorded a single binary's size here; readers of that layout still work.
    ...(request.binaries.length === 1 && onlyBinary ? { sizeBytes: sizes[onlyBinary] } : {}),
  };
  // Written last: an entry is complete when its stamp parses.
  await writeFile(join(entryDir, STAMP_FILE), `${JSON.stringify(stamp, null, 2)}\n`);
  progress(
    `built in ${formatDuration(stamp.buildDurationMs)}: ` +
      Object.entries(sizes)
        .map(([name, size]) => `${name} ${formatBytes(size)}`)
        .join(', '),
  );
  return stamp;
}

/**
 * Returns the cache entry of `request`, building it first when needed. Safe to call from many processes at once:
 * one builds (under `<key>.lock`) while the others wait and then read its result.
 */
export async function ensureGoBinary(request: GoBinaryRequest): Promise<GoBinaryEntry> {
  const progress = request.onProgress ?? ((): void => {});
  const go = await detectGo();
  const key = await goBinaryKey(request, go);
  const result = await ensureCacheEntry({
    cacheDir: request.cacheDir,
    key,
    what: request.what,
    read: (dir) => readCompleteEntry(request, key, dir),
    build: (tmpDir, logPath) => build(request, go, key, tmpDir, logPath, progress),
    progress,
  });
  return {
    dir: result.dir,
    key,
    paths: Object.fromEntries(request.binaries.map((name) => [name, join(result.dir, name)])),
    goVersion: result.entry.goVersion,
    builtNow: result.builtNow,
    buildDurationMs: result.entry.buildDurationMs,
    sizes: await sizesOf(result.dir, request.binaries),
    stamp: result.entry,
  };
}
