import { copyFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import {
  cacheRoot,
  commandOutput,
  ensureGoBinary,
  GO_ENV,
  type GoBinaryRequest,
  type GoToolchain,
  installCRDs,
  REFERENCE_IPAM_MODULE,
  REFERENCE_IPAM_VERSION,
  startWatchedProcess,
} from '@tally-ipam/testenv';
import { waitWhileRunning } from './wait.js';

/**
 * The reference in-cluster IPAM provider (`sigs.k8s.io/cluster-api-ipam-provider-in-cluster`), for running the CAPV
 * scenario against it too. The build request is the one of `apps/ipam-controller/bench/reference-provider.ts`, member
 * for member: the same key, so both find the one cache entry (`<cache root>/reference-ipam/<key>/`) and it is built
 * once. (Tools cannot import an app; test/keys.test.ts pins the key.)
 */

/** testenv's, shared with api-types' comparison of the in-cluster CRDs. */
export const REFERENCE_MODULE: string = REFERENCE_IPAM_MODULE;
export const REFERENCE_VERSION: string = REFERENCE_IPAM_VERSION;
export const REFERENCE_BINARY = 'cluster-api-ipam-provider-in-cluster';
/** Its pool kinds' API version (group `ipam.cluster.x-k8s.io`). */
export const REFERENCE_POOL_API_VERSION = 'ipam.cluster.x-k8s.io/v1alpha2';
const CACHE_FORMAT = 1;
const BUILD_GOFLAGS = '-mod=mod -modcacherw';
const BUILD_LDFLAGS = '-s -w';
const CRD_DIR = 'crds';
/** The claim reconciler and one per pool kind each log "Starting workers" once synced. */
export const REFERENCE_CONTROLLER_COUNT = 5;
/**
 * How the tests run it, as a process or in a Pod: no webhooks, leader election, metrics or probes (no listener at
 * all); a kubeconfig flag only where it runs outside a cluster.
 */
export const REFERENCE_RUN_FLAGS: readonly string[] = [
  '--webhook-port=0',
  '--leader-elect=false',
  '--diagnostics-address=0',
  '--health-probe-bind-address=0',
];

/** How many of its controllers logged that they started their workers (klog text lines). */
export function startedControllers(log: string): number {
  return log.split('\n').filter((line) => line.includes('"Starting workers"')).length;
}

export interface ReferenceIpamBinary {
  readonly path: string;
  /** InClusterIPPool, GlobalInClusterIPPool and the prefix pools, as the module ships them. */
  readonly crdDir: string;
  readonly version: string;
  readonly key: string;
  readonly builtNow: boolean;
  readonly buildDurationMs: number;
}

async function verifyBuild(paths: Readonly<Record<string, string>>): Promise<void> {
  const binary = paths[REFERENCE_BINARY] ?? REFERENCE_BINARY;
  const output = await commandOutput(binary, ['--help']).catch((error: unknown) =>
    error instanceof Error ? error.message : String(error),
  );
  const expected = ['--webhook-port', '--leader-elect', '--health-probe-bind-address', '--diagnostics-address'];
  const missing = expected.filter((flag) => !output.includes(flag));
  if (missing.length > 0) {
    throw new Error(`${binary} --help does not list ${missing.join(', ')}: ${output.slice(0, 2_000)}`);
  }
}

/** The build request, identical to the benchmark's (see above). */
export function referenceIpamBuild(onProgress?: (message: string) => void): GoBinaryRequest {
  return {
    cacheDir: join(cacheRoot(), 'reference-ipam'),
    what: `the reference IPAM provider ${REFERENCE_VERSION}`,
    format: CACHE_FORMAT,
    keyMaterial: (go: GoToolchain) => ({
      module: REFERENCE_MODULE,
      version: REFERENCE_VERSION,
      go: go.version,
      platform: `${go.goos}/${go.goarch}`,
      ldflags: BUILD_LDFLAGS,
      env: { ...GO_ENV, GOFLAGS: BUILD_GOFLAGS },
    }),
    binaries: [REFERENCE_BINARY],
    steps: [
      {
        name: `${REFERENCE_BINARY} ${REFERENCE_VERSION}`,
        logName: 'reference',
        source: { kind: 'proxy-module', module: REFERENCE_MODULE, version: REFERENCE_VERSION },
        packages: ['.'],
        ldflags: BUILD_LDFLAGS,
        env: { GOFLAGS: BUILD_GOFLAGS, CGO_ENABLED: '0' },
        output: REFERENCE_BINARY,
        copyFromModule: { 'config/crd/bases': CRD_DIR },
      },
    ],
    verify: verifyBuild,
    isComplete: async (dir) => (await readdir(join(dir, CRD_DIR))).length > 0,
    stampFields: { version: REFERENCE_VERSION },
    coldBuildHint: 'a cold build takes a few minutes on 2 cores',
    onProgress,
  };
}

export async function ensureReferenceIpam(onProgress?: (message: string) => void): Promise<ReferenceIpamBinary> {
  const entry = await ensureGoBinary(referenceIpamBuild(onProgress));
  return {
    path: join(entry.dir, REFERENCE_BINARY),
    crdDir: join(entry.dir, CRD_DIR),
    version: REFERENCE_VERSION,
    key: entry.key,
    builtNow: entry.builtNow,
    buildDurationMs: entry.buildDurationMs,
  };
}

export interface ReferenceIpam {
  readonly binary: ReferenceIpamBinary;
  readonly pid: number;
  readonly logPath: string;
  running(): boolean;
  /** The whole log (klog text lines). */
  log(): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Installs the reference provider's pool CRDs and runs it as it ships (one claim worker) against `kubeconfigPath`,
 * all namespaces, without webhooks, leader election, metrics or probes (no listener at all), under testenv's
 * watchdog; resolves once every controller started its workers (caches synced).
 */
export async function startReferenceIpam(
  kubeconfigPath: string,
  options: { readonly onProgress?: (message: string) => void; readonly timeoutMs?: number } = {},
): Promise<ReferenceIpam> {
  const binary = await ensureReferenceIpam(options.onProgress);
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  await installCRDs(kc, [binary.crdDir]);
  const started = startWatchedProcess({
    name: 'reference-ipam',
    command: binary.path,
    args: (stateDir) => {
      const kubeconfig = join(stateDir, 'kubeconfig');
      copyFileSync(kubeconfigPath, kubeconfig);
      return [`--kubeconfig=${kubeconfig}`, ...REFERENCE_RUN_FLAGS];
    },
  });
  const log = (): Promise<string> => readFile(started.logPath, 'utf8').catch(() => '');
  try {
    await waitWhileRunning(
      'the reference IPAM provider to start all its controllers',
      started,
      'the reference IPAM provider',
      async () => startedControllers(await log()) >= REFERENCE_CONTROLLER_COUNT,
      { timeoutMs: options.timeoutMs ?? 120_000, intervalMs: 250, hint: started.logPath },
    );
  } catch (error) {
    await started.stop();
    throw error;
  }
  options.onProgress?.(`reference IPAM provider ${REFERENCE_VERSION} running (log: ${started.logPath})`);
  return {
    binary,
    pid: started.pid,
    logPath: started.logPath,
    running: () => started.exit() === undefined,
    log,
    stop: () => started.stop(),
  };
}
