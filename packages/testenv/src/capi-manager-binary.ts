import { spawn } from 'node:child_process';
import type { GoToolchain } from './go.js';
import { ensureGoBinary, type GoBinaryRequest, type GoBuildStep } from './go-binary.js';
import { capiManagerCacheDir } from './paths.js';
import {
  CLUSTER_API_CACHE_FORMAT,
  CLUSTER_API_MANAGER_BINARY,
  CLUSTER_API_MODULE,
  type ClusterApiRelease,
  clusterApiLdflags,
  clusterApiRelease,
  clusterApiVersion,
  GO_ENV,
} from './versions.js';

export interface CapiManagerBinary {
  /** The cache entry holding the binary. */
  readonly dir: string;
  /** Path of the Cluster API core manager (`cluster-api`, the binary `go install sigs.k8s.io/cluster-api@…` makes). */
  readonly path: string;
  /** e.g. `v1.14.2`; the same version as the CRDs `capiCRDPaths({ version })` returns. */
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
  /** A key of `CLUSTER_API_RELEASES`; default `clusterApiVersion()` (`TALLY_CAPI_VERSION`, else the default). */
  version?: string;
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
 * The build step of a release, the way its own release builds it: a release without nested modules with `go install`
 * of the module root at that version, exactly as released (its own go.mod and go.sum, checked against the checksum
 * database; no wrapper module). A release whose go.mod replaces a nested module (v1.14's `./api`) cannot be `go
 * install`ed: `go build` of its main package in a copy of the module, the nested modules put where the replace
 * points, with the release's build tags.
 */
export function capiBuildStep(
  release: ClusterApiRelease,
  what: { name: string; logName: string; goPackage: string; ldflags: string; tags?: string; output?: string },
): GoBuildStep {
  const { ldflags } = what;
  if (release.nestedModules.length === 0) {
    return {
      name: what.name,
      logName: what.logName,
      source: { kind: 'install', version: release.version },
      packages: [what.goPackage === '.' ? CLUSTER_API_MODULE : `${CLUSTER_API_MODULE}/${what.goPackage.slice(2)}`],
      ldflags,
      ...(what.tags ? { tags: what.tags } : {}),
    };
  }
  return {
    name: what.name,
    logName: what.logName,
    source: {
      kind: 'proxy-module',
      module: CLUSTER_API_MODULE,
      version: release.version,
      nestedModules: release.nestedModules.map((nested) => ({ ...nested, version: release.version })),
    },
    packages: [what.goPackage],
    ldflags,
    ...(what.tags ? { tags: what.tags } : {}),
    ...(what.output ? { output: what.output } : {}),
  };
}

/**
 * The key members beyond the version that only releases built from a module copy have (package, tags, nested
 * modules): a release built with `go install` keeps the material it always had, so its cached builds stay valid.
 */
export function capiBuildKeyExtras(
  release: ClusterApiRelease,
  goPackage: string,
  tags?: string,
): Record<string, unknown> {
  if (release.nestedModules.length === 0 && !tags) return {};
  return {
    package: goPackage,
    ...(tags ? { tags } : {}),
    nestedModules: release.nestedModules.map((nested) => `${nested.dir}=${nested.module}@${release.version}`),
  };
}

/** What `ensureCapiManager` builds for a release (default: `clusterApiVersion()`). */
export function capiManagerBuild(options: EnsureCapiManagerOptions = {}): GoBinaryRequest {
  const release = clusterApiRelease(clusterApiVersion(options.version));
  const ldflags = clusterApiLdflags(release.version);
  const tags = release.managerTags;
  return {
    cacheDir: capiManagerCacheDir(),
    what: `the Cluster API manager ${release.version}`,
    format: CLUSTER_API_CACHE_FORMAT,
    keyMaterial: (go: GoToolchain) => ({
      module: CLUSTER_API_MODULE,
      version: release.version,
      go: go.version,
      platform: `${go.goos}/${go.goarch}`,
      ldflags,
      env: GO_ENV,
      ...capiBuildKeyExtras(release, release.managerPackage, tags),
    }),
    binaries: [CLUSTER_API_MANAGER_BINARY],
    steps: [
      capiBuildStep(release, {
        name: `the Cluster API core manager ${release.version}`,
        logName: 'manager',
        goPackage: release.managerPackage,
        ldflags,
        ...(tags ? { tags } : {}),
        output: CLUSTER_API_MANAGER_BINARY,
      }),
    ],
    verify: verifyBuild,
    stampFields: { version: release.version },
    coldBuildHint: 'a cold build takes several minutes on 2 cores',
    onProgress: options.onProgress,
  };
}

/**
 * Returns the Cluster API core manager of a release (`options.version`, else `clusterApiVersion()`), building it into
 * the binary cache first if needed (`<cache root>/cluster-api/<key>/cluster-api`). Safe to call from many processes
 * at once: one builds while the others wait for its result.
 */
export async function ensureCapiManager(options: EnsureCapiManagerOptions = {}): Promise<CapiManagerBinary> {
  const version = clusterApiVersion(options.version);
  const entry = await ensureGoBinary(capiManagerBuild({ ...options, version }));
  return {
    dir: entry.dir,
    path: entry.paths[CLUSTER_API_MANAGER_BINARY] ?? CLUSTER_API_MANAGER_BINARY,
    version,
    goVersion: entry.goVersion,
    key: entry.key,
    builtNow: entry.builtNow,
    buildDurationMs: entry.buildDurationMs,
    sizeBytes: entry.sizes[CLUSTER_API_MANAGER_BINARY] ?? 0,
  };
}
