import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { access, chmod, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import lockfile from 'proper-lockfile';
import { z } from 'zod';
import { errorMessage, formatBytes, formatDuration } from './format.js';
import { detectGo, type GoToolchain, goEnvironment } from './go.js';
import { controlPlaneCacheDir, wrapperModuleDir } from './paths.js';
import {
  type BinaryName,
  CACHE_FORMAT,
  ETCD_VERSION,
  GO_BUILD_TAGS,
  GO_ENV,
  GO_LDFLAGS,
  GO_PACKAGES,
  KUBERNETES_VERSION,
} from './versions.js';

export interface ControlPlaneBinaries {
  /** The cache entry holding the binaries. */
  readonly dir: string;
  readonly etcd: string;
  readonly kubeAPIServer: string;
  readonly kubeControllerManager: string;
  /** Hash of everything that determines the binaries' content. */
  readonly key: string;
  readonly kubernetesVersion: string;
  readonly etcdVersion: string;
  readonly goVersion: string;
  /** True when this call built them (a cold or relinking build), false when they came from the cache. */
  readonly builtNow: boolean;
  /** How long the build took when it happened, in this or an earlier process. */
  readonly buildDurationMs: number;
  readonly sizes: Readonly<Record<BinaryName, number>>;
}

export interface EnsureBinariesOptions {
  /** Called with one human-readable line per step, and every ~15 s while Go builds. */
  onProgress?: (message: string) => void;
}

const stampSchema = z.object({
  format: z.literal(CACHE_FORMAT),
  key: z.string(),
  kubernetesVersion: z.string(),
  etcdVersion: z.string(),
  goVersion: z.string(),
  builtAt: z.string(),
  buildDurationMs: z.number(),
  sizes: z.object({ etcd: z.number(), 'kube-apiserver': z.number(), 'kube-controller-manager': z.number() }),
});
type Stamp = z.infer<typeof stampSchema>;

const STAMP_FILE = 'stamp.json';
const PROGRESS_INTERVAL_MS = 15_000;

async function cacheKey(go: GoToolchain): Promise<string> {
  const moduleDir = wrapperModuleDir();
  const [goMod, goSum] = await Promise.all([
    readFile(join(moduleDir, 'go.mod'), 'utf8'),
    readFile(join(moduleDir, 'go.sum'), 'utf8'),
  ]);
  const material = JSON.stringify({
    format: CACHE_FORMAT,
    kubernetes: KUBERNETES_VERSION,
    etcd: ETCD_VERSION,
    go: go.version,
    platform: `${go.goos}/${go.goarch}`,
    tags: GO_BUILD_TAGS,
    ldflags: GO_LDFLAGS,
    env: GO_ENV,
    packages: GO_PACKAGES,
    goMod,
    goSum,
  });
  return createHash('sha256').update(material).digest('hex').slice(0, 20);
}

async function readCompleteEntry(dir: string): Promise<Stamp | undefined> {
  let stamp: Stamp;
  try {
    stamp = stampSchema.parse(JSON.parse(await readFile(join(dir, STAMP_FILE), 'utf8')));
  } catch {
    return undefined;
  }
  try {
    await Promise.all(GO_PACKAGES.map((p) => access(join(dir, p.binary))));
  } catch {
    return undefined;
  }
  return stamp;
}

function toBinaries(dir: string, stamp: Stamp, builtNow: boolean): ControlPlaneBinaries {
  return {
    dir,
    etcd: join(dir, 'etcd'),
    kubeAPIServer: join(dir, 'kube-apiserver'),
    kubeControllerManager: join(dir, 'kube-controller-manager'),
    key: stamp.key,
    kubernetesVersion: stamp.kubernetesVersion,
    etcdVersion: stamp.etcdVersion,
    goVersion: stamp.goVersion,
    builtNow,
    buildDurationMs: stamp.buildDurationMs,
    sizes: stamp.sizes,
  };
}

/** Runs `go build` for all binaries at once (they share most of the compile work), logging to `logPath`. */
async function runGoBuild(outDir: string, logPath: string, progress: (message: string) => void): Promise<void> {
  const args = [
    'build',
    '-v',
    '-trimpath',
    '-tags',
    GO_BUILD_TAGS,
    '-ldflags',
    GO_LDFLAGS,
    '-o',
    `${outDir}/`,
    ...GO_PACKAGES.map((p) => p.goPackage),
  ];
  const log = createWriteStream(logPath);
  let recentOutput = '';
  log.write(`$ go ${args.map((a) => (a.includes(' ') ? JSON.stringify(a) : a)).join(' ')}\n`);
  const started = Date.now();
  let packagesCompiled = 0;
  let lastPackage = '';
  const child = spawn('go', args, { cwd: wrapperModuleDir(), env: goEnvironment(), stdio: ['ignore', 'pipe', 'pipe'] });
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
      `go build: ${formatDuration(Date.now() - started)} elapsed, ${packagesCompiled} packages compiled` +
        (lastPackage ? ` (last: ${lastPackage})` : ' (downloading modules or linking)'),
    );
  }, PROGRESS_INTERVAL_MS);
  try {
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
      child.once('error', (error) => resolve({ code: null, signal: null, error }));
      child.once('close', (code, signal) => resolve({ code, signal }));
    });
    if (exit.error) throw new Error(`could not run "go build": ${exit.error.message}`, { cause: exit.error });
    if (exit.code !== 0) {
      throw new Error(
        `building ${GO_PACKAGES.map((p) => p.binary).join(', ')} failed (go build ${exit.signal ? `killed by ${exit.signal}` : `exit ${exit.code}`}); full log: ${logPath}\n` +
          recentOutput.trimEnd().split('\n').slice(-20).join('\n'),
      );
    }
  } finally {
    clearInterval(timer);
    await new Promise<void>((resolve) => log.end(resolve));
  }
}

