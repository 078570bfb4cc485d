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
 * and `ensureCapiManager` / `ensureClusterctl` build the core manager and clusterctl from the same module version, so
 * CRDs, webhooks, manager and clusterctl always match. Which release: the `version` option of each of them, else
 * `TALLY_CAPI_VERSION`, else `DEFAULT_CLUSTER_API_VERSION` (`clusterApiVersion()`).
 */
export const CLUSTER_API_MODULE = 'sigs.k8s.io/cluster-api';
/** The binary name in every cache entry (what `go install` of the module root named it, kept for all releases). */
export const CLUSTER_API_MANAGER_BINARY = 'cluster-api';
/** The environment variable that selects the Cluster API release for a whole run (a key of `CLUSTER_API_RELEASES`). */
export const CLUSTER_API_VERSION_ENV = 'TALLY_CAPI_VERSION';

/** A range of Kubernetes minors, both ends included. */
export interface KubernetesRange {
  readonly min: string;
  readonly max: string;
}

export interface ClusterApiRelease {
  readonly version: string;
  /**
   * The core provider's kustomize tree in the module (CRDs, webhook manifests, `default/`): `config` up to v1.13,
   * `core/config` since v1.14 moved the core provider into `core/`.
   */
  readonly coreConfigDir: string;
  /** The core manager's main package inside the module: the root up to v1.13, `core` since v1.14. */
  readonly managerPackage: string;
  /**
   * Modules the release's go.mod replaces with a directory of its own repository (v1.14: `sigs.k8s.io/cluster-api/api
   * => ./api`). A module zip never holds a nested module, so the build puts each, at the release's version from the
   * proxy, where the replace points; and `go install pkg@version` refuses a go.mod with replace directives.
   */
  readonly nestedModules: readonly { readonly dir: string; readonly module: string }[];
  /** Build tags of the manager as the release's Dockerfile builds it (clusterctl is built without). */
  readonly managerTags?: string;
  /** What its go.mod requires, for people reading the table. */
  readonly kubernetesLibraries: string;
  readonly controllerRuntime: string;
  /** Kubernetes versions it supports, from `docs/book/src/reference/versions.md` of the release's own module. */
  readonly managementKubernetes: KubernetesRange;
  readonly workloadKubernetes: KubernetesRange;
  /** The cert-manager clusterctl installs by default (`cmd/clusterctl/client/config/cert_manager_client.go`). */
  readonly certManager: string;
}

/**
 * The Cluster API releases testenv builds and runs. The default is the current release; the oldest is the oldest one
 * still supported upstream (v1.12 goes end-of-life when v1.15.0 ships). Each runs against this package's kube-apiserver
 * (KUBERNETES_VERSION), which both support as a management cluster.
 */
export const CLUSTER_API_RELEASES = {
  'v1.12.10': {
    version: 'v1.12.10',
    coreConfigDir: 'config',
    managerPackage: '.',
    nestedModules: [],
    kubernetesLibraries: 'v0.34.3',
    controllerRuntime: 'v0.22.5',
    managementKubernetes: { min: 'v1.31', max: 'v1.35' },
    workloadKubernetes: { min: 'v1.29', max: 'v1.35' },
    certManager: 'v1.20.3',
  },
  'v1.14.2': {
    version: 'v1.14.2',
    coreConfigDir: 'core/config',
    managerPackage: './core',
    nestedModules: [{ dir: 'api', module: 'sigs.k8s.io/cluster-api/api' }],
    // "TODO: Remove fieldsv1string once build tag is switched" (its Dockerfile): metav1.FieldsV1 held as an interned
    // string instead of bytes, what the released image runs.
    managerTags: 'fieldsv1string',
    kubernetesLibraries: 'v0.36.3',
    controllerRuntime: 'v0.24.1',
    managementKubernetes: { min: 'v1.33', max: 'v1.37' },
    workloadKubernetes: { min: 'v1.31', max: 'v1.37' },
    certManager: 'v1.21.1',
  },
} as const satisfies Record<string, ClusterApiRelease>;

export type ClusterApiVersion = keyof typeof CLUSTER_API_RELEASES;

/** The release used when none is named, from now on. */
export const DEFAULT_CLUSTER_API_VERSION: ClusterApiVersion = 'v1.14.2';
/** The oldest release still supported, which the compatibility job runs too. */
export const OLDEST_CLUSTER_API_VERSION: ClusterApiVersion = 'v1.12.10';
/** The release of `version`, or an error that lists the supported ones. */
export function clusterApiRelease(version: string): ClusterApiRelease {
  const release = (CLUSTER_API_RELEASES as Readonly<Record<string, ClusterApiRelease>>)[version];
  if (!release) {
    throw new Error(
      `Cluster API ${version} is not a release testenv builds (supported: ${Object.keys(CLUSTER_API_RELEASES).join(', ')})`,
    );
  }
  return release;
}

/**
 * The Cluster API release of this run: `explicit` when given, else `TALLY_CAPI_VERSION`, else the default. An unknown
 * version is an error, never a silent fallback to the default.
 */
export function clusterApiVersion(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env[CLUSTER_API_VERSION_ENV]?.trim();
  const version = explicit ?? (fromEnv ? fromEnv : DEFAULT_CLUSTER_API_VERSION);
  try {
    return clusterApiRelease(version).version;
  } catch (error) {
    const source = explicit === undefined && fromEnv ? ` (from ${CLUSTER_API_VERSION_ENV})` : '';
    throw new Error(`${error instanceof Error ? error.message : String(error)}${source}`, { cause: error });
  }
}
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
  if (!match?.[1] || !match[2]) throw new Error(`Cluster API version ${version} is not of the form vMAJOR.MINOR.PATCH`);
  return { major: match[1], minor: match[2] };
}

/**
 * The manager logs `Version: …` at start from these (upstream's `hack/version.sh` sets the same variables); fixed
 * commit and date keep the link step cacheable.
 */
export function clusterApiLdflags(version: string): string {
  const capi = clusterAPIMinor(version);
  return [
    '-s',
    '-w',
    `-X sigs.k8s.io/cluster-api/version.gitVersion=${version}`,
    `-X sigs.k8s.io/cluster-api/version.gitMajor=${capi.major}`,
    `-X sigs.k8s.io/cluster-api/version.gitMinor=${capi.minor}`,
    '-X sigs.k8s.io/cluster-api/version.gitTreeState=clean',
    '-X sigs.k8s.io/cluster-api/version.gitCommit=0000000000000000000000000000000000000000',
    '-X sigs.k8s.io/cluster-api/version.buildDate=2026-01-01T00:00:00Z',
  ].join(' ');
}

/** Bumped when the layout of a Cluster API manager cache entry changes. */
export const CLUSTER_API_CACHE_FORMAT = 1;
