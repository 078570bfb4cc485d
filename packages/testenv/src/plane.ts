import type { KubeConfig } from '@kubernetes/client-node';

// The control plane's interfaces, apart from `startControlPlane` so that external.ts (which returns a ControlPlane for
// TALLY_TEST_KUBECONFIG) and control-plane.ts (which starts one) do not import each other.

/** A second kube-apiserver on the same etcd (for tests of clients that fail over or elect leaders). */
export interface AdditionalAPIServer {
  readonly server: string;
  readonly kubeconfigPath: string;
  readonly kubeconfigYaml: string;
  readonly pid: number;
  kubeConfig(): KubeConfig;
  /** SIGKILL this API server only. */
  stop(): Promise<void>;
}

export interface ControlPlane {
  readonly kubeconfigPath: string;
  readonly kubeconfigYaml: string;
  /** API server URL, e.g. `https://127.0.0.1:41234`. */
  readonly server: string;
  /** True when the cluster came from `TALLY_TEST_KUBECONFIG` (nothing was started; stop does nothing). */
  readonly external: boolean;
  /** The server's `gitVersion`, e.g. `v1.34.10`. */
  readonly version: string;
  /** Milliseconds from the start call to a ready API server (binaries already cached), 0 for external clusters. */
  readonly startupDurationMs: number;
  /** Temporary directory of this run (certs, etcd data, logs); removed by stop. Undefined for external clusters. */
  readonly stateDir: string | undefined;
  /** Where the process logs are (kept after stop when `TALLY_TESTENV_KEEP=1`); undefined for external clusters. */
  readonly logDir: string | undefined;
  /** A fresh admin KubeConfig each call. */
  kubeConfig(): KubeConfig;
  /** Local only: SIGKILL kube-apiserver and start it again on the same port; etcd (the data) is kept. */
  restartAPIServer(): Promise<void>;
  /** Starts kube-controller-manager if it is not running (a no-op on external clusters, which have their own). */
  startControllerManager(): Promise<void>;
  /** Local only: start another kube-apiserver against the same etcd, on its own port. */
  startAdditionalAPIServer(): Promise<AdditionalAPIServer>;
  /** PIDs of the running etcd, kube-apiserver and kube-controller-manager processes (empty for external clusters). */
  processIds(): Record<string, number>;
  /** Kills every process and removes the temporary state. Idempotent. */
  stop(): Promise<void>;
}
