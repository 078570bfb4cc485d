import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ControlPlaneBinaries } from './binaries.js';
import type { ControlPlaneCertificates } from './certs.js';
import { httpGet } from './http.js';
import type { ManagedProcess, ProcessRegistry } from './processes.js';
import { waitUntil } from './readiness.js';

/** Files under the state directory shared by the processes of one control plane. */
export interface StateFiles {
  readonly stateDir: string;
  readonly certDir: string;
  readonly kubeconfigPath: string;
}

export function writeCertificateFiles(certDir: string, certs: ControlPlaneCertificates): void {
  const files: Record<string, string> = {
    'ca.crt': certs.ca.certPem,
    'ca.key': certs.ca.keyPem,
    'apiserver.crt': certs.apiServer.certPem,
    'apiserver.key': certs.apiServer.keyPem,
    'admin.crt': certs.admin.certPem,
    'admin.key': certs.admin.keyPem,
    'sa.key': certs.serviceAccountKeyPem,
    'sa.pub': certs.serviceAccountPublicKeyPem,
  };
  for (const [name, content] of Object.entries(files)) {
    writeFileSync(join(certDir, name), content, { mode: 0o600 });
  }
}

export interface EtcdPorts {
  readonly client: number;
  readonly peer: number;
}

export function etcdURL(ports: EtcdPorts): string {
  return `http://127.0.0.1:${ports.client}`;
}

/** Starts a single-member etcd on loopback without fsync (test data is throwaway) and waits for `/health`. */
export async function startEtcd(
  registry: ProcessRegistry,
  binaries: ControlPlaneBinaries,
  files: StateFiles,
  ports: EtcdPorts,
): Promise<ManagedProcess> {
  const peerURL = `http://127.0.0.1:${ports.peer}`;
  const dataDir = join(files.stateDir, 'etcd');
  // A retry after a port conflict must not find a member bootstrapped with the old peer URL.
  rmSync(dataDir, { recursive: true, force: true });
  const etcd = registry.spawn('etcd', binaries.etcd, [
    '--name=tally-testenv',
    `--data-dir=${dataDir}`,
    `--listen-client-urls=${etcdURL(ports)}`,
    `--advertise-client-urls=${etcdURL(ports)}`,
    `--listen-peer-urls=${peerURL}`,
    `--initial-advertise-peer-urls=${peerURL}`,
    `--initial-cluster=tally-testenv=${peerURL}`,
    '--unsafe-no-fsync',
    '--log-level=warn',
  ]);
  await waitUntil('etcd /health', async () => {
    const response = await httpGet(`${etcdURL(ports)}/health`);
    return response.status === 200 && response.body.includes('"health":"true"');
  }, [etcd]);
  return etcd;
}

export interface APIServerSettings {
  readonly port: number;
  readonly etcd: EtcdPorts;
  readonly extraFlags: readonly string[];
}

/** envtest's flags, plus explicit certificates and client-certificate authentication. */
export function apiServerArgs(files: StateFiles, settings: APIServerSettings): string[] {
  const cert = (name: string): string => join(files.certDir, name);
  return [
    `--etcd-servers=${etcdURL(settings.etcd)}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${settings.port}`,
    `--cert-dir=${files.certDir}`,
    `--tls-cert-file=${cert('apiserver.crt')}`,
    `--tls-private-key-file=${cert('apiserver.key')}`,
    `--client-ca-file=${cert('ca.crt')}`,
    `--service-account-issuer=https://127.0.0.1:${settings.port}`,
    `--service-account-key-file=${cert('sa.pub')}`,
    `--service-account-signing-key-file=${cert('sa.key')}`,
    '--service-cluster-ip-range=10.0.0.0/24',
    '--authorization-mode=RBAC',
    // Pods would otherwise need the service account controllers, which this control plane does not run.
    '--disable-admission-plugins=ServiceAccount',
    '--allow-privileged=true',
    // The default reconciler keeps complaining that 127.0.0.1 is a loopback address; no test needs those endpoints.
    '--endpoint-reconciler-type=none',
    '--profiling=false',
    ...settings.extraFlags,
  ];
}

/** Starts kube-apiserver and waits for `/readyz` and for the `default` namespace (as envtest does). */
export async function startAPIServer(
  registry: ProcessRegistry,
  binaries: ControlPlaneBinaries,
  files: StateFiles,
  certs: ControlPlaneCertificates,
  settings: APIServerSettings,
  watched: readonly ManagedProcess[],
  logName = 'kube-apiserver',
): Promise<ManagedProcess> {
  const apiserver = registry.spawn('kube-apiserver', binaries.kubeAPIServer, apiServerArgs(files, settings), logName);
  await waitForAPIServer(apiserver, certs, settings.port, watched);
  return apiserver;
}

export async function waitForAPIServer(
  apiserver: ManagedProcess,
  certs: ControlPlaneCertificates,
  port: number,
  watched: readonly ManagedProcess[],
): Promise<void> {
  const identity = { caPem: certs.ca.certPem, certPem: certs.admin.certPem, keyPem: certs.admin.keyPem };
  const base = `https://127.0.0.1:${port}`;
  await waitUntil('kube-apiserver /readyz', async () => (await httpGet(`${base}/readyz`, identity)).status === 200, [
    ...watched,
    apiserver,
  ]);
  await waitUntil(
    'the default namespace',
    async () => (await httpGet(`${base}/api/v1/namespaces/default`, identity)).status === 200,
    [...watched, apiserver],
  );
}

/** kube-controller-manager with only the garbage collector and the namespace controller. */
export async function startControllerManager(
  registry: ProcessRegistry,
  binaries: ControlPlaneBinaries,
  files: StateFiles,
  port: number,
  watched: readonly ManagedProcess[],
): Promise<ManagedProcess> {
  const kcm = registry.spawn('kube-controller-manager', binaries.kubeControllerManager, [
    `--kubeconfig=${files.kubeconfigPath}`,
    '--controllers=garbage-collector-controller,namespace-controller',
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${join(files.stateDir, 'kcm-certs')}`,
  ]);
  await waitUntil(
    'kube-controller-manager /healthz',
    async () => (await httpGet(`https://127.0.0.1:${port}/healthz`, { insecure: true })).status === 200,
    [...watched, kcm],
  );
  return kcm;
}
