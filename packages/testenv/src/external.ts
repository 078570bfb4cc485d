import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { VersionApi } from '@kubernetes/client-node';
import { errorMessage } from './format.js';
import { kubeConfigFromYaml } from './kubeconfig.js';
import type { ControlPlane } from './plane.js';

/**
 * A control plane backed by an existing cluster (e.g. kind): nothing is started or stopped, and the operations that
 * need local processes say so.
 */
export async function startExternalControlPlane(kubeconfigPath: string): Promise<ControlPlane> {
  const path = resolve(kubeconfigPath);
  let kubeconfigYaml: string;
  try {
    kubeconfigYaml = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`TALLY_TEST_KUBECONFIG=${kubeconfigPath} cannot be read: ${errorMessage(error)}`, { cause: error });
  }
  const kc = kubeConfigFromYaml(kubeconfigYaml);
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error(`the kubeconfig ${path} (TALLY_TEST_KUBECONFIG) has no current cluster`);
  let version: string;
  try {
    version = (await kc.makeApiClient(VersionApi).getCode()).gitVersion;
  } catch (error) {
    throw new Error(
      `the cluster at ${server} (TALLY_TEST_KUBECONFIG=${path}) does not answer: ${errorMessage(error)}`,
      {
        cause: error,
      },
    );
  }
  const unsupported = (what: string): Promise<never> =>
    Promise.reject(new Error(`${what} is not possible on an external cluster (TALLY_TEST_KUBECONFIG=${path})`));
  return {
    kubeconfigPath: path,
    kubeconfigYaml,
    server,
    external: true,
    version,
    startupDurationMs: 0,
    stateDir: undefined,
    logDir: undefined,
    kubeConfig: () => kubeConfigFromYaml(kubeconfigYaml),
    restartAPIServer: () => unsupported('restarting kube-apiserver'),
    // An external cluster runs its own kube-controller-manager.
    startControllerManager: async () => {},
    startAdditionalAPIServer: () => unsupported('starting another kube-apiserver'),
    processIds: () => ({}),
    stop: async () => {},
  };
}
