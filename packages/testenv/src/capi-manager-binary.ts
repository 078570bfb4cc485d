import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ensureCacheEntry, runGoCommand } from './build-cache.js';
import { formatBytes, formatDuration } from './format.js';
import { detectGo, type GoToolchain } from './go.js';
import { capiManagerCacheDir } from './paths.js';
import {
  CLUSTER_API_CACHE_FORMAT,
  CLUSTER_API_LDFLAGS,
  CLUSTER_API_MANAGER_BINARY,
  CLUSTER_API_MODULE,
  CLUSTER_API_VERSION,
  GO_ENV,
} from './versions.js';

export interface CapiManagerBinary {
  /** The cache entry holding the binary. */
  readonly dir: string;
  /** Path of the Cluster API core manager (`cluster-api`, the binary `go install sigs.k8s.io/cluster-api@…` makes). */
  readonly path: string;
  /** e.g. `v1.12.10`; the same version as the CRDs `capiCRDPaths` returns. */
  readonly version: string;
  readonly goVersion: string;
  /** Hash of everything that determines the binary's content. */
  readonly key: string;
  /** True when this call built it, false when it came from the cache. */
  readonly builtNow: boolean;
  /** How long the build took when it happened, in this or an earlier process. */
  readonly buildDurationMs: number;
  readonly sizeBytes: number;
}

export interface EnsureCapiManagerOptions {
  /** Called with one human-readable line per step, and every ~15 s while Go builds. */
  onProgress?: (message: string) => void;
}

const stampSchema = z.object({
  format: z.literal(CLUSTER_API_CACHE_FORMAT),
  key: z.string(),
  version: z.string(),
  goVersion: z.string(),
  builtAt: z.string(),
  buildDurationMs: z.number(),
  sizeBytes: z.number(),
});
type Stamp = z.infer<typeof stampSchema>;

const STAMP_FILE = 'stamp.json';

function cacheKey(go: GoToolchain): string {
  const material = JSON.stringify({
    format: CLUSTER_API_CACHE_FORMAT,
    module: CLUSTER_API_MODULE,
    version: CLUSTER_API_VERSION,
    go: go.version,
    platform: `${go.goos}/${go.goarch}`,
    ldflags: CLUSTER_API_LDFLAGS,
    env: GO_ENV,
  });
  return createHash('sha256').update(material).digest('hex').slice(0, 20);
}

async function readCompleteEntry(dir: string): Promise<Stamp | undefined> {
  try {
    const stamp = stampSchema.parse(JSON.parse(await readFile(join(dir, STAMP_FILE), 'utf8')));
    await access(join(dir, CLUSTER_API_MANAGER_BINARY));
    return stamp;
  } catch {
    return undefined;
  }
}

/**
 * The manager has no `--version` flag; `--help` runs its flag parsing and must list the flags `startCapiManager`
 * passes, which proves the binary is the core manager and runs on this machine.
 */
async function verifyBuild(binary: string): Promise<void> {
  const child = spawn(binary, ['--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer): void => {
    output += chunk.toString('utf8');
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  const expected = [
    '--webhook-port',
    '--webhook-cert-dir',
    '--health-addr',
    '--diagnostics-address',
    '--feature-gates',
  ];
  const missing = expected.filter((flag) => !output.includes(flag));
  if (code !== 0 || missing.length > 0) {
    throw new Error(
      `${binary} --help exited with ${code} and does not list ${missing.join(', ') || '(nothing missing)'}; ` +
        `is it the Cluster API core manager? Output:\n${output.slice(0, 2_000)}`,
    );
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
    `building the Cluster API core manager ${CLUSTER_API_VERSION} with ${go.version} ` +
      `(a cold build takes several minutes on 2 cores; log: ${logPath})`,
  );
  // `go install pkg@version` builds the module exactly as released (its own go.mod and go.sum, checked against the
  // checksum database), outside any module so nothing around the caller changes the build list. GOBIN puts the
  // binary straight into the temporary cache entry.
  await runGoCommand(
    ['install', '-v', '-trimpath', '-ldflags', CLUSTER_API_LDFLAGS, `${CLUSTER_API_MODULE}@${CLUSTER_API_VERSION}`],
    {
      cwd: '/',
      logPath,
      what: `the Cluster API manager (${CLUSTER_API_MODULE}@${CLUSTER_API_VERSION})`,
      progress,
      env: { GOBIN: tmpDir },
    },
  );
  const binary = join(tmpDir, CLUSTER_API_MANAGER_BINARY);
  await verifyBuild(binary);
  const stamp: Stamp = {
    format: CLUSTER_API_CACHE_FORMAT,
    key,
    version: CLUSTER_API_VERSION,
    goVersion: go.version,
    builtAt: new Date().toISOString(),
    buildDurationMs: Date.now() - started,
    sizeBytes: (await stat(binary)).size,
  };
  await writeFile(join(tmpDir, STAMP_FILE), `${JSON.stringify(stamp, null, 2)}\n`);
  progress(
    `built the Cluster API manager in ${formatDuration(stamp.buildDurationMs)}: ${CLUSTER_API_MANAGER_BINARY} ${formatBytes(stamp.sizeBytes)}`,
  );
  return stamp;
}

/**
 * Returns the Cluster API core manager at the pinned version (`CLUSTER_API_VERSION`), building it with
 * `go install` into the binary cache first if needed (`<cache root>/cluster-api/<key>/cluster-api`). Safe to call
 * from many processes at once: one builds while the others wait for its result.
 */
export async function ensureCapiManager(options: EnsureCapiManagerOptions = {}): Promise<CapiManagerBinary> {
  const progress = options.onProgress ?? ((): void => {});
  const go = await detectGo();
  const key = cacheKey(go);
  const { dir, entry, builtNow } = await ensureCacheEntry({
    cacheDir: capiManagerCacheDir(),
    key,
    what: `the Cluster API manager ${CLUSTER_API_VERSION}`,
    read: readCompleteEntry,
    build: (tmpDir, logPath) => build(go, key, tmpDir, logPath, progress),
    progress,
  });
  return {
    dir,
    path: join(dir, CLUSTER_API_MANAGER_BINARY),
    version: entry.version,
    goVersion: entry.goVersion,
    key: entry.key,
    builtNow,
    buildDurationMs: entry.buildDurationMs,
    sizeBytes: entry.sizeBytes,
  };
}
