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
import { once } from 'node:events';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import {
  cacheRoot,
  commandOutput,
  ensureGoBinary,
  GO_ENV,
  type GoBinaryRequest,
  type GoToolchain,
  REFERENCE_IPAM_MODULE,
  REFERENCE_IPAM_VERSION,
} from '@tally-ipam/testenv';

/** testenv's, shared with api-types' comparison of the in-cluster CRDs. */
export const REFERENCE_MODULE: string = REFERENCE_IPAM_MODULE;
/** The first release serving `ipam.cluster.x-k8s.io/v1beta2` claims (Cluster API 1.11 contract). */
export const REFERENCE_VERSION: string = REFERENCE_IPAM_VERSION;
export const REFERENCE_BINARY = 'cluster-api-ipam-provider-in-cluster';
/** Bumped when the layout of a cache entry changes. */
const CACHE_FORMAT = 1;
/** `-mod=mod`: the copy may need its go.mod tidied against go.sum; `-modcacherw` keeps the module cache deletable. */
const BUILD_GOFLAGS = '-mod=mod -modcacherw';
const BUILD_LDFLAGS = '-s -w';
const CRD_DIR = 'crds';
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

export function referenceCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'reference-ipam');
}

/** `--help` runs its flag parsing: the flags `startReferenceProvider` passes must exist in this build. */
async function verifyBuild(paths: Readonly<Record<string, string>>): Promise<void> {
  const binary = paths[REFERENCE_BINARY] ?? REFERENCE_BINARY;
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

/**
 * What `ensureReferenceProvider` builds. `go install …@v1.1.0` does not work for this module (the proxy's version
 * list does not offer it to `go install`), so it is built from a writable copy of the downloaded module; its pool CRDs
 * (`config/crd/bases`) are copied next to the binary, so CRDs and binary always match.
 */
export function referenceProviderBuild(onProgress?: (message: string) => void): GoBinaryRequest {
  return {
    cacheDir: referenceCacheDir(),
    what: `the reference IPAM provider ${REFERENCE_VERSION}`,
    format: CACHE_FORMAT,
    keyMaterial: (go: GoToolchain) => ({
      module: REFERENCE_MODULE,
      version: REFERENCE_VERSION,
      go: go.version,
      platform: `${go.goos}/${go.goarch}`,
      ldflags: BUILD_LDFLAGS,
      env: { ...GO_ENV, GOFLAGS: BUILD_GOFLAGS },
    }),
    binaries: [REFERENCE_BINARY],
    steps: [
      {
        name: `${REFERENCE_BINARY} ${REFERENCE_VERSION}`,
        logName: 'reference',
        source: { kind: 'proxy-module', module: REFERENCE_MODULE, version: REFERENCE_VERSION },
        packages: ['.'],
        ldflags: BUILD_LDFLAGS,
        env: { GOFLAGS: BUILD_GOFLAGS, CGO_ENABLED: '0' },
        output: REFERENCE_BINARY,
        copyFromModule: { 'config/crd/bases': CRD_DIR },
      },
    ],
    verify: verifyBuild,
    isComplete: async (dir) => (await readdir(join(dir, CRD_DIR))).length > 0,
    stampFields: { version: REFERENCE_VERSION },
    coldBuildHint: 'a cold build takes a few minutes on 2 cores',
    onProgress,
  };
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
  const entry = await ensureGoBinary(referenceProviderBuild(options.onProgress));
  return {
    dir: entry.dir,
    path: join(entry.dir, REFERENCE_BINARY),
    crdDir: join(entry.dir, CRD_DIR),
    version: REFERENCE_VERSION,
    goVersion: entry.goVersion,
    key: entry.key,
    builtNow: entry.builtNow,
    buildDurationMs: entry.buildDurationMs,
    sizeBytes: entry.sizes[REFERENCE_BINARY] ?? 0,
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
