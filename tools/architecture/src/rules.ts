/**
 * The import rules of the workspace, in one place. The test in test/workspace.test.ts holds the real imports to
 * them, and docs/ARCHITECTURE.md's "Import rules" section is generated from them (scripts/gen-docs.ts; a drift test
 * fails when the document and this file disagree).
 */

/**
 * What a package is for decides what it may import.
 * - library: a published package a provider is built from (its `src/` ships).
 * - test-support: the real control plane for tests, benchmarks and tools (`@tally-ipam/testenv`).
 * - app: an executable that composes libraries; nothing imports an app.
 * - e2e: the apps run together; nothing imports it.
 * - tool: workspace tooling (shipping, release checks, this check); never imported by a library.
 */
export type Role = 'library' | 'test-support' | 'app' | 'e2e' | 'tool';

export interface Layer {
  /** Roles whose packages its shipped code (`src/`) may import. */
  shipped: readonly Role[];
  /** Roles whose packages its tests, benchmarks and scripts may import. */
  development: readonly Role[];
}

/** The layering every package rule must fit. No role lists `app` or `e2e`: nothing imports them. */
export const LAYERS: Readonly<Record<Role, Layer>> = {
  library: { shipped: ['library'], development: ['library', 'test-support'] },
  'test-support': { shipped: [], development: [] },
  app: { shipped: ['library'], development: ['library', 'test-support', 'tool'] },
  e2e: { shipped: [], development: ['library', 'test-support', 'tool'] },
  tool: { shipped: ['library', 'test-support'], development: ['library', 'test-support', 'tool'] },
};

export interface ScopedEdge {
  to: string;
  /** The only files (paths inside the package, by prefix) that may make this import. */
  onlyFrom: readonly string[];
  why: string;
}

export interface PackageRule {
  role: Role;
  /** One line for the package table of docs/ARCHITECTURE.md. */
  purpose: string;
  /** Workspace packages any of its shipped code (`src/`) may import; absent: every package its layer ships. */
  shipped?: readonly string[];
  /** Shipped imports allowed only from some files. */
  scoped?: readonly ScopedEdge[];
  /**
   * Workspace packages its tests, benchmarks and scripts may import besides `shipped`; absent: every package
   * its role's layer allows.
   */
  development?: readonly string[];
  /** Package-name prefixes the package may not import: in shipped code only, or in every file (tests too). */
  forbiddenExternals?: readonly { prefix: string; in: 'shipped' | 'every file'; why: string }[];
}

