import { createHash } from 'node:crypto';
import { access, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { commandOutput, ensureCacheEntry, runGoCommand } from './build-cache.js';
import { formatBytes, formatDuration } from './format.js';
import { detectGo, type GoToolchain } from './go.js';
import { cacheRoot } from './paths.js';
import { CLUSTER_API_MODULE, CLUSTER_API_VERSION, GO_ENV } from './versions.js';

/** clusterctl's main package, in the same module (and so at the same version) as the manager and the CRDs. */
export const CLUSTERCTL_PACKAGE = `${CLUSTER_API_MODULE}/cmd/clusterctl`;
const BINARY = 'clusterctl';
/** Bumped when the layout of a clusterctl cache entry changes. */
const CACHE_FORMAT = 1;
/** `clusterctl version` reports these (upstream's hack/version.sh sets the same variables). */
const LDFLAGS = [
  '-s',
  '-w',
  `-X sigs.k8s.io/cluster-api/version.gitVersion=${CLUSTER_API_VERSION}`,
  '-X sigs.k8s.io/cluster-api/version.gitTreeState=clean',
  '-X sigs.k8s.io/cluster-api/version.gitCommit=0000000000000000000000000000000000000000',
  '-X sigs.k8s.io/cluster-api/version.buildDate=2026-01-01T00:00:00Z',
].join(' ');

export interface ClusterctlBinary {
  readonly path: string;
  /** e.g. `v1.12.10`, the Cluster API version of the CRDs and the manager testenv uses. */
  readonly version: string;
  readonly goVersion: string;
  readonly key: string;
  readonly builtNow: boolean;
  readonly buildDurationMs: number;
  readonly sizeBytes: number;
}

const stampSchema = z.object({
  format: z.literal(CACHE_FORMAT),
  key: z.string(),
  version: z.string(),
  goVersion: z.string(),
  buildDurationMs: z.number(),
  sizeBytes: z.number(),
});
type Stamp = z.infer<typeof stampSchema>;

/** `<cache root>/clusterctl`: one directory per content key. */
export function clusterctlCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'clusterctl');
}

function cacheKey(go: GoToolchain): string {
  const material = JSON.stringify({
    format: CACHE_FORMAT,
    package: CLUSTERCTL_PACKAGE,
    version: CLUSTER_API_VERSION,
    go: go.version,
    platform: `${go.goos}/${go.goarch}`,
    ldflags: LDFLAGS,
    env: GO_ENV,
  });
  return createHash('sha256').update(material).digest('hex').slice(0, 20);
}

async function readCompleteEntry(dir: string): Promise<Stamp | undefined> {
  try {
    const stamp = stampSchema.parse(JSON.parse(await readFile(join(dir, 'stamp.json'), 'utf8')));
    await access(join(dir, BINARY));
    return stamp;
  } catch {
    return undefined;
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
  progress(`building clusterctl ${CLUSTER_API_VERSION} with ${go.version} (log: ${logPath})`);
  await runGoCommand(
    ['install', '-v', '-trimpath', '-ldflags', LDFLAGS, `${CLUSTERCTL_PACKAGE}@${CLUSTER_API_VERSION}`],
    {
      cwd: '/',
      logPath,
      what: `clusterctl (${CLUSTERCTL_PACKAGE}@${CLUSTER_API_VERSION})`,
      progress,
      env: { GOBIN: tmpDir },
    },
  );
  const binary = join(tmpDir, BINARY);
  const reported = await commandOutput(binary, ['version', '-o', 'short']);
  if (reported !== CLUSTER_API_VERSION) {
    throw new Error(`${binary} version -o short printed "${reported.slice(0, 80)}", expected ${CLUSTER_API_VERSION}`);
  }
  const stamp: Stamp = {
    format: CACHE_FORMAT,
    key,
    version: CLUSTER_API_VERSION,
    goVersion: go.version,
    buildDurationMs: Date.now() - started,
    sizeBytes: (await stat(binary)).size,
  };
  await writeFile(join(tmpDir, 'stamp.json'), `${JSON.stringify(stamp, null, 2)}\n`);
  progress(`built clusterctl in ${formatDuration(stamp.buildDurationMs)} (${formatBytes(stamp.sizeBytes)})`);
  return stamp;
}

/**
 * The real clusterctl at the pinned Cluster API version, built with `go install` into the binary cache
 * (`<cache root>/clusterctl/<key>/clusterctl`) the first time; one builder at a time across processes.
 */
export async function ensureClusterctl(
  options: { onProgress?: (message: string) => void } = {},
): Promise<ClusterctlBinary> {
  const progress = options.onProgress ?? ((): void => {});
  const go = await detectGo();
  const key = cacheKey(go);
  const { dir, entry, builtNow } = await ensureCacheEntry({
    cacheDir: clusterctlCacheDir(),
    key,
    what: `clusterctl ${CLUSTER_API_VERSION}`,
    read: readCompleteEntry,
    build: (tmpDir, logPath) => build(go, key, tmpDir, logPath, progress),
    progress,
  });
  return {
    path: join(dir, BINARY),
    version: entry.version,
    goVersion: entry.goVersion,
    key: entry.key,
    builtNow,
    buildDurationMs: entry.buildDurationMs,
    sizeBytes: entry.sizeBytes,
  };
}
