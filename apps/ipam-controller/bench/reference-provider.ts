/**
 * The reference provider for side-by-side figures: `sigs.k8s.io/cluster-api-ipam-provider-in-cluster` built from its
 * module on the Go module proxy into testenv's content-keyed binary cache, and run as a child process against a
 * testenv control plane.
 *
 * `go install …@v1.1.0` does not work for this module (the proxy's version list does not offer it to `go install`), so
 * the module is downloaded with `go mod download` and a writable copy of its read-only module-cache directory is built
 * with `go build`. The pool CRDs (`config/crd/bases`) are copied next to the binary, so CRDs and binary always match.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { access, chmod, cp, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import {
  cacheRoot,
  commandOutput,
  detectGo,
  downloadGoModule,
  ensureCacheEntry,
  formatBytes,
  formatDuration,
  GO_ENV,
  type GoToolchain,
  runGoCommand,
} from '@tally-ipam/testenv';
import { z } from 'zod';

export const REFERENCE_MODULE = 'sigs.k8s.io/cluster-api-ipam-provider-in-cluster';
/** The first release serving `ipam.cluster.x-k8s.io/v1beta2` claims (Cluster API 1.11 contract). */
export const REFERENCE_VERSION = 'v1.1.0';
export const REFERENCE_BINARY = 'cluster-api-ipam-provider-in-cluster';
/** Bumped when the layout of a cache entry changes. */
const CACHE_FORMAT = 1;
/** `-mod=mod`: the copy may need its go.mod tidied against go.sum; `-modcacherw` keeps the module cache deletable. */
const BUILD_GOFLAGS = '-mod=mod -modcacherw';
const BUILD_LDFLAGS = '-s -w';
const CRD_DIR = 'crds';
const STAMP_FILE = 'stamp.json';
/** The reference's pool kinds (group `ipam.cluster.x-k8s.io`, version `v1alpha2`). */
export const REFERENCE_POOL_API_VERSION = 'ipam.cluster.x-k8s.io/v1alpha2';
/**
 * Its controllers: the claim reconciler and one per pool kind. Each logs "Starting workers" once its informers have
 * synced, so the last of these lines is the moment the provider is serving.
 */
export const REFERENCE_CONTROLLER_COUNT = 5;

export interface ReferenceProviderBinary {
  readonly dir: string;
  readonly path: string;
  /** The module's pool CRDs (InClusterIPPool, GlobalInClusterIPPool and the two prefix pools). */
  readonly crdDir: string;
  readonly version: string;
  readonly goVersion: string;
  readonly key: string;
  readonly builtNow: boolean;
  /** How long the build took when it happened, in this or an earlier process. */
  readonly buildDurationMs: number;
  readonly sizeBytes: number;
}

const stampSchema = z.object({
  format: z.literal(CACHE_FORMAT),
  key: z.string(),
  version: z.string(),
  goVersion: z.string(),
  builtAt: z.string(),
  buildDurationMs: z.number(),
  sizeBytes: z.number(),
});
type Stamp = z.infer<typeof stampSchema>;

export function referenceCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'reference-ipam');
}

function cacheKey(go: GoToolchain): string {
  const material = JSON.stringify({
    format: CACHE_FORMAT,
    module: REFERENCE_MODULE,
    version: REFERENCE_VERSION,
    go: go.version,
    platform: `${go.goos}/${go.goarch}`,
    ldflags: BUILD_LDFLAGS,
    env: { ...GO_ENV, GOFLAGS: BUILD_GOFLAGS },
  });
  return createHash('sha256').update(material).digest('hex').slice(0, 20);
}

async function readCompleteEntry(dir: string): Promise<Stamp | undefined> {
  try {
    const stamp = stampSchema.parse(JSON.parse(await readFile(join(dir, STAMP_FILE), 'utf8')));
    await access(join(dir, REFERENCE_BINARY));
    if ((await readdir(join(dir, CRD_DIR))).length === 0) return undefined;
    return stamp;
  } catch {
    return undefined;
  }
}

/** `--help` runs its flag parsing: the flags `startReferenceProvider` passes must exist in this build. */
async function verifyBuild(binary: string): Promise<void> {
  // pflag exits 0 on --help for this binary, and prints the usage to stderr, which commandOutput collects.
  const output = await commandOutput(binary, ['--help']).catch((error: unknown) =>
    error instanceof Error ? error.message : String(error),
  );
  const expected = ['--webhook-port', '--leader-elect', '--health-probe-bind-address', '--diagnostics-address'];
  const missing = expected.filter((flag) => !output.includes(flag));
  if (missing.length > 0) {
    throw new Error(
      `${binary} --help does not list ${missing.join(', ')}; is it the in-cluster IPAM provider? ` +
        `Output: ${output.slice(0, 2_000)}`,
    );
  }
}