export const PACKAGE_RULES: Readonly<Record<string, PackageRule>> = {
  '@tally-ipam/allocator': {
    role: 'library',
    purpose: 'pure IPv4/IPv6 address and prefix allocation: parsing, intervals, first-free search, no I/O',
    shipped: [],
    development: [],
    forbiddenExternals: [
      {
        prefix: '@kubernetes/',
        in: 'every file',
        why: 'the allocator is pure arithmetic on addresses; it knows nothing of Kubernetes',
      },
      { prefix: 'zod', in: 'every file', why: 'it parses addresses itself; schemas belong to api-types' },
    ],
  },
  '@tally-ipam/api-types': {
    role: 'library',
    purpose: 'zod schemas → TS types and parsers for Tally and Cluster API objects, generated CRDs, API constants',
    shipped: ['@tally-ipam/allocator'],
    development: ['@tally-ipam/testenv'],
    forbiddenExternals: [
      {
        prefix: '@kubernetes/',
        in: 'shipped',
        why: 'api-types describes objects; talking to an API server is controller-kit’s job (tests may, through testenv)',
      },
    ],
  },
  '@tally-ipam/controller-kit': {
    role: 'library',
    purpose:
      'the controller runtime, one subpath per area (`/client`, `/cache`, `/controller`, `/queue`, `/manager`, ' +
      '`/webhook`, `/app`) and the one home of the Cluster API helpers (`/capi`: pause, Paused, conditions)',
    shipped: [],
    scoped: [
      {
        to: '@tally-ipam/api-types',
        onlyFrom: ['src/capi/'],
        why: 'the Cluster API helpers take Cluster API’s names and the Condition schema from their one home; the generic runtime stays free of product types',
      },
    ],
    development: ['@tally-ipam/testenv'],
  },
  '@tally-ipam/ledger': {
    role: 'library',
    purpose:
      'the address ledgers both IPAM front ends hold addresses in: one TallyAddressLedger per address block written by ' +
      'compare-and-swap, entry keys and ledger names, the entries seen as holdings',
    shipped: ['@tally-ipam/allocator', '@tally-ipam/api-types', '@tally-ipam/controller-kit'],
    development: ['@tally-ipam/testenv'],
  },
  '@tally-ipam/ipam-provider': {
    role: 'library',
    purpose:
      'the IPAM provider contract: claim and pool reconcilers, the ledger garbage collector, pool admission webhooks',
    shipped: ['@tally-ipam/allocator', '@tally-ipam/api-types', '@tally-ipam/controller-kit', '@tally-ipam/ledger'],
    development: ['@tally-ipam/testenv'],
  },
  '@tally-ipam/machinepool': {
    role: 'library',
    purpose: 'InfraMachinePool contract helpers for any TypeScript infrastructure provider',
    shipped: ['@tally-ipam/api-types', '@tally-ipam/controller-kit'],
    development: ['@tally-ipam/testenv'],
  },
  '@tally-ipam/metal3-ipam': {
    role: 'library',
    purpose:
      "serving Metal3's IPAM API from the allocator and Tally's address ledgers: IPPool spec to ranges, " +
      'pre-allocations, IPAddress names, and the IPClaim, IPPool and ledger-entry controllers',
    shipped: ['@tally-ipam/allocator', '@tally-ipam/api-types', '@tally-ipam/controller-kit', '@tally-ipam/ledger'],
    development: ['@tally-ipam/ipam-provider', '@tally-ipam/testenv'],
    forbiddenExternals: [
      {
        prefix: '@kubernetes/',
        in: 'every file',
        why: 'it talks to the API server through controller-kit and holds addresses through the ledger package',
      },
    ],
  },
  '@tally-ipam/sim-infra': {
    role: 'library',
    purpose:
      'the sample "Sim" infrastructure provider: SimCluster, SimMachine, SimMachinePool reconcilers consuming IPAM',
    shipped: ['@tally-ipam/api-types', '@tally-ipam/controller-kit', '@tally-ipam/machinepool'],
    development: ['@tally-ipam/ipam-provider', '@tally-ipam/testenv'],
  },
  '@tally-ipam/kubectl-tally': {
    role: 'library',
    purpose:
      'the read-only `kubectl tally` plugin (bin `kubectl-tally`): pools with usage and exhaustion ETA, who holds an ' +
      'address, why a claim waits, leaked addresses and ledger entries',
    shipped: [
      '@tally-ipam/allocator',
      '@tally-ipam/api-types',
      '@tally-ipam/controller-kit',
      '@tally-ipam/ipam-provider',
      '@tally-ipam/ledger',
      '@tally-ipam/metal3-ipam',
    ],
    development: ['@tally-ipam/testenv'],
  },
  '@tally-ipam/testenv': {
    role: 'test-support',
    purpose:
      'real etcd, kube-apiserver, kube-controller-manager (and the Cluster API manager) built from upstream, for tests, ' +
      'benchmarks and the embedded demo',
    shipped: [],
    development: [],
  },
  '@tally-ipam/ipam-controller': {
    role: 'app',
    purpose:
      'the IPAM controller executable (flags, manager wiring, `npm start` demo), manifests, clusterctl artifacts',
    shipped: [
      '@tally-ipam/api-types',
      '@tally-ipam/controller-kit',
      '@tally-ipam/ipam-provider',
      '@tally-ipam/metal3-ipam',
    ],
  },
  '@tally-ipam/sim-infra-controller': {
    role: 'app',
    purpose: 'the Sim infrastructure controller executable, its manifests and clusterctl artifacts',
    shipped: ['@tally-ipam/controller-kit', '@tally-ipam/sim-infra'],
  },
  '@tally-ipam/e2e': {
    role: 'e2e',
    purpose: 'the apps (run as processes) together with the real Cluster API manager, or a kind cluster',
    shipped: [],
  },
  '@tally-ipam/publish-check': {
    role: 'tool',
    purpose: 'release checks: every publishable package packs, installs from its tarball and imports under Node 20',
    shipped: [],
  },
  '@tally-ipam/ship': {
    role: 'tool',
    purpose: 'clusterctl components, the daemonless controller image, and the shipping test suites every app runs',
    shipped: ['@tally-ipam/controller-kit', '@tally-ipam/testenv'],
  },
  '@tally-ipam/vsphere': {
    role: 'tool',
    purpose:
      'the Cluster API vSphere provider (CAPV) unmodified, built from the Go module proxy, and a govmomi vCenter ' +
      'simulator on loopback: the CAPV scenario of the e2e suite, against Tally and the reference provider',
    shipped: ['@tally-ipam/testenv'],
  },
  '@tally-ipam/architecture': {
    role: 'tool',
    purpose:
      'this map checked: declared dependencies, allowed imports, no reach into other packages, no cycles of packages or of files',
    shipped: [],
  },
};

/**
 * Imports the layering forbids, paths that leave their package, and circles of imports between the files of a
 * package's `src/`, that exist today, each allowed only from the files named, with the reason and the way out. The
 * test fails when an exception is no longer used (remove it) or when it would fit the layering (make it a rule
 * instead).
 */
export interface KnownException {
  /**
   * An import of a workspace package, a file of another package named by path (`new URL(…, import.meta.url)`), or a
   * circle of imports between files of `from`'s `src/` (exactly `files`: a circle that grows is reported again).
   */
  kind: 'import' | 'file reference' | 'file cycle';
  from: string;
  /**
   * A package name for an import; a directory of the workspace (`apps/ipam-controller/`) for a file reference; `from`
   * itself for a file cycle.
   */
  to: string;
  /** Paths inside `from`, by prefix; for a file cycle, the files of the circle. */
  files: readonly string[];
  reason: string;
  wayOut: string;
}

export const KNOWN_EXCEPTIONS: readonly KnownException[] = [
  {
    kind: 'import',
    from: '@tally-ipam/ipam-controller',
    to: '@tally-ipam/testenv',
    files: ['src/demo/'],
    reason:
      '`npm start` with no cluster named runs the demo on an embedded control plane, so the app starts testenv at ' +
      'run time; main.ts imports the demo statically, so testenv is part of the controller bundle and image too',
    wayOut:
      'give the demo its own entry point (what `npm start` runs) so the image bundle, built from dist/main.js, ' +
      'no longer contains testenv; a dynamic import alone is not enough, esbuild bundles it all the same',
  },
];

/**
 * The rule of a package under `tools/` that has no entry of its own: a tool, importing whatever the tool layer
 * allows. New tools need no edit here to pass; give one an entry to show it in docs/ARCHITECTURE.md.
 */
export function defaultToolRule(description: string | undefined): PackageRule {
  return { role: 'tool', purpose: description ?? 'a workspace tool' };
}
