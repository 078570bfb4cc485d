import { join } from 'node:path';
import { ensureGoBinary, GO_ENV, type GoBinaryRequest, type GoToolchain } from '@tally-ipam/testenv';
import { goFlagsFor, moduleFiles } from './capv-binary.js';
import { hashTree } from './hash.js';
import { goModuleDir, vsphereCacheDir } from './paths.js';
import { capvRelease, capvVersionFor, GOVMOMI_MODULE, VSPHERE_CACHE_FORMAT } from './versions.js';

export const VCSIM_BINARY = 'tally-vcsim';
const VCSIM_PACKAGE = './vcsim';
const VCSIM_LDFLAGS = '-s -w';

export interface VcsimBinary {
  readonly path: string;
  /** The govmomi version it is built against: the one of the CAPV release it goes with. */
  readonly govmomi: string;
  readonly key: string;
  readonly builtNow: boolean;
  readonly buildDurationMs: number;
  readonly sizeBytes: number;
}

export interface EnsureVcsimOptions {
  /** The CAPV release whose govmomi the simulator is built with; default `capvVersionFor()`, the release paired with the run's Cluster API release. */
  readonly capvVersion?: string;
  readonly onProgress?: (message: string) => void;
}

/**
 * What `ensureVcsim` builds: our simulator main (`go/vcsim`, govmomi's `simulator` package used as a library) in the
 * module graph of a CAPV release, so the simulator speaks the govmomi version that CAPV was released with.
 */
export function vcsimBuild(
  capvVersion: string = capvVersionFor(),
  onProgress?: (message: string) => void,
): GoBinaryRequest {
  const release = capvRelease(capvVersion);
  const env = { ...GO_ENV, GOFLAGS: goFlagsFor(release) };
  return {
    cacheDir: vsphereCacheDir('vcsim'),
    what: `the vCenter simulator (govmomi ${release.govmomi})`,
    format: VSPHERE_CACHE_FORMAT,
    keyMaterial: async (go: GoToolchain) => ({
      module: GOVMOMI_MODULE,
      govmomi: release.govmomi,
      capv: release.version,
      go: go.version,
      platform: `${go.goos}/${go.goarch}`,
      ldflags: VCSIM_LDFLAGS,
      env,
      ...(await moduleFiles(release)),
      // Tests are no input of the binary: editing them must not rebuild it.
      sources: await hashTree(join(goModuleDir(), 'vcsim'), (file) => !file.endsWith('_test.go')),
    }),
    binaries: [VCSIM_BINARY],
    steps: [
      {
        name: `the vCenter simulator (govmomi ${release.govmomi})`,
        logName: 'vcsim',
        source: { kind: 'module-dir', dir: goModuleDir() },
        packages: [VCSIM_PACKAGE],
        ldflags: VCSIM_LDFLAGS,
        env: { GOFLAGS: env.GOFLAGS },
        output: VCSIM_BINARY,
      },
    ],
    stampFields: { govmomi: release.govmomi, capv: release.version },
    coldBuildHint: 'a cold build takes a minute or two on 2 cores',
    onProgress,
  };
}

/** The simulator binary, built into `<cache root>/vsphere/vcsim/<key>/` first if needed. */
export async function ensureVcsim(options: EnsureVcsimOptions = {}): Promise<VcsimBinary> {
  const release = capvRelease(options.capvVersion ?? capvVersionFor());
  const entry = await ensureGoBinary(vcsimBuild(release.version, options.onProgress));
  return {
    path: entry.paths[VCSIM_BINARY] ?? join(entry.dir, VCSIM_BINARY),
    govmomi: release.govmomi,
    key: entry.key,
    builtNow: entry.builtNow,
    buildDurationMs: entry.buildDurationMs,
    sizeBytes: entry.sizes[VCSIM_BINARY] ?? 0,
  };
}