async function build(
  go: GoToolchain,
  key: string,
  entryDir: string,
  logPath: string,
  progress: (message: string) => void,
): Promise<Stamp> {
  const started = Date.now();
  progress(`downloading ${REFERENCE_MODULE}@${REFERENCE_VERSION} from the Go module proxy`);
  const moduleDir = await downloadGoModule(REFERENCE_MODULE, REFERENCE_VERSION);
  // The module cache is read-only and `go build` in it would refuse to touch go.mod: build a writable copy.
  const workDir = await mkdtemp(join(tmpdir(), 'tally-reference-ipam-'));
  try {
    await cp(moduleDir, workDir, { recursive: true });
    await makeWritable(workDir);
    progress(
      `building ${REFERENCE_BINARY} ${REFERENCE_VERSION} with ${go.version} ` +
        `(a cold build takes a few minutes on 2 cores; log: ${logPath})`,
    );
    const binary = join(entryDir, REFERENCE_BINARY);
    await runGoCommand(['build', '-v', '-trimpath', '-ldflags', BUILD_LDFLAGS, '-o', binary, '.'], {
      cwd: workDir,
      logPath,
      what: `the reference IPAM provider (${REFERENCE_MODULE}@${REFERENCE_VERSION})`,
      progress,
      env: { GOFLAGS: BUILD_GOFLAGS, CGO_ENABLED: '0' },
    });
    await verifyBuild(binary);
    await cp(join(workDir, 'config', 'crd', 'bases'), join(entryDir, CRD_DIR), { recursive: true });
    const stamp: Stamp = {
      format: CACHE_FORMAT,
      key,
      version: REFERENCE_VERSION,
      goVersion: go.version,
      builtAt: new Date().toISOString(),
      buildDurationMs: Date.now() - started,
      sizeBytes: (await stat(binary)).size,
    };
    await writeFile(join(entryDir, STAMP_FILE), `${JSON.stringify(stamp, null, 2)}\n`);
    progress(`built ${REFERENCE_BINARY} in ${formatDuration(stamp.buildDurationMs)}: ${formatBytes(stamp.sizeBytes)}`);
    return stamp;
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

async function makeWritable(path: string): Promise<void> {
  const info = await stat(path);
  await chmod(path, info.mode | 0o200);
  if (!info.isDirectory()) return;
  for (const entry of await readdir(path)) await makeWritable(join(path, entry));
}

export interface EnsureReferenceProviderOptions {
  /** Called with one line per step, and every ~15 s while Go builds. */
  readonly onProgress?: (message: string) => void;
}

/**
 * The reference provider binary and its pool CRDs at `REFERENCE_VERSION`, built into
 * `<cache root>/reference-ipam/<key>/` first if needed. Safe to call from many processes at once: one builds, the
 * others wait for it.
 */
export async function ensureReferenceProvider(
  options: EnsureReferenceProviderOptions = {},
): Promise<ReferenceProviderBinary> {
  const progress = options.onProgress ?? ((): void => {});
  const go = await detectGo();
  const key = cacheKey(go);
  const { dir, entry, builtNow } = await ensureCacheEntry({
    cacheDir: referenceCacheDir(),
    key,
    what: `the reference IPAM provider ${REFERENCE_VERSION}`,
    read: readCompleteEntry,
    build: (tmpDir, logPath) => build(go, key, tmpDir, logPath, progress),
    progress,
  });
  return {
    dir,
    path: join(dir, REFERENCE_BINARY),
    crdDir: join(dir, CRD_DIR),
    version: entry.version,
    goVersion: entry.goVersion,
    key: entry.key,
    builtNow,
    buildDurationMs: entry.buildDurationMs,
    sizeBytes: entry.sizeBytes,
  };
}

export interface ReferenceProcess {
  readonly pid: number;
  /** Resolves with the time (performance.now()) its last controller started its workers: caches synced. */
  readonly synced: Promise<number>;
  /** The last output lines, for failure messages. */
  tail(): string;
  stop(): Promise<void>;
}

export interface StartReferenceOptions {
  readonly binary: string;
  readonly kubeconfigPath: string;
  /** Watch one namespace only (`--namespace`); all namespaces when unset. */
  readonly namespace?: string;
}

/**
 * Runs the reference provider as it ships (one claim worker), with no webhooks (`--webhook-port=0`: it then registers
 * none and starts no webhook server), no leader election, and no listeners at all (metrics and probes off).
 */
export function startReferenceProvider(options: StartReferenceOptions): ReferenceProcess {
  const args = [
    `--kubeconfig=${options.kubeconfigPath}`,
    '--webhook-port=0',
    '--leader-elect=false',
    '--diagnostics-address=0',
    '--health-probe-bind-address=0',
    ...(options.namespace ? [`--namespace=${options.namespace}`] : []),
  ];
  const child: ChildProcess = spawn(options.binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`could not start ${options.binary}`);
  let output = '';
  let partialLine = '';
  let workersStarted = 0;
  let resolveSynced: (at: number) => void = () => {};
  let rejectSynced: (error: Error) => void = () => {};
  const synced = new Promise<number>((resolve, reject) => {
    resolveSynced = resolve;
    rejectSynced = reject;
  });
  // Nobody may be waiting on `synced` when the process is stopped early; the rejection is still reported to waiters.
  synced.catch(() => {});
  const onOutput = (chunk: Buffer): void => {
    const text = chunk.toString('utf8');
    output = `${output}${text}`.slice(-20_000);
    const lines = `${partialLine}${text}`.split('\n');
    partialLine = lines.pop() ?? '';
    workersStarted += lines.filter((line) => line.includes('"Starting workers"')).length;
    if (workersStarted >= REFERENCE_CONTROLLER_COUNT) resolveSynced(performance.now());
  };
  child.stdout?.on('data', onOutput);
  child.stderr?.on('data', onOutput);
  const exited = once(child, 'exit');
  void exited.then(([code, signal]) => {
    rejectSynced(new Error(`${options.binary} exited (code ${code}, signal ${signal}) before syncing:\n${tail()}`));
  });
  const tail = (): string => output.split('\n').slice(-30).join('\n');
  return {
    pid: child.pid,
    synced,
    tail,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const outcome = await Promise.race([exited, delay(30_000).then(() => undefined)]);
      if (!outcome) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}
