import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { commandOutput } from './build-cache.js';
import type { GoToolchain } from './go.js';
import { ensureGoBinary, type GoBinaryRequest } from './go-binary.js';
import { controlPlaneCacheDir, wrapperModuleDir } from './paths.js';
import {
  type BinaryName,
  CACHE_FORMAT,
  ETCD_VERSION,
  GO_BUILD_TAGS,
  GO_ENV,
  GO_LDFLAGS,
  GO_PACKAGES,
  KUBERNETES_VERSION,
} from './versions.js';

export interface ControlPlaneBinaries {
  /** The cache entry holding the binaries. */
  readonly dir: string;
  readonly etcd: string;
  readonly kubeAPIServer: string;
  readonly kubeControllerManager: string;
  /** Hash of everything that determines the binaries' content. */
  readonly key: string;
  readonly kubernetesVersion: string;
  readonly etcdVersion: string;
  readonly goVersion: string;
  /** True when this call built them (a cold or relinking build), false when they came from the cache. */
  readonly builtNow: boolean;
  /** How long the build took when it happened, in this or an earlier process. */
  readonly buildDurationMs: number;
  readonly sizes: Readonly<Record<BinaryName, number>>;
}

export interface EnsureBinariesOptions {
  /** Called with one human-readable line per step, and every ~15 s while Go builds. */
  onProgress?: (message: string) => void;
}

/** Checks the fresh binaries run and report the pinned versions, so a bad build never enters the cache. */
async function verifyBuild(paths: Readonly<Record<string, string>>): Promise<void> {
  const expected: Readonly<Record<BinaryName, string>> = {
    'kube-apiserver': KUBERNETES_VERSION,
    'kube-controller-manager': KUBERNETES_VERSION,
    etcd: ETCD_VERSION.slice(1),
  };
  for (const [binary, version] of Object.entries(expected)) {
    const printed = await commandOutput(paths[binary] ?? binary, ['--version']);
    if (!printed.includes(version)) throw new Error(`${binary} --version printed "${printed}", expected ${version}`);
  }
}

/** What `ensureBinaries` builds: all three at once with `go build` in the wrapper module (they share most work). */
export function controlPlaneBuild(onProgress?: (message: string) => void): GoBinaryRequest {
  return {
    cacheDir: controlPlaneCacheDir(),
    what: 'the control plane binaries',
    format: CACHE_FORMAT,
    keyMaterial: async (go: GoToolchain) => {
      const moduleDir = wrapperModuleDir();
      const [goMod, goSum] = await Promise.all([
        readFile(join(moduleDir, 'go.mod'), 'utf8'),
        readFile(join(moduleDir, 'go.sum'), 'utf8'),
      ]);
      return {
        kubernetes: KUBERNETES_VERSION,
        etcd: ETCD_VERSION,
        go: go.version,
        platform: `${go.goos}/${go.goarch}`,
        tags: GO_BUILD_TAGS,
        ldflags: GO_LDFLAGS,
        env: GO_ENV,
        packages: GO_PACKAGES,
        goMod,
        goSum,
      };
    },
    binaries: GO_PACKAGES.map((p) => p.binary),
    steps: [
      {
        name: `kube-apiserver + kube-controller-manager ${KUBERNETES_VERSION} and etcd ${ETCD_VERSION}`,
        logName: 'kube',
        source: { kind: 'module-dir', dir: wrapperModuleDir() },
        packages: GO_PACKAGES.map((p) => p.goPackage),
        tags: GO_BUILD_TAGS,
        ldflags: GO_LDFLAGS,
        renames: Object.fromEntries(
          GO_PACKAGES.filter((p) => p.buildOutputName !== p.binary).map((p) => [p.buildOutputName, p.binary]),
        ),
      },
    ],
    verify: verifyBuild,
    stampFields: { kubernetesVersion: KUBERNETES_VERSION, etcdVersion: ETCD_VERSION },
    coldBuildHint: 'a cold build takes many minutes on 2 cores',
    onProgress,
  };
}

/**
 * Returns the pinned etcd, kube-apiserver and kube-controller-manager binaries, building them into the cache first
 * if needed. Safe to call from many processes at once: one builds while the others wait for its result.
 */
export async function ensureBinaries(options: EnsureBinariesOptions = {}): Promise<ControlPlaneBinaries> {
  const entry = await ensureGoBinary(controlPlaneBuild(options.onProgress));
  const size = (name: BinaryName): number => entry.sizes[name] ?? 0;
  return {
    dir: entry.dir,
    etcd: join(entry.dir, 'etcd'),
    kubeAPIServer: join(entry.dir, 'kube-apiserver'),
    kubeControllerManager: join(entry.dir, 'kube-controller-manager'),
    key: entry.key,
    kubernetesVersion: KUBERNETES_VERSION,
    etcdVersion: ETCD_VERSION,
    goVersion: entry.goVersion,
    builtNow: entry.builtNow,
    buildDurationMs: entry.buildDurationMs,
    sizes: {
      etcd: size('etcd'),
      'kube-apiserver': size('kube-apiserver'),
      'kube-controller-manager': size('kube-controller-manager'),
    },
  };
}
