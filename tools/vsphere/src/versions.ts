import { clusterApiVersion, DEFAULT_CLUSTER_API_VERSION } from '@tally-ipam/testenv';

/**
 * The CAPV releases this package builds, each with the module files under `go/` that pin its build graph, and the
 * Cluster API release each runs against. A release is a parameter everywhere (`ensureCapv({ version })`,
 * `startCapv(plane, { version })`); without one, the release paired with the run's Cluster API release
 * (`capvVersionFor(clusterApiVersion())`). Adding one is a new entry here plus its module files (see the README,
 * "Adding a CAPV release").
 */

export const CAPV_MODULE = 'sigs.k8s.io/cluster-api-provider-vsphere';
export const GOVMOMI_MODULE = 'github.com/vmware/govmomi';

export interface CapvRelease {
  /** e.g. `v1.15.2`. */
  readonly version: string;
  /** The commit of the release tag (the module proxy's `Origin.Hash`), linked into the binary's version info. */
  readonly commit: string;
  /** The govmomi version this release's go.mod requires; the simulator is built against the same. */
  readonly govmomi: string;
  /** The Cluster API library the release was built on upstream, and the one it is built against here. */
  readonly capiUpstream: string;
  readonly capiBuiltWith: string;
  /** The `cluster.x-k8s.io/<contract>` label value its CRDs carry (its `config/default/crd` kustomization). */
  readonly contract: string;
  /** Which `go/` module file builds it, relative to `go/`: `go.mod` or a file passed with `-modfile`. */
  readonly modfile: string;
  /**
   * How that module file relates to the release's own go.mod: `released` — exactly its module graph (the release as a
   * tool, its replace directives restated; `test/graph.test.ts` compares every version); `shared` — the modules it
   * shares with testenv's Cluster API manager raised to the manager's versions (README, "Why the graph is not exactly
   * CAPV's go.mod").
   */
  readonly graph: 'released' | 'shared';
  /** The Cluster API release (testenv's `CLUSTER_API_RELEASES`) this CAPV runs against in the compatibility job. */
  readonly clusterApi: string;
  /** The API version its CRDs store (and CAPV writes); the others it serves go through its conversion webhook. */
  readonly storageVersion: string;
}

export const CAPV_RELEASES = {
  'v1.15.2': {
    version: 'v1.15.2',
    commit: '91522fcca32856a440934dd8c3d5f15ae6932cd5',
    govmomi: 'v0.52.0',
    capiUpstream: 'v1.12.1',
    capiBuiltWith: 'v1.12.10',
    contract: 'v1beta1',
    modfile: 'go.mod',
    graph: 'shared',
    clusterApi: 'v1.12.10',
    storageVersion: 'v1beta1',
  },
  // Built on Cluster API v1.13 and run against a v1.14 core, as a user running the current CAPV on the current
  // Cluster API does: no CAPV release is built on v1.14 yet.
  'v1.16.1': {
    version: 'v1.16.1',
    commit: '5b57d1db50a72f8d7ac605f9860f18d517215b4d',
    govmomi: 'v0.53.0',
    capiUpstream: 'v1.13.1',
    capiBuiltWith: 'v1.13.1',
    contract: 'v1beta2',
    modfile: 'capv-v1.16.1.mod',
    graph: 'released',
    clusterApi: 'v1.14.2',
    storageVersion: 'v1beta2',
  },
} as const satisfies Record<string, CapvRelease>;

export type CapvVersion = keyof typeof CAPV_RELEASES;

/**
 * The CAPV release that runs against a Cluster API release (default: the run's, testenv's `clusterApiVersion()`:
 * `TALLY_CAPI_VERSION`, else its default); an error for a Cluster API release no CAPV release is paired with.
 */
export function capvVersionFor(capiVersion?: string): CapvVersion {
  const capi = clusterApiVersion(capiVersion);
  const paired = (Object.values(CAPV_RELEASES) as CapvRelease[]).find((release) => release.clusterApi === capi);
  if (!paired) {
    throw new Error(
      `no CAPV release runs against Cluster API ${capi} (pairs: ${Object.values(CAPV_RELEASES)
        .map((release) => `CAPV ${release.version} on ${release.clusterApi}`)
        .join(', ')})`,
    );
  }
  return paired.version as CapvVersion;
}

/** The release paired with testenv's default Cluster API release; `capvVersionFor()` follows the run's. */
export const DEFAULT_CAPV_VERSION: CapvVersion = capvVersionFor(DEFAULT_CLUSTER_API_VERSION);

export function capvRelease(version: string): CapvRelease {
  const release = (CAPV_RELEASES as Readonly<Record<string, CapvRelease>>)[version];
  if (!release) {
    throw new Error(
      `CAPV ${version} is not one this package builds (known: ${Object.keys(CAPV_RELEASES).join(', ')}); ` +
        'add it to CAPV_RELEASES with its module file under go/',
    );
  }
  return release;
}

/** Bumped when the layout of a cache entry changes. */
export const VSPHERE_CACHE_FORMAT = 1;

/** CAPV's own link flags (`hack/version.sh`), with a fixed build date so the link step stays cacheable. */
export function capvLdflags(release: CapvRelease): string {
  const match = /^v(\d+)\.(\d+)\.\d+$/.exec(release.version);
  if (!match?.[1] || !match[2]) throw new Error(`CAPV version ${release.version} is not vMAJOR.MINOR.PATCH`);
  const pkg = `${CAPV_MODULE}/pkg/version`;
  return [
    '-s',
    '-w',
    `-X ${pkg}.gitVersion=${release.version}`,
    `-X ${pkg}.gitMajor=${match[1]}`,
    `-X ${pkg}.gitMinor=${match[2]}`,
    `-X ${pkg}.gitCommit=${release.commit}`,
    `-X ${pkg}.gitTreeState=clean`,
    `-X ${pkg}.buildDate=2026-01-01T00:00:00Z`,
  ].join(' ');
}
