import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { z } from 'zod';
import { type ControlPlaneBinaries, ensureBinaries } from './binaries.js';
import { type CapiCRDGroup, capiCRDPaths } from './capi.js';
import { type ControlPlaneCertificates, generateControlPlaneCertificates } from './certs.js';
import {
  type EtcdPorts,
  type StateFiles,
  startAPIServer,
  startControllerManager,
  startEtcd,
  writeCertificateFiles,
} from './components.js';
import { installCRDs } from './crds.js';
import { startExternalControlPlane } from './external.js';
import { errorMessage, formatDuration } from './format.js';
import { httpGet } from './http.js';
import { buildKubeconfigYaml, kubeConfigFromYaml } from './kubeconfig.js';
import type { AdditionalAPIServer, ControlPlane } from './plane.js';
import { freePort, freePorts } from './ports.js';
import { type ManagedProcess, ProcessRegistry } from './processes.js';
import { ControlPlaneStartError } from './readiness.js';

export interface ControlPlaneOptions {
  /** Also run kube-controller-manager (garbage collector + namespace controllers). Default false. */
  controllerManager?: boolean;
  /** CRD files or directories to install before the controller manager starts. */
  crds?: string[];
  /** Cluster API CRD groups to install (from the Go module cache of sigs.k8s.io/cluster-api). */
  capiCRDs?: CapiCRDGroup[];
  /** The Cluster API release of `capiCRDs`; default `clusterApiVersion()` (`TALLY_CAPI_VERSION`, else the default). */
  capiVersion?: string;
  /** Step-by-step progress lines (building, starting, ready). */
  onProgress?: (msg: string) => void;
  /** Extra kube-apiserver flags, e.g. `--feature-gates=…`; later flags win. Local control planes only. */
  apiServerFlags?: string[];
  /** Start local processes even when `TALLY_TEST_KUBECONFIG` is set (tests of the processes themselves). */
  ignoreTestKubeconfig?: boolean;
}

export type { AdditionalAPIServer, ControlPlane } from './plane.js';

const versionSchema = z.object({ gitVersion: z.string() });

const START_ATTEMPTS = 3;

function keepState(): boolean {
  return process.env.TALLY_TESTENV_KEEP === '1' || process.env.TALLY_TESTENV_KEEP === 'true';
}

class LocalControlPlane implements ControlPlane {
  readonly external = false;
  #apiServer: ManagedProcess;
  #controllerManager: ManagedProcess | undefined;
  #additionalCount = 0;
  #stopped = false;

  constructor(
    readonly kubeconfigPath: string,
    readonly kubeconfigYaml: string,
    readonly server: string,
    readonly version: string,
    readonly startupDurationMs: number,
    readonly stateDir: string,
    readonly logDir: string,
    private readonly registry: ProcessRegistry,
    private readonly binaries: ControlPlaneBinaries,
    private readonly files: StateFiles,
    private readonly certs: ControlPlaneCertificates,
    private readonly etcd: ManagedProcess,
    private readonly etcdPorts: EtcdPorts,
    private readonly apiServerPort: number,
    private readonly apiServerFlags: readonly string[],
    apiServer: ManagedProcess,
  ) {
    this.#apiServer = apiServer;
  }

  kubeConfig(): KubeConfig {
    return kubeConfigFromYaml(this.kubeconfigYaml);
  }

  #assertRunning(action: string): void {
    if (this.#stopped) throw new Error(`cannot ${action}: the control plane was stopped`);
  }

  async restartAPIServer(): Promise<void> {
    this.#assertRunning('restart kube-apiserver');
    await this.#apiServer.kill();
    this.#apiServer = await startAPIServer(
      this.registry,
      this.binaries,
      this.files,
      this.certs,
      { port: this.apiServerPort, etcd: this.etcdPorts, extraFlags: this.apiServerFlags },
      [this.etcd],
    );
  }

  async startControllerManager(): Promise<void> {
    this.#assertRunning('start kube-controller-manager');
    if (this.#controllerManager && this.#controllerManager.exit === undefined) return;
    this.#controllerManager = await withPortRetries(async () =>
      startControllerManager(this.registry, this.binaries, this.files, await freePort(), [this.etcd]),
    );
  }

  async startAdditionalAPIServer(): Promise<AdditionalAPIServer> {
    this.#assertRunning('start another kube-apiserver');
    const index = ++this.#additionalCount;
    const { process: apiServer, port } = await withPortRetries(async () => {
      const candidate = await freePort();
      const started = await startAPIServer(
        this.registry,
        this.binaries,
        this.files,
        this.certs,
        { port: candidate, etcd: this.etcdPorts, extraFlags: this.apiServerFlags },
        [this.etcd],
        `kube-apiserver-${index}`,
      );
      return { process: started, port: candidate };
    });
    const server = `https://127.0.0.1:${port}`;
    const kubeconfigYaml = buildKubeconfigYaml({
      server,
      caPem: this.certs.ca.certPem,
      clientCertPem: this.certs.admin.certPem,
      clientKeyPem: this.certs.admin.keyPem,
    });
    const kubeconfigPath = join(this.files.stateDir, `kubeconfig-${index}`);
    writeFileSync(kubeconfigPath, kubeconfigYaml, { mode: 0o600 });
    return {
      server,
      kubeconfigPath,
      kubeconfigYaml,
      pid: apiServer.pid,
      kubeConfig: () => kubeConfigFromYaml(kubeconfigYaml),
      stop: () => apiServer.kill(),
    };
  }

  processIds(): Record<string, number> {
    const ids: Record<string, number> = {};
    for (const p of this.registry.processes) {
      if (p.exit !== undefined) continue;
      let name = p.name;
      for (let n = 2; name in ids; n++) name = `${p.name}-${n}`;
      ids[name] = p.pid;
    }
    return ids;
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    await this.registry.destroy({ keepAll: keepState() });
  }
}

