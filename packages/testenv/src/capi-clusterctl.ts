import { join } from 'node:path';
import { commandOutput } from './build-cache.js';
import { capiBuildKeyExtras, capiBuildStep } from './capi-manager-binary.js';
import type { GoToolchain } from './go.js';
import { ensureGoBinary, type GoBinaryRequest } from './go-binary.js';
import { cacheRoot } from './paths.js';
import { CLUSTER_API_MODULE, clusterApiRelease, clusterApiVersion, GO_ENV } from './versions.js';

/** clusterctl's main package, in the same module (and so at the same version) as the manager and the CRDs. */
export const CLUSTERCTL_PACKAGE = `${CLUSTER_API_MODULE}/cmd/clusterctl`;
const BINARY = 'clusterctl';
/** Bumped when the layout of a clusterctl cache entry changes. */
const CACHE_FORMAT = 1;

/** `clusterctl version` reports these (upstream's hack/version.sh sets the same variables). */
function clusterctlLdflags(version: string): string {
  return [
    '-s',
    '-w',
    `-X sigs.k8s.io/cluster-api/version.gitVersion=${version}`,
    '-X sigs.k8s.io/cluster-api/version.gitTreeState=clean',
    '-X sigs.k8s.io/cluster-api/version.gitCommit=0000000000000000000000000000000000000000',
    '-X sigs.k8s.io/cluster-api/version.buildDate=2026-01-01T00:00:00Z',
  ].join(' ');
}

export interface ClusterctlBinary {
  readonly path: string;
  /** e.g. `v1.14.2`, the Cluster API version of the CRDs and the manager testenv uses. */
  readonly version: string;
  readonly goVersion: string;
  readonly key: string;
  readonly builtNow: boolean;
  readonly buildDurationMs: number;
  readonly sizeBytes: number;
}

export interface EnsureClusterctlOptions {
  /** A key of `CLUSTER_API_RELEASES`; default `clusterApiVersion()` (`TALLY_CAPI_VERSION`, else the default). */
  version?: string;
  onProgress?: (message: string) => void;
}

/** `<cache root>/clusterctl`: one directory per content key. */
export function clusterctlCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'clusterctl');
}

function verifier(version: string): (paths: Readonly<Record<string, string>>) => Promise<void> {
  return async (paths) => {
    const binary = paths[BINARY] ?? BINARY;
    const reported = await commandOutput(binary, ['version', '-o', 'short']);
    if (reported !== version) {
      throw new Error(`${binary} version -o short printed "${reported.slice(0, 80)}", expected ${version}`);
    }
  };
}

/**
 * What `ensureClusterctl` builds: clusterctl's package at a Cluster API release, the way that release builds it
 * (`go install` where the module allows it, else `go build` in a copy with its nested modules; no build tags).
 */
export function clusterctlBuild(options: EnsureClusterctlOptions = {}): GoBinaryRequest {
  const release = clusterApiRelease(clusterApiVersion(options.version));
  const ldflags = clusterctlLdflags(release.version);
  const step = capiBuildStep(release, {
    name: `clusterctl ${release.version}`,
    logName: 'clusterctl',
    goPackage: './cmd/clusterctl',
    ldflags,
    output: BINARY,
  });
  return {
    cacheDir: clusterctlCacheDir(),
    what: `clusterctl ${release.version}`,
    format: CACHE_FORMAT,
    keyMaterial: (go: GoToolchain) => ({
      package: CLUSTERCTL_PACKAGE,
      version: release.version,
      go: go.version,
      platform: `${go.goos}/${go.goarch}`,
      ldflags,
      env: GO_ENV,
      ...capiBuildKeyExtras(release, './cmd/clusterctl'),
    }),
    binaries: [BINARY],
    steps: [step],
    verify: verifier(release.version),
    stampFields: { version: release.version },
    onProgress: options.onProgress,
  };
}

/**
 * The real clusterctl of a Cluster API release (`options.version`, else `clusterApiVersion()`), built into the binary
 * cache (`<cache root>/clusterctl/<key>/clusterctl`) the first time; one builder at a time across processes.
 */
export async function ensureClusterctl(options: EnsureClusterctlOptions = {}): Promise<ClusterctlBinary> {
  const version = clusterApiVersion(options.version);
  const entry = await ensureGoBinary(clusterctlBuild({ ...options, version }));
  return {
    path: entry.paths[BINARY] ?? BINARY,
    version,
    goVersion: entry.goVersion,
    key: entry.key,
    builtNow: entry.builtNow,
    buildDurationMs: entry.buildDurationMs,
    sizeBytes: entry.sizes[BINARY] ?? 0,
  };
}
