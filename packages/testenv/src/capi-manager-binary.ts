import { spawn } from 'node:child_process';
import type { GoToolchain } from './go.js';
import { ensureGoBinary, type GoBinaryRequest } from './go-binary.js';
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

/**
 * The manager has no `--version` flag; `--help` runs its flag parsing and must list the flags `startCapiManager`
 * passes, which proves the binary is the core manager and runs on this machine.
 */
async function verifyBuild(paths: Readonly<Record<string, string>>): Promise<void> {
  const binary = paths[CLUSTER_API_MANAGER_BINARY] ?? CLUSTER_API_MANAGER_BINARY;
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

/**
 * What `ensureCapiManager` builds: `go install` of the module root at the pinned version, exactly as released (its
 * own go.mod and go.sum, checked against the checksum database).
 */
export function capiManagerBuild(onProgress?: (message: string) => void): GoBinaryRequest {
  return {
    cacheDir: capiManagerCacheDir(),
    what: `the Cluster API manager ${CLUSTER_API_VERSION}`,
    format: CLUSTER_API_CACHE_FORMAT,
    keyMaterial: (go: GoToolchain) => ({
      module: CLUSTER_API_MODULE,
      version: CLUSTER_API_VERSION,
      go: go.version,
      platform: `${go.goos}/${go.goarch}`,
      ldflags: CLUSTER_API_LDFLAGS,
      env: GO_ENV,
    }),
    binaries: [CLUSTER_API_MANAGER_BINARY],
    steps: [
      {
        name: `the Cluster API core manager ${CLUSTER_API_VERSION}`,
        logName: 'manager',
        source: { kind: 'install', version: CLUSTER_API_VERSION },
        packages: [CLUSTER_API_MODULE],
        ldflags: CLUSTER_API_LDFLAGS,
      },
    ],
    verify: verifyBuild,
    stampFields: { version: CLUSTER_API_VERSION },
    coldBuildHint: 'a cold build takes several minutes on 2 cores',
    onProgress,
  };
}

/**
 * Returns the Cluster API core manager at the pinned version (`CLUSTER_API_VERSION`), building it with
 * `go install` into the binary cache first if needed (`<cache root>/cluster-api/<key>/cluster-api`). Safe to call
 * from many processes at once: one builds while the others wait for its result.
 */
export async function ensureCapiManager(options: EnsureCapiManagerOptions = {}): Promise<CapiManagerBinary> {
  const entry = await ensureGoBinary(capiManagerBuild(options.onProgress));
  return {
    dir: entry.dir,
    path: entry.paths[CLUSTER_API_MANAGER_BINARY] ?? CLUSTER_API_MANAGER_BINARY,
    version: CLUSTER_API_VERSION,
    goVersion: entry.goVersion,
    key: entry.key,
    builtNow: entry.builtNow,
    buildDurationMs: entry.buildDurationMs,
    sizeBytes: entry.sizes[CLUSTER_API_MANAGER_BINARY] ?? 0,
  };
}
