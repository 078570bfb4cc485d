/**
 * A second Tally, started by the take-over test next to the suite's own one: the suite's IPAM controller runs without
 * `--enable-in-cluster-ipam` (it leaves the reference's pool kinds alone), so this one, the built app as a process,
 * serves them, scoped to the scenario's namespace (`--namespace`: claims, IPAddresses, Clusters and namespaced pools of
 * that namespace; cluster-scoped pools, the `GlobalInClusterIPPool` among them, are watched cluster-wide). No leader
 * election (the flag's default), no webhooks, metrics and probes on free ports. Locally it talks to testenv's API
 * server, on the kind lane to the lane's, through the kubeconfig the test has.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startWatchedProcess } from '@tally-ipam/testenv';
import { type IpamProviderUnderTest, tallyInClusterProvider, tallyProcessLog } from './providers.js';

const IPAM_MAIN_JS = fileURLToPath(new URL('../../../apps/ipam-controller/dist/main.js', import.meta.url));

export interface InClusterTally {
  readonly provider: IpamProviderUnderTest;
  readonly logPath: string;
  /** Stops the process; its log is copied to `keepLogIn` first when given (testenv removes the process's directory). */
  stop(): Promise<void>;
}

export function startInClusterTally(options: {
  readonly kubeconfigPath: string;
  readonly namespace: string;
  /** The pools' network (`providers.ts`, `createInClusterPools`). */
  readonly net: number;
  readonly keepLogIn?: string | undefined;
}): InClusterTally {
  const controller = startWatchedProcess({
    name: 'ipam-controller-in-cluster',
    command: process.execPath,
    args: (stateDir) => {
      const kubeconfig = join(stateDir, 'kubeconfig');
      copyFileSync(options.kubeconfigPath, kubeconfig);
      return [
        IPAM_MAIN_JS,
        `--kubeconfig=${kubeconfig}`,
        `--namespace=${options.namespace}`,
        '--enable-in-cluster-ipam',
        '--metrics-bind-address=127.0.0.1:0',
        '--health-probe-bind-address=127.0.0.1:0',
        '--webhook-port=0',
      ];
    },
  });
  const keptAs = options.keepLogIn
    ? join(options.keepLogIn, `ipam-controller-in-cluster_${options.namespace}.log`)
    : '';
  const log = tallyProcessLog(controller.logPath);
  const provider = tallyInClusterProvider(
    { hint: `${log.hint}${keptAs ? ` (kept as ${keptAs})` : ''}`, read: log.read },
    options.net,
  );
  return {
    provider: {
      ...provider,
      // Every state check reads the ledgers through here: a Tally that exited fails the wait's probe with its log's
      // end, which the timeout then names, rather than a bare "not yet".
      heldAddresses: async (client, pool) => {
        const exit = controller.exit();
        if (exit) throw new Error(`Tally (in-cluster) exited: ${JSON.stringify(exit)}; ${controller.logTail(20)}`);
        return provider.heldAddresses(client, pool);
      },
    },
    logPath: controller.logPath,
    stop: async () => {
      if (options.keepLogIn) {
        mkdirSync(options.keepLogIn, { recursive: true });
        copyFileSync(controller.logPath, keptAs);
      }
      await controller.stop();
    },
  };
}
