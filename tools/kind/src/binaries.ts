import { access, chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  commandOutput,
  detectGo,
  ensureCacheEntry,
  formatBytes,
  formatDuration,
  GO_BUILD_TAGS,
  GO_ENV,
  GO_LDFLAGS,
  type GoToolchain,
  KUBERNETES_VERSION,
  runGoCommand,
} from '@tally-ipam/testenv';
import { z } from 'zod';
import { hashTrees, shortKey } from './hash.js';
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

const stampSchema = z.object({
  format: z.literal(KIND_CACHE_FORMAT),
  key: z.string(),
  goVersion: z.string(),
  builtAt: z.string(),
  buildDurationMs: z.number(),
  stepDurationsMs: z.record(z.string(), z.number()),
  sizes: z.record(z.string(), z.number()),
});
type Stamp = z.infer<typeof stampSchema>;

const STAMP_FILE = 'stamp.json';

async function cacheKey(go: GoToolchain): Promise<string> {
  return shortKey({
    format: KIND_CACHE_FORMAT,
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
  });
}

async function readCompleteEntry(dir: string): Promise<Stamp | undefined> {
  try {
    const stamp = stampSchema.parse(JSON.parse(await readFile(join(dir, STAMP_FILE), 'utf8')));
    await Promise.all(BINARY_NAMES.map((name) => access(join(dir, name))));
    return stamp;
  } catch {
    return undefined;
  }
}

async function build(
  go: GoToolchain,
  key: string,
  tmpDir: string,
  logPath: string,
  progress: (m: string) => void,
): Promise<Stamp> {
  const started = Date.now();
  const stepDurationsMs: Record<string, number> = {};
  const timed = async (name: string, work: () => Promise<void>): Promise<void> => {
    const stepStarted = Date.now();
    progress(`building ${name} (log: ${logPath})`);
    await work();
    stepDurationsMs[name] = Date.now() - stepStarted;
    progress(`built ${name} in ${formatDuration(stepDurationsMs[name])}`);
  };
  await timed(`${KUBE_PACKAGES.map((p) => p.binary).join(', ')} ${KUBERNETES_VERSION}`, () =>
    runGoCommand(
      [
        'build',
        '-v',
        '-trimpath',
        '-tags',
        GO_BUILD_TAGS,
        '-ldflags',
        GO_LDFLAGS,
        '-o',
        `${tmpDir}/`,
        ...KUBE_PACKAGES.map((p) => p.goPackage),
      ],
      { cwd: packageDir('go/kube'), logPath: `${logPath}.kube`, what: 'the node Kubernetes binaries', progress },
    ),
  );
  await timed(`coredns ${COREDNS_VERSION}`, () =>
    runGoCommand(['install', '-v', '-trimpath', '-ldflags', '-s -w', `${COREDNS_MODULE}@${COREDNS_VERSION}`], {
      cwd: '/',
      logPath: `${logPath}.coredns`,
      what: 'coredns',
      progress,
      env: { GOBIN: tmpDir },
    }),
  );
  await timed(`kind ${KIND_VERSION}`, () =>
    runGoCommand(['install', '-v', '-trimpath', '-ldflags', '-s -w', `${KIND_MODULE}@${KIND_VERSION}`], {
      cwd: '/',
      logPath: `${logPath}.kind`,
      what: 'kind',
      progress,
      env: { GOBIN: tmpDir },
    }),
  );
  await timed('pause', () =>
    runGoCommand(['build', '-v', '-trimpath', '-ldflags', '-s -w', '-o', join(tmpDir, 'pause'), '.'], {
      cwd: packageDir('go/pause'),
      logPath: `${logPath}.pause`,
      what: 'pause',
      progress,
    }),
  );
  const sizes: Record<string, number> = {};
  for (const name of BINARY_NAMES) {
    await chmod(join(tmpDir, name), 0o755);
    sizes[name] = (await stat(join(tmpDir, name))).size;
  }
  // A bad build never enters the cache: each binary must run and report the pinned version.
  const kubeadm = await commandOutput(join(tmpDir, 'kubeadm'), ['version', '-o', 'short']);
  if (kubeadm !== KUBERNETES_VERSION)
    throw new Error(`kubeadm version printed "${kubeadm}", expected ${KUBERNETES_VERSION}`);
  const kind = await commandOutput(join(tmpDir, 'kind'), ['version']);
  if (!kind.includes(KIND_VERSION)) throw new Error(`kind version printed "${kind}", expected ${KIND_VERSION}`);
  const coredns = await commandOutput(join(tmpDir, 'coredns'), ['-version']);
  if (!coredns.includes(COREDNS_VERSION.replace(/^v/, ''))) {
    throw new Error(`coredns -version printed "${coredns}", expected ${COREDNS_VERSION}`);
  }
  const stamp: Stamp = {
    format: KIND_CACHE_FORMAT,
    key,
    goVersion: go.version,
    builtAt: new Date().toISOString(),
    buildDurationMs: Date.now() - started,
    stepDurationsMs,
    sizes,
  };
  await writeFile(join(tmpDir, STAMP_FILE), `${JSON.stringify(stamp, null, 2)}\n`);
  progress(
    `built the kind binaries in ${formatDuration(stamp.buildDurationMs)}: ` +
      Object.entries(sizes)
        .map(([name, size]) => `${name} ${formatBytes(size)}`)
        .join(', '),
  );
  return stamp;
}

/**
 * kubelet, kubeadm, kubectl, kube-scheduler, kube-proxy (Kubernetes at testenv's pin), CoreDNS, pause and kind,
 * built from the Go module proxy into `<cache>/kind/binaries/<key>`; one builder at a time, others wait.
 */
export async function ensureKindBinaries(onProgress: (message: string) => void = () => {}): Promise<KindBinaries> {
  const go = await detectGo();
  const key = await cacheKey(go);
  const result = await ensureCacheEntry({
    cacheDir: join(kindCacheDir(), 'binaries'),
    key,
    what: 'the kind node binaries',
    read: readCompleteEntry,
    build: (tmpDir, logPath) => build(go, key, tmpDir, logPath, onProgress),
    progress: onProgress,
  });
  const paths = Object.fromEntries(BINARY_NAMES.map((name) => [name, join(result.dir, name)])) as Record<
    KindBinaryName,
    string
  >;
  return {
    dir: result.dir,
    key,
    paths,
    builtNow: result.builtNow,
    buildDurationMs: result.entry.buildDurationMs,
    sizes: result.entry.sizes,
  };
}
