import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { commandOutput, ensureGoBinary, GO_ENV, type GoBinaryRequest, type GoToolchain } from '@tally-ipam/testenv';
import { goModuleDir, vsphereCacheDir } from './paths.js';
import {
  CAPV_MODULE,
  type CapvRelease,
  capvLdflags,
  capvRelease,
  capvVersionFor,
  VSPHERE_CACHE_FORMAT,
} from './versions.js';

export const CAPV_BINARY = 'capv-manager';

export interface CapvBinary {
  readonly path: string;
  readonly version: string;
  readonly key: string;
  readonly goVersion: string;
  /** True when this call built it, false when it came from the cache. */
  readonly builtNow: boolean;
  /** How long the build took when it happened, in this or an earlier process. */
  readonly buildDurationMs: number;
  readonly sizeBytes: number;
}

export interface EnsureCapvOptions {
  /** A key of `CAPV_RELEASES`; default `capvVersionFor()`, the release paired with the run's Cluster API release. */
  readonly version?: string;
  /** One line per step, and every 15 s while Go builds. */
  readonly onProgress?: (message: string) => void;
}

/** `GOFLAGS` for a build in `go/`: testenv's, plus `-modfile` when the release has a module file of its own. */
export function goFlagsFor(release: CapvRelease): string {
  return release.modfile === 'go.mod' ? GO_ENV.GOFLAGS : `${GO_ENV.GOFLAGS} -modfile=${release.modfile}`;
}

/** The module file and its go.sum: what pins the build graph, so part of every key built from it. */
export async function moduleFiles(release: CapvRelease): Promise<{ goMod: string; goSum: string }> {
  const dir = goModuleDir();
  const sum = release.modfile.replace(/\.mod$/, '.sum');
  const [goMod, goSum] = await Promise.all([
    readFile(join(dir, release.modfile), 'utf8'),
    readFile(join(dir, sum), 'utf8'),
  ]);
  return { goMod, goSum };
}

/** pflag prints the usage on --help; the flags startCapv passes must be there, or this is not the manager we need. */
async function verifyBuild(paths: Readonly<Record<string, string>>): Promise<void> {
  const binary = paths[CAPV_BINARY] ?? CAPV_BINARY;
  const output = await commandOutput(binary, ['--help']).catch((error: unknown) =>
    error instanceof Error ? error.message : String(error),
  );
  const expected = ['--credentials-file', '--webhook-port', '--health-addr', '--diagnostics-address', '--leader-elect'];
  const missing = expected.filter((flag) => !output.includes(flag));
  if (missing.length > 0) {
    throw new Error(
      `${binary} --help does not list ${missing.join(', ')}; is it CAPV's manager? ${output.slice(0, 2_000)}`,
    );
  }
}

/**
 * What `ensureCapv` builds: CAPV's manager (`main.go` at the module root) with `go build` in `go/`, whose module file
 * requires that release and pins the rest of the graph: the release's own graph (`graph: 'released'`), or one raised
 * to testenv's Cluster API manager's versions (`'shared'`; the README says why). CAPV's code comes unmodified from the
 * module proxy, checked against go.sum.
 */
export function capvBuild(version: string = capvVersionFor(), onProgress?: (message: string) => void): GoBinaryRequest {
  const release = capvRelease(version);
  const ldflags = capvLdflags(release);
  const env = { ...GO_ENV, GOFLAGS: goFlagsFor(release) };
  return {
    cacheDir: vsphereCacheDir('capv'),
    what: `CAPV ${release.version}`,
    format: VSPHERE_CACHE_FORMAT,
    keyMaterial: async (go: GoToolchain) => ({
      module: CAPV_MODULE,
      version: release.version,
      go: go.version,
      platform: `${go.goos}/${go.goarch}`,
      ldflags,
      env,
      ...(await moduleFiles(release)),
    }),
    binaries: [CAPV_BINARY],
    steps: [
      {
        name: `CAPV's manager ${release.version}`,
        logName: 'capv',
        source: { kind: 'module-dir', dir: goModuleDir() },
        packages: [CAPV_MODULE],
        ldflags,
        env: { GOFLAGS: env.GOFLAGS },
        output: CAPV_BINARY,
      },
    ],
    verify: verifyBuild,
    stampFields: { version: release.version, capiBuiltWith: release.capiBuiltWith },
    coldBuildHint: 'a cold build takes several minutes on 2 cores',
    onProgress,
  };
}

/**
 * CAPV's manager at `version`, built into `<cache root>/vsphere/capv/<key>/` first if needed. Safe to call from many
 * processes at once: one builds, the others wait for it.
 */
export async function ensureCapv(options: EnsureCapvOptions = {}): Promise<CapvBinary> {
  const version = options.version ?? capvVersionFor();
  const entry = await ensureGoBinary(capvBuild(version, options.onProgress));
  return {
    path: entry.paths[CAPV_BINARY] ?? join(entry.dir, CAPV_BINARY),
    version,
    key: entry.key,
    goVersion: entry.goVersion,
    builtNow: entry.builtNow,
    buildDurationMs: entry.buildDurationMs,
    sizeBytes: entry.sizes[CAPV_BINARY] ?? 0,
  };
}
