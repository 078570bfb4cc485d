import { createHash } from 'node:crypto';
import { access, chmod, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { commandOutput, ensureCacheEntry, runGoCommand } from './build-cache.js';
import { formatBytes, formatDuration } from './format.js';
import { detectGo, type GoToolchain } from './go.js';
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
  await runGoCommand(args, {
    cwd: wrapperModuleDir(),
    logPath,
    what: GO_PACKAGES.map((p) => p.binary).join(', '),
    progress,
  });
}

/** Checks the fresh binaries run and report the pinned versions, so a bad build never enters the cache. */
async function verifyBuild(dir: string): Promise<void> {
  const apiserver = await commandOutput(join(dir, 'kube-apiserver'), ['--version']);
  if (!apiserver.includes(KUBERNETES_VERSION)) {
    throw new Error(`kube-apiserver --version printed "${apiserver}", expected ${KUBERNETES_VERSION}`);
  }
  const kcm = await commandOutput(join(dir, 'kube-controller-manager'), ['--version']);
  if (!kcm.includes(KUBERNETES_VERSION)) {
    throw new Error(`kube-controller-manager --version printed "${kcm}", expected ${KUBERNETES_VERSION}`);
  }
  const etcd = await commandOutput(join(dir, 'etcd'), ['--version']);
  if (!etcd.includes(ETCD_VERSION.slice(1))) {
    throw new Error(`etcd --version printed "${etcd}", expected ${ETCD_VERSION}`);
  }
}

async function build(
  go: GoToolchain,
  key: string,
  tmpDir: string,
  logPath: string,
  progress: (message: string) => void,
): Promise<Stamp> {
  const started = Date.now();
  progress(
    `building kube-apiserver + kube-controller-manager ${KUBERNETES_VERSION} and etcd ${ETCD_VERSION} with ${go.version} ` +
      `(a cold build takes many minutes on 2 cores; log: ${logPath})`,
  );
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
  progress(
    `built in ${formatDuration(stamp.buildDurationMs)}: ` +
      Object.entries(sizes)
        .map(([name, size]) => `${name} ${formatBytes(size)}`)
        .join(', '),
  );
  return stamp;
}

/**
 * Returns the pinned etcd, kube-apiserver and kube-controller-manager binaries, building them into the cache first
 * if needed. Safe to call from many processes at once: one builds while the others wait for its result.
 */
export async function ensureBinaries(options: EnsureBinariesOptions = {}): Promise<ControlPlaneBinaries> {
  const progress = options.onProgress ?? ((): void => {});
  const go = await detectGo();
  const key = await cacheKey(go);
  const result = await ensureCacheEntry({
    cacheDir: controlPlaneCacheDir(),
    key,
    what: 'the control plane binaries',
    read: readCompleteEntry,
    build: (tmpDir, logPath) => build(go, key, tmpDir, logPath, progress),
    progress,
  });
  return toBinaries(result.dir, result.entry, result.builtNow);
}
