/**
 * Every pinned version of the test control plane, in one place. Changing anything here changes the binary cache key,
 * so the next run rebuilds; keep the build flags identical to the ones used to warm a machine's GOCACHE.
 */

/** kube-apiserver and kube-controller-manager, built from `k8s.io/kubernetes` through the wrapper module. */
export const KUBERNETES_VERSION = 'v1.34.10';
/** The etcd server that k8s 1.34's own go.mod requires (same module graph, so the compile cache is shared). */
export const ETCD_VERSION = 'v3.6.4';
/**
 * Cluster API: `capiCRDPaths` reads its CRDs (and `startCapiManager` its webhook manifests) from the Go module cache,
 * and `ensureCapiManager` builds its core manager from the same module version, so CRDs and manager always match.
 */
export const CLUSTER_API_MODULE = 'sigs.k8s.io/cluster-api';
export const CLUSTER_API_VERSION = 'v1.12.10';
/** The core manager's main package is the module root, so `go install` names the binary after the module. */
export const CLUSTER_API_MANAGER_BINARY = 'cluster-api';
/** The oldest Go that builds k8s 1.34 (its go.mod says `go 1.24.0`). */
export const MINIMUM_GO_VERSION = { major: 1, minor: 24 } as const;

/** The Go packages of the wrapper module and the binary name each is installed under. */
export const GO_PACKAGES = [
  { binary: 'kube-apiserver', goPackage: 'k8s.io/kubernetes/cmd/kube-apiserver', buildOutputName: 'kube-apiserver' },
  {
    binary: 'kube-controller-manager',
    goPackage: 'k8s.io/kubernetes/cmd/kube-controller-manager',
    buildOutputName: 'kube-controller-manager',
  },
  // A module path ending in /vN names its binary after the element before it.
  { binary: 'etcd', goPackage: 'go.etcd.io/etcd/server/v3', buildOutputName: 'server' },
] as const;

export type BinaryName = (typeof GO_PACKAGES)[number]['binary'];

/** Upstream's release tags (hack/lib/golang.sh); grpcnotrace since 1.34. */
export const GO_BUILD_TAGS = 'selinux,notest,grpcnotrace';

function kubernetesMinor(version: string): { major: string; minor: string } {
  const match = /^v(\d+)\.(\d+)\.\d+$/.exec(version);
  if (!match?.[1] || !match[2]) throw new Error(`KUBERNETES_VERSION ${version} is not of the form vMAJOR.MINOR.PATCH`);
  return { major: match[1], minor: match[2] };
}

const { major, minor } = kubernetesMinor(KUBERNETES_VERSION);

/**
 * Without these, `/version` reports `v0.0.0-master+$Format:%H$`, which breaks version checks such as Cluster API's.
 * The commit and date are fixed so the link step stays cacheable.
 */
export const GO_LDFLAGS = [
  '-s',
  '-w',
  `-X k8s.io/component-base/version.gitVersion=${KUBERNETES_VERSION}`,
  `-X k8s.io/component-base/version.gitMajor=${major}`,
  `-X k8s.io/component-base/version.gitMinor=${minor}`,
  '-X k8s.io/component-base/version.gitTreeState=clean',
  '-X k8s.io/component-base/version.gitCommit=0000000000000000000000000000000000000000',
  '-X k8s.io/component-base/version.buildDate=2026-01-01T00:00:00Z',
].join(' ');

/** Environment for every Go command: no toolchain download, static binaries, a deletable module cache. */
export const GO_ENV = {
  GOTOOLCHAIN: 'local',
  CGO_ENABLED: '0',
  GOFLAGS: '-modcacherw',
  GOWORK: 'off',
} as const;

/** Bumped when the layout of a cache entry changes. */
export const CACHE_FORMAT = 1;

function clusterAPIMinor(version: string): { major: string; minor: string } {
  const match = /^v(\d+)\.(\d+)\.\d+$/.exec(version);
  if (!match?.[1] || !match[2]) throw new Error(`CLUSTER_API_VERSION ${version} is not of the form vMAJOR.MINOR.PATCH`);
  return { major: match[1], minor: match[2] };
}

const capi = clusterAPIMinor(CLUSTER_API_VERSION);

/**
 * The manager logs `Version: …` at start from these (upstream's `hack/version.sh` sets the same variables); fixed
 * commit and date keep the link step cacheable.
 */
export const CLUSTER_API_LDFLAGS = [
  '-s',
  '-w',
  `-X sigs.k8s.io/cluster-api/version.gitVersion=${CLUSTER_API_VERSION}`,
  `-X sigs.k8s.io/cluster-api/version.gitMajor=${capi.major}`,
  `-X sigs.k8s.io/cluster-api/version.gitMinor=${capi.minor}`,
  '-X sigs.k8s.io/cluster-api/version.gitTreeState=clean',
  '-X sigs.k8s.io/cluster-api/version.gitCommit=0000000000000000000000000000000000000000',
  '-X sigs.k8s.io/cluster-api/version.buildDate=2026-01-01T00:00:00Z',
].join(' ');

/** Bumped when the layout of a Cluster API manager cache entry changes. */
export const CLUSTER_API_CACHE_FORMAT = 1;
