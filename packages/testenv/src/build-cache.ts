import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import lockfile from 'proper-lockfile';
import { errorMessage, formatDuration } from './format.js';
import { goEnvironment } from './go.js';

/**
 * The machinery shared by every binary this package builds from Go sources (the control plane, the Cluster API
 * manager): a versioned cache entry per key, one builder at a time per key (a lock file other processes wait on), a
 * temporary directory renamed into place only when complete, and progress lines while Go works.
 */

export const PROGRESS_INTERVAL_MS = 15_000;

export interface CacheEntryRequest<T> {
  /** Directory holding one subdirectory per key, plus `<key>.lock` and `<key>.build.log`. */
  readonly cacheDir: string;
  readonly key: string;
  /** What is being built, for progress lines ("the control plane binaries"). */
  readonly what: string;
  /** Reads a complete entry, or undefined when `dir` is missing or incomplete. */
  readonly read: (dir: string) => Promise<T | undefined>;
  /**
   * Builds into `tmpDir` (empty, on the same file system as `dir`) and returns the entry; the caller renames it into
   * place afterwards. Throwing removes `tmpDir`.
   */
  readonly build: (tmpDir: string, logPath: string) => Promise<T>;
  readonly progress: (message: string) => void;
}

export interface CacheEntryResult<T> {
  readonly dir: string;
  readonly entry: T;
  /** True when this call built the entry. */
  readonly builtNow: boolean;
}

function isLockedError(error: unknown): boolean {
  return error instanceof Error && 'code' in error && error.code === 'ELOCKED';
}

async function buildAtomically<T>(request: CacheEntryRequest<T>, dir: string): Promise<T> {
  const { cacheDir, key } = request;
  const tmpDir = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  // We hold the lock for this key, so any other temporary directory of it belongs to a builder that was killed.
  for (const entry of await readdir(cacheDir)) {
    if (entry.startsWith(`${key}.tmp-`)) await rm(join(cacheDir, entry), { recursive: true, force: true });
  }
  await mkdir(tmpDir, { recursive: true });
  try {
    const entry = await request.build(tmpDir, join(cacheDir, `${key}.build.log`));
    // A half-built entry must never be visible: the rename publishes every file at once.
    await rm(dir, { recursive: true, force: true });
    await rename(tmpDir, dir);
    return entry;
  } catch (error) {
    await rm(tmpDir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Returns the cache entry for `key`, building it first when needed. Safe to call from many processes at once: one
 * builds while the others wait (reporting every 15 s) and then read its result.
 */
export async function ensureCacheEntry<T>(request: CacheEntryRequest<T>): Promise<CacheEntryResult<T>> {
  const { cacheDir, key, progress } = request;
  const dir = join(cacheDir, key);
  const cached = await request.read(dir);
  if (cached) return { dir, entry: cached, builtNow: false };

  await mkdir(cacheDir, { recursive: true });
  const waitStarted = Date.now();
  let lastWaitReport = 0;
  let compromised: Error | undefined;
  for (;;) {
    let release: () => Promise<void>;
    try {
      release = await lockfile.lock(dir, {
        realpath: false,
        lockfilePath: `${dir}.lock`,
        // The holder refreshes the lock every 5 s; a lock not refreshed for 60 s belongs to a dead process.
        stale: 60_000,
        update: 5_000,
        onCompromised: (error) => {
          compromised = error;
        },
      });
    } catch (error) {
      if (!isLockedError(error)) {
        throw new Error(`cannot lock the binary cache at ${dir}.lock: ${errorMessage(error)}`, { cause: error });
      }
      const done = await request.read(dir);
      if (done) return { dir, entry: done, builtNow: false };
      if (Date.now() - lastWaitReport >= PROGRESS_INTERVAL_MS) {
        lastWaitReport = Date.now();
        progress(
          `another process is building ${request.what} (${formatDuration(Date.now() - waitStarted)} waited; ` +
            `its log: ${join(cacheDir, `${key}.build.log`)})`,
        );
      }
      await sleep(1_000);
      continue;
    }
    try {
      const done = await request.read(dir);
      if (done) return { dir, entry: done, builtNow: false };
      const entry = await buildAtomically(request, dir);
      if (compromised) progress(`warning: the build lock was taken over during the build (${compromised.message})`);
      return { dir, entry, builtNow: true };
    } finally {
      await release().catch(() => {});
    }
  }
}

export interface GoCommandOptions {
  /** Working directory (a module root, or `/` for `go install pkg@version`). */
  readonly cwd: string;
  readonly logPath: string;
  /** What is being built, for the error message ("kube-apiserver, etcd"). */
  readonly what: string;
  readonly progress: (message: string) => void;
  /** Added to the environment of `goEnvironment()`, e.g. `GOBIN`. */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Runs one `go` command (`build -v` or `install -v`) with its output in `logPath`, reporting every 15 s how many
 * packages were compiled. A failure names the log and includes its last lines.
 */
export async function runGoCommand(args: readonly string[], options: GoCommandOptions): Promise<void> {
  const { logPath, progress } = options;
  const log = createWriteStream(logPath);
  let recentOutput = '';
  log.write(`$ go ${args.map((a) => (a.includes(' ') ? JSON.stringify(a) : a)).join(' ')}\n`);
  const started = Date.now();
  let packagesCompiled = 0;
  let lastPackage = '';
  const child = spawn('go', [...args], {
    cwd: options.cwd,
    env: { ...goEnvironment(), ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const onOutput = (chunk: Buffer): void => {
    log.write(chunk);
    recentOutput = (recentOutput + chunk.toString('utf8')).slice(-4_000);
    for (const line of chunk.toString('utf8').split('\n')) {
      // `go build -v` prints one package path per line as it compiles it.
      if (/^[\w.-]+(\/[\w.~+-]+)*$/.test(line.trim()) && line.trim() !== '') {
        packagesCompiled++;
        lastPackage = line.trim();
      }
    }
  };
  child.stdout.on('data', onOutput);
  child.stderr.on('data', onOutput);
  const timer = setInterval(() => {
    progress(
      `go ${args[0]}: ${formatDuration(Date.now() - started)} elapsed, ${packagesCompiled} packages compiled` +
        (lastPackage ? ` (last: ${lastPackage})` : ' (downloading modules or linking)'),
    );
  }, PROGRESS_INTERVAL_MS);
  try {
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
      child.once('error', (error) => resolve({ code: null, signal: null, error }));
      child.once('close', (code, signal) => resolve({ code, signal }));
    });
    if (exit.error) throw new Error(`could not run "go ${args[0]}": ${exit.error.message}`, { cause: exit.error });
    if (exit.code !== 0) {
      throw new Error(
        `building ${options.what} failed (go ${args[0]} ${exit.signal ? `killed by ${exit.signal}` : `exit ${exit.code}`}); full log: ${logPath}\n` +
          recentOutput.trimEnd().split('\n').slice(-20).join('\n'),
      );
    }
  } finally {
    clearInterval(timer);
    await new Promise<void>((resolve) => log.end(resolve));
  }
}

/** Runs a freshly built binary with `args` and returns what it printed; a non-zero exit is an error. */
export async function commandOutput(binary: string, args: readonly string[]): Promise<string> {
  const child = spawn(binary, [...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0) throw new Error(`${binary} ${args.join(' ')} exited with ${code}: ${output}`);
  return output.trim();
}
