import { join } from 'node:path';
import {
  commandOutput,
  ensureGoBinary,
  GO_BUILD_TAGS,
  GO_ENV,
  GO_LDFLAGS,
  type GoBinaryRequest,
  type GoToolchain,
  KUBERNETES_VERSION,
} from '@tally-ipam/testenv';
import { hashTrees } from './hash.js';
import { kindCacheDir, packageDir } from './paths.js';
import {
  COREDNS_MODULE,
  COREDNS_VERSION,
  KIND_CACHE_FORMAT,
  KIND_MODULE,
  KIND_VERSION,
  PAUSE_VERSION,
} from './versions.js';

/** The node's Kubernetes binaries testenv does not build, from the wrapper module go/kube. */
const KUBE_PACKAGES = [
  { binary: 'kubelet', goPackage: 'k8s.io/kubernetes/cmd/kubelet' },
  { binary: 'kubeadm', goPackage: 'k8s.io/kubernetes/cmd/kubeadm' },
  { binary: 'kubectl', goPackage: 'k8s.io/kubernetes/cmd/kubectl' },
  { binary: 'kube-scheduler', goPackage: 'k8s.io/kubernetes/cmd/kube-scheduler' },
  { binary: 'kube-proxy', goPackage: 'k8s.io/kubernetes/cmd/kube-proxy' },
] as const;

const BINARY_NAMES = [...KUBE_PACKAGES.map((p) => p.binary), 'coredns', 'pause', 'kind'] as const;
export type KindBinaryName = (typeof BINARY_NAMES)[number];

export interface KindBinaries {
  readonly dir: string;
  readonly key: string;
  readonly paths: Readonly<Record<KindBinaryName, string>>;
  readonly builtNow: boolean;
  readonly buildDurationMs: number;
  readonly sizes: Readonly<Record<string, number>>;
}

/** A bad build never enters the cache: each binary must run and report the pinned version. */
async function verifyBuild(paths: Readonly<Record<string, string>>): Promise<void> {
  const checks = [
    { name: 'kubeadm', args: ['version', '-o', 'short'], expected: KUBERNETES_VERSION },
    { name: 'kind', args: ['version'], expected: KIND_VERSION },
    { name: 'coredns', args: ['-version'], expected: COREDNS_VERSION.replace(/^v/, '') },
  ];
  for (const { name, args, expected } of checks) {
    const printed = await commandOutput(paths[name] ?? name, args);
    if (!printed.includes(expected))
      throw new Error(`${name} ${args.join(' ')} printed "${printed}", expected ${expected}`);
  }
}

/** What `ensureKindBinaries` builds, in four steps; exported so a test pins its cache key. */
export function kindBinariesBuild(onProgress?: (message: string) => void): GoBinaryRequest {
  // Both modules have no replace directives, so `go install module@version` builds them as their authors pinned.
  const installed = [
    { name: 'coredns', module: COREDNS_MODULE, version: COREDNS_VERSION },
    { name: 'kind', module: KIND_MODULE, version: KIND_VERSION },
  ];
  return {
    cacheDir: join(kindCacheDir(), 'binaries'),
    what: 'the kind node binaries',
    format: KIND_CACHE_FORMAT,
    keyMaterial: async (go: GoToolchain) => ({
      kubernetes: KUBERNETES_VERSION,
      coredns: COREDNS_VERSION,
      kind: KIND_VERSION,
      pause: PAUSE_VERSION,
      go: go.version,
      platform: `${go.goos}/${go.goarch}`,
      tags: GO_BUILD_TAGS,
      ldflags: GO_LDFLAGS,
      env: GO_ENV,
      packages: KUBE_PACKAGES,
      sources: await hashTrees([packageDir('go')]),
    }),
    binaries: BINARY_NAMES,
    steps: [
      {
        name: `${KUBE_PACKAGES.map((p) => p.binary).join(', ')} ${KUBERNETES_VERSION}`,
        logName: 'kube',
        source: { kind: 'module-dir', dir: packageDir('go/kube') },
        packages: KUBE_PACKAGES.map((p) => p.goPackage),
        tags: GO_BUILD_TAGS,
        ldflags: GO_LDFLAGS,
      },
      ...installed.map(({ name, module, version }) => ({
        name: `${name} ${version}`,
        logName: name,
        source: { kind: 'install', version } as const,
        packages: [module],
        ldflags: '-s -w',
      })),
      {
        name: 'pause',
        logName: 'pause',
        source: { kind: 'module-dir', dir: packageDir('go/pause') },
        packages: ['.'],
        ldflags: '-s -w',
        output: 'pause',
      },
    ],
    verify: verifyBuild,
    onProgress,
  };
}

/**
 * kubelet, kubeadm, kubectl, kube-scheduler, kube-proxy (Kubernetes at testenv's pin), CoreDNS, pause and kind,
 * built from the Go module proxy into `<cache>/kind/binaries/<key>`; one builder at a time, others wait.
 */
export async function ensureKindBinaries(onProgress: (message: string) => void = () => {}): Promise<KindBinaries> {
  const entry = await ensureGoBinary(kindBinariesBuild(onProgress));
  return {
    dir: entry.dir,
    key: entry.key,
    paths: entry.paths as Record<KindBinaryName, string>,
    builtNow: entry.builtNow,
    buildDurationMs: entry.buildDurationMs,
    sizes: entry.sizes,
  };
}