/** Retries `start` with fresh ports when the process reports that its port was taken in the meantime. */
async function withPortRetries<T>(start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (error) {
      if (!(error instanceof ControlPlaneStartError) || !error.portConflict || attempt >= START_ATTEMPTS) throw error;
    }
  }
}

async function fetchVersion(server: string, certs: ControlPlaneCertificates): Promise<string> {
  const response = await httpGet(`${server}/version`, {
    caPem: certs.ca.certPem,
    certPem: certs.admin.certPem,
    keyPem: certs.admin.keyPem,
  });
  if (response.status !== 200) throw new Error(`GET ${server}/version returned HTTP ${response.status}`);
  return versionSchema.parse(JSON.parse(response.body)).gitVersion;
}

async function startLocalControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  const progress = options.onProgress ?? ((): void => {});
  const [binaries, certs] = await Promise.all([
    ensureBinaries({ onProgress: progress }),
    generateControlPlaneCertificates(),
  ]);
  const started = Date.now();
  const stateDir = mkdtempSync(join(tmpdir(), 'tally-testenv-'));
  const logDir = join(stateDir, 'logs');
  const certDir = join(stateDir, 'certs');
  for (const dir of [logDir, certDir, join(stateDir, 'kcm-certs')]) mkdirSync(dir, { recursive: true });
  const files: StateFiles = { stateDir, certDir, kubeconfigPath: join(stateDir, 'kubeconfig') };
  writeCertificateFiles(certDir, certs);
  const registry = new ProcessRegistry(stateDir, logDir);
  const apiServerFlags = options.apiServerFlags ?? [];
  try {
    progress(
      `starting etcd ${binaries.etcdVersion} and kube-apiserver ${binaries.kubernetesVersion} (state: ${stateDir})`,
    );
    const { etcd, etcdPorts, apiServer, apiServerPort } = await withPortRetries(async () => {
      const [client, peer, api] = await freePorts(3);
      if (client === undefined || peer === undefined || api === undefined) throw new Error('no free ports');
      const ports = { client, peer };
      const etcdProcess = await startEtcd(registry, binaries, files, ports);
      try {
        const apiProcess = await startAPIServer(
          registry,
          binaries,
          files,
          certs,
          { port: api, etcd: ports, extraFlags: apiServerFlags },
          [etcdProcess],
        );
        return { etcd: etcdProcess, etcdPorts: ports, apiServer: apiProcess, apiServerPort: api };
      } catch (error) {
        await registry.killAll();
        throw error;
      }
    });
    const server = `https://127.0.0.1:${apiServerPort}`;
    const kubeconfigYaml = buildKubeconfigYaml({
      server,
      caPem: certs.ca.certPem,
      clientCertPem: certs.admin.certPem,
      clientKeyPem: certs.admin.keyPem,
    });
    writeFileSync(files.kubeconfigPath, kubeconfigYaml, { mode: 0o600 });
    const version = await fetchVersion(server, certs);
    const startupDurationMs = Date.now() - started;
    progress(`kube-apiserver ${version} ready at ${server} in ${formatDuration(startupDurationMs)}`);
    const plane = new LocalControlPlane(
      files.kubeconfigPath,
      kubeconfigYaml,
      server,
      version,
      startupDurationMs,
      stateDir,
      logDir,
      registry,
      binaries,
      files,
      certs,
      etcd,
      etcdPorts,
      apiServerPort,
      apiServerFlags,
      apiServer,
    );
    await installRequestedCRDs(plane, options, progress);
    if (options.controllerManager) {
      progress('starting kube-controller-manager (garbage collector, namespace controller)');
      await plane.startControllerManager();
    }
    return plane;
  } catch (error) {
    await registry.destroy({ keepLogs: true });
    throw new Error(`starting the test control plane failed: ${errorMessage(error)}\n(logs kept in ${logDir})`, {
      cause: error,
    });
  }
}

/** CRDs go in before kube-controller-manager starts, so its garbage collector discovers them at once. */
async function installRequestedCRDs(
  plane: ControlPlane,
  options: ControlPlaneOptions,
  progress: (msg: string) => void,
): Promise<void> {
  const paths = [
    ...(options.capiCRDs?.length ? await capiCRDPaths({ groups: options.capiCRDs, version: options.capiVersion }) : []),
    ...(options.crds ?? []),
  ];
  if (paths.length === 0) return;
  progress(`installing CRDs from ${paths.length} path(s)`);
  await installCRDs(plane.kubeConfig(), paths);
}

/**
 * Starts etcd + kube-apiserver (+ kube-controller-manager on request) on free loopback ports, or connects to the
 * cluster named by `TALLY_TEST_KUBECONFIG`. Builds the binaries on first use (see `ensureBinaries`).
 */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const externalKubeconfig = process.env.TALLY_TEST_KUBECONFIG;
  if (externalKubeconfig && !options.ignoreTestKubeconfig) {
    const plane = await startExternalControlPlane(externalKubeconfig);
    await installRequestedCRDs(plane, options, options.onProgress ?? ((): void => {}));
    return plane;
  }
  return startLocalControlPlane(options);
}