async function reportedVersion(binary: string, args: string[]): Promise<string> {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
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

/** Checks the fresh binaries run and report the pinned versions, so a bad build never enters the cache. */
async function verifyBuild(dir: string): Promise<void> {
  const apiserver = await reportedVersion(join(dir, 'kube-apiserver'), ['--version']);
  if (!apiserver.includes(KUBERNETES_VERSION)) {
    throw new Error(`kube-apiserver --version printed "${apiserver}", expected ${KUBERNETES_VERSION}`);
  }
  const kcm = await reportedVersion(join(dir, 'kube-controller-manager'), ['--version']);
  if (!kcm.includes(KUBERNETES_VERSION)) {
    throw new Error(`kube-controller-manager --version printed "${kcm}", expected ${KUBERNETES_VERSION}`);
  }
  const etcd = await reportedVersion(join(dir, 'etcd'), ['--version']);
  if (!etcd.includes(ETCD_VERSION.slice(1))) {
    throw new Error(`etcd --version printed "${etcd}", expected ${ETCD_VERSION}`);
  }
}

async function build(
  go: GoToolchain,
  key: string,
  finalDir: string,
  progress: (message: string) => void,
): Promise<Stamp> {
  const cacheDir = controlPlaneCacheDir();
  const tmpDir = `${finalDir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const logPath = join(cacheDir, `${key}.build.log`);
  // We hold the lock for this key, so any other temporary directory of it belongs to a builder that was killed.
  for (const entry of await readdir(cacheDir)) {
    if (entry.startsWith(`${key}.tmp-`)) await rm(join(cacheDir, entry), { recursive: true, force: true });
  }
  await mkdir(tmpDir, { recursive: true });
  const started = Date.now();
  progress(
    `building kube-apiserver + kube-controller-manager ${KUBERNETES_VERSION} and etcd ${ETCD_VERSION} with ${go.version} ` +
      `(a cold build takes many minutes on 2 cores; log: ${logPath})`,
  );
  try {
    await runGoBuild(tmpDir, logPath, progress);
    for (const p of GO_PACKAGES) {
      if (p.buildOutputName !== p.binary) await rename(join(tmpDir, p.buildOutputName), join(tmpDir, p.binary));
      await chmod(join(tmpDir, p.binary), 0o755);
    }
    await verifyBuild(tmpDir);
    const sizes = {
      etcd: (await stat(join(tmpDir, 'etcd'))).size,
      'kube-apiserver': (await stat(join(tmpDir, 'kube-apiserver'))).size,
      'kube-controller-manager': (await stat(join(tmpDir, 'kube-controller-manager'))).size,
    };
    const stamp: Stamp = {
      format: CACHE_FORMAT,
      key,
      kubernetesVersion: KUBERNETES_VERSION,
      etcdVersion: ETCD_VERSION,
      goVersion: go.version,
      builtAt: new Date().toISOString(),
      buildDurationMs: Date.now() - started,
      sizes,
    };
    await writeFile(join(tmpDir, STAMP_FILE), `${JSON.stringify(stamp, null, 2)}\n`);
    // A half-built entry must never be visible: the rename publishes all binaries and the stamp at once.
    await rm(finalDir, { recursive: true, force: true });
    await rename(tmpDir, finalDir);
    progress(
      `built in ${formatDuration(stamp.buildDurationMs)}: ` +
        Object.entries(sizes)
          .map(([name, size]) => `${name} ${formatBytes(size)}`)
          .join(', '),
    );
    return stamp;
  } catch (error) {
    await rm(tmpDir, { recursive: true, force: true });
    throw error;
  }
}

function isLockedError(error: unknown): boolean {
  return error instanceof Error && 'code' in error && error.code === 'ELOCKED';
}

/**
 * Returns the pinned etcd, kube-apiserver and kube-controller-manager binaries, building them into the cache first
 * if needed. Safe to call from many processes at once: one builds while the others wait for its result.
 */
export async function ensureBinaries(options: EnsureBinariesOptions = {}): Promise<ControlPlaneBinaries> {
  const progress = options.onProgress ?? ((): void => {});
  const go = await detectGo();
  const key = await cacheKey(go);
  const cacheDir = controlPlaneCacheDir();
  const dir = join(cacheDir, key);
  const cached = await readCompleteEntry(dir);
  if (cached) return toBinaries(dir, cached, false);

  await mkdir(cacheDir, { recursive: true });
  const lockTarget = join(cacheDir, key);
  const waitStarted = Date.now();
  let lastWaitReport = 0;
  let compromised: Error | undefined;
  for (;;) {
    let release: () => Promise<void>;
    try {
      release = await lockfile.lock(lockTarget, {
        realpath: false,
        lockfilePath: `${lockTarget}.lock`,
        // The holder refreshes the lock every 5 s; a lock not refreshed for 60 s belongs to a dead process.
        stale: 60_000,
        update: 5_000,
        onCompromised: (error) => {
          compromised = error;
        },
      });
    } catch (error) {
      if (!isLockedError(error)) {
        throw new Error(`cannot lock the binary cache at ${lockTarget}.lock: ${errorMessage(error)}`, { cause: error });
      }
      const done = await readCompleteEntry(dir);
      if (done) return toBinaries(dir, done, false);
      if (Date.now() - lastWaitReport >= PROGRESS_INTERVAL_MS) {
        lastWaitReport = Date.now();
        progress(
          `another process is building the control plane binaries (${formatDuration(Date.now() - waitStarted)} waited; ` +
            `its log: ${join(cacheDir, `${key}.build.log`)})`,
        );
      }
      await sleep(1_000);
      continue;
    }
    try {
      const done = await readCompleteEntry(dir);
      if (done) return toBinaries(dir, done, false);
      const stamp = await build(go, key, dir, progress);
      if (compromised) {
        progress(`warning: the build lock was taken over during the build (${compromised.message})`);
      }
      return toBinaries(dir, stamp, true);
    } finally {
      await release().catch(() => {});
    }
  }
}
