#!/usr/bin/env node
import { ensureBinaries } from './binaries.js';
import { capiCRDDir } from './capi.js';
import { startControlPlane } from './control-plane.js';
import { errorMessage, formatBytes, formatDuration } from './format.js';
import { controlPlaneCacheDir } from './paths.js';

const USAGE = `usage: tally-testenv <command>

  prepare   build (or find in the cache) etcd, kube-apiserver and kube-controller-manager, and fetch
            Cluster API's CRDs into the Go module cache; prints progress and the build time
  start     start a control plane with kube-controller-manager and Cluster API's CRDs, print its
            kubeconfig path, and run until Ctrl+C

environment: TALLY_CACHE_DIR (binary cache root), TALLY_TEST_KUBECONFIG (use that cluster instead),
             TALLY_TESTENV_KEEP=1 (keep state and logs after stop), TALLY_TESTENV_START_TIMEOUT_MS`;

const log = (message: string): void => {
  console.error(`[tally-testenv] ${message}`);
};

async function prepare(): Promise<void> {
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
  log(`Cluster API CRDs: ${await capiCRDDir()}`);
  log(`prepare finished in ${formatDuration(Date.now() - started)}`);
}

async function start(): Promise<void> {
  const plane = await startControlPlane({
    controllerManager: true,
    capiCRDs: ['cluster.x-k8s.io', 'ipam.cluster.x-k8s.io', 'addons.cluster.x-k8s.io', 'runtime.cluster.x-k8s.io'],
    onProgress: log,
  });
  log(`${plane.version} at ${plane.server}; logs in ${plane.logDir ?? '(external cluster)'}`);
  console.log(`export KUBECONFIG=${plane.kubeconfigPath}`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await plane.stop();
  log('stopped');
}

async function main(): Promise<void> {
  const command = process.argv[2];
  if (command === 'prepare') return prepare();
  if (command === 'start') return start();
  console.error(USAGE);
  process.exitCode = 2;
}

main().catch((error: unknown) => {
  log(`failed: ${errorMessage(error)}`);
  process.exitCode = 1;
});
