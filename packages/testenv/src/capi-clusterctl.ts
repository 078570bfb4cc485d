import { join } from 'node:path';
import { commandOutput } from './build-cache.js';
import type { GoToolchain } from './go.js';
import { ensureGoBinary, type GoBinaryRequest } from './go-binary.js';
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

/** `<cache root>/clusterctl`: one directory per content key. */
export function clusterctlCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'clusterctl');
}

async function verifyBuild(paths: Readonly<Record<string, string>>): Promise<void> {
  const binary = paths[BINARY] ?? BINARY;
  const reported = await commandOutput(binary, ['version', '-o', 'short']);
  if (reported !== CLUSTER_API_VERSION) {
    throw new Error(`${binary} version -o short printed "${reported.slice(0, 80)}", expected ${CLUSTER_API_VERSION}`);
  }
}

/** What `ensureClusterctl` builds: `go install` of clusterctl's package at the pinned Cluster API version. */
export function clusterctlBuild(onProgress?: (message: string) => void): GoBinaryRequest {
  return {
    cacheDir: clusterctlCacheDir(),
    what: `clusterctl ${CLUSTER_API_VERSION}`,
    format: CACHE_FORMAT,
    keyMaterial: (go: GoToolchain) => ({
      package: CLUSTERCTL_PACKAGE,
      version: CLUSTER_API_VERSION,
      go: go.version,
      platform: `${go.goos}/${go.goarch}`,
      ldflags: LDFLAGS,
      env: GO_ENV,
    }),
    binaries: [BINARY],
    steps: [
      {
        name: `clusterctl ${CLUSTER_API_VERSION}`,
        logName: 'clusterctl',
        source: { kind: 'install', version: CLUSTER_API_VERSION },
        packages: [CLUSTERCTL_PACKAGE],
        ldflags: LDFLAGS,
      },
    ],
    verify: verifyBuild,
    stampFields: { version: CLUSTER_API_VERSION },
    onProgress,
  };
}

/**
 * The real clusterctl at the pinned Cluster API version, built with `go install` into the binary cache
 * (`<cache root>/clusterctl/<key>/clusterctl`) the first time; one builder at a time across processes.
 */
export async function ensureClusterctl(
  options: { onProgress?: (message: string) => void } = {},
): Promise<ClusterctlBinary> {
  const entry = await ensureGoBinary(clusterctlBuild(options.onProgress));
  return {
    path: entry.paths[BINARY] ?? BINARY,
    version: CLUSTER_API_VERSION,
    goVersion: entry.goVersion,
    key: entry.key,
    builtNow: entry.builtNow,
    buildDurationMs: entry.buildDurationMs,
    sizeBytes: entry.sizes[BINARY] ?? 0,
  };
}
