#!/usr/bin/env node
import { ensureBinaries } from './binaries.js';
import { capiCRDDir } from './capi.js';
import { ensureClusterctl } from './capi-clusterctl.js';
import { type CapiManager, startCapiManager } from './capi-manager.js';
import { ensureCapiManager } from './capi-manager-binary.js';
import { startControlPlane } from './control-plane.js';
import { errorMessage, formatBytes, formatDuration } from './format.js';
import { capiManagerCacheDir, controlPlaneCacheDir } from './paths.js';
import { CLUSTER_API_RELEASES, CLUSTER_API_VERSION_ENV, clusterApiVersion } from './versions.js';

const USAGE = `usage: tally-testenv <command> [--capi] [--capi-version VERSION]

  prepare   build (or find in the cache) etcd, kube-apiserver and kube-controller-manager, and fetch
            Cluster API's CRDs into the Go module cache; prints progress and the build time
            --capi: also build (or find) the Cluster API core manager and clusterctl
  start     start a control plane with kube-controller-manager and Cluster API's CRDs, print its
            kubeconfig path, and run until Ctrl+C
            --capi: also run the Cluster API core manager with its webhooks

  --capi-version VERSION  the Cluster API release (${Object.keys(CLUSTER_API_RELEASES).join(', ')});
                          default ${CLUSTER_API_VERSION_ENV}, else ${clusterApiVersion(undefined, {})}

environment: TALLY_CACHE_DIR (binary cache root), TALLY_TEST_KUBECONFIG (use that cluster instead),
             ${CLUSTER_API_VERSION_ENV} (the Cluster API release), TALLY_TESTENV_KEEP=1 (keep state and logs
             after stop), TALLY_TESTENV_START_TIMEOUT_MS`;

const log = (message: string): void => {
  console.error(`[tally-testenv] ${message}`);
};

async function prepareCapiManager(version: string): Promise<void> {
  log(`Cluster API manager cache: ${capiManagerCacheDir()}`);
  const manager = await ensureCapiManager({ version, onProgress: log });
  if (!manager.builtNow) {
    log(
      `cached: ${manager.path} (${manager.version}, built earlier in ${formatDuration(manager.buildDurationMs)}; ` +
        `${formatBytes(manager.sizeBytes)})`,
    );
  }
  // The release tests run the real clusterctl; built here so its first build never happens inside the test run.
  const clusterctl = await ensureClusterctl({ version, onProgress: log });
  if (!clusterctl.builtNow) {
    log(
      `cached: ${clusterctl.path} (${clusterctl.version}, built earlier in ${formatDuration(clusterctl.buildDurationMs)}; ` +
        `${formatBytes(clusterctl.sizeBytes)})`,
    );
  }
}

async function prepare(capi: boolean, version: string): Promise<void> {
  const started = Date.now();
  log(`binary cache: ${controlPlaneCacheDir()}`);
  const binaries = await ensureBinaries({ onProgress: log });
  const sizes = Object.entries(binaries.sizes)
    .map(([name, size]) => `${name} ${formatBytes(size)}`)
    .join(', ');
  // A fresh build has already reported its time and sizes through onProgress.
  if (!binaries.builtNow) {
    log(`cached: ${binaries.dir} (built earlier in ${formatDuration(binaries.buildDurationMs)}; ${sizes})`);
  }
  log(`Cluster API ${version} CRDs: ${await capiCRDDir(version)}`);
  if (capi) await prepareCapiManager(version);
  log(`prepare finished in ${formatDuration(Date.now() - started)}`);
}

async function start(capi: boolean, version: string): Promise<void> {
  const plane = await startControlPlane({
    controllerManager: true,
    capiCRDs: ['cluster.x-k8s.io', 'ipam.cluster.x-k8s.io', 'addons.cluster.x-k8s.io', 'runtime.cluster.x-k8s.io'],
    capiVersion: version,
    onProgress: log,
  });
  log(`${plane.version} at ${plane.server}; logs in ${plane.logDir ?? '(external cluster)'}`);
  let manager: CapiManager | undefined;
  if (capi && !plane.external) {
    try {
      manager = await startCapiManager(plane, { version, onProgress: log });
    } catch (error) {
      await plane.stop();
      throw error;
    }
    log(`Cluster API manager ${manager.version} running; log: ${manager.logPath}`);
  }
  console.log(`export KUBECONFIG=${plane.kubeconfigPath}`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await manager?.stop();
  await plane.stop();
  log('stopped');
}

/** `[command, --capi?, --capi-version V?]`, or undefined for anything else. */
function parseArgs(args: readonly string[]): { command: string; capi: boolean; version?: string } | undefined {
  const [command, ...rest] = args;
  if (command !== 'prepare' && command !== 'start') return undefined;
  let capi = false;
  let version: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i];
    if (flag === '--capi') capi = true;
    else if (flag === '--capi-version' && rest[i + 1]) version = rest[++i];
    else if (flag?.startsWith('--capi-version=')) version = flag.slice('--capi-version='.length);
    else return undefined;
  }
  return { command, capi, ...(version ? { version } : {}) };
}

async function main(): Promise<void> {
  const parsed = parseArgs(process.argv.slice(2));
  if (!parsed) {
    console.error(USAGE);
    process.exitCode = 2;
    return;
  }
  const version = clusterApiVersion(parsed.version);
  if (parsed.command === 'prepare') return prepare(parsed.capi, version);
  return start(parsed.capi, version);
}

main().catch((error: unknown) => {
  log(`failed: ${errorMessage(error)}`);
  process.exitCode = 1;
});
