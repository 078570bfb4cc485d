/**
 * The CAPV releases this package builds, each with the module files under `go/` that pin its build graph. A release
 * is a parameter everywhere (`ensureCapv({ version })`, `startCapv(plane, { version })`): adding one is a new entry
 * here plus its module files (see the README, "Adding a CAPV release").
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
  },
} as const satisfies Record<string, CapvRelease>;

export type CapvVersion = keyof typeof CAPV_RELEASES;

/** The release used when none is named: the one built on the Cluster API minor testenv runs (v1.12). */
export const DEFAULT_CAPV_VERSION: CapvVersion = 'v1.15.2';

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
