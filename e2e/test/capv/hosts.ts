/**
 * Where CAPV, the simulators and the IPAM providers of the scenarios run: processes next to testenv's control plane
 * (the e2e suite), or Pods on the kind lane's cluster.
 */
import { testEnv } from '@tally-ipam/testenv/vitest';
import {
  type Capv,
  startCapv,
  startReferenceIpam,
  startVcsim,
  type VcsimCredentials,
  vcsimCredentials,
} from '@tally-ipam/vsphere';
import { inject } from 'vitest';
import type { LaneCapv } from '../../kind/lane/capv.js';
import { LANE_LOG_DIR } from '../../kind/lane/lane.js';
import { LANE_CLUSTER_PROVIDE_KEY, type ProvidedLaneCluster } from '../../kind/lane/provided.js';
import { runningApps } from '../harness.js';
import { installCapvOnLane, podLogs, startVcsimPod } from './in-cluster.js';
import { type ProviderLog, referenceProvider, tallyProcessLog } from './providers.js';
import { type RunningReferencePod, startReferencePod } from './reference-pod.js';
import type { CapvScenarioContext } from './steps.js';

/** The lane's CAPV (kind: its global setup built and loaded the images and put CAPV in its clusterctl repository). */
function laneCapv(): { lane: ProvidedLaneCluster; capv: LaneCapv } {
  const lane = inject(LANE_CLUSTER_PROVIDE_KEY);
  if (!lane?.capv) {
    throw new Error(
      'on an external cluster (TALLY_TEST_KUBECONFIG) the CAPV scenario runs in the kind lane only, which provides ' +
        'CAPV and the simulator as Pods (kind/vitest.config.ts); run it there or without TALLY_TEST_KUBECONFIG',
    );
  }
  return { lane, capv: lane.capv };
}

const log = (line: string): void => {
  console.error(`[tally-e2e] capv: ${line}`);
};

/**
 * Where CAPV, the simulators and the reference provider run: next to testenv's control plane as processes (the e2e
 * suite), or as Pods on the kind lane's cluster, where an API server in a container calls CAPV's webhooks through
 * their Service, Tally runs as its Deployment (webhooks on) and the reference provider as a Deployment of its own.
 * The take-over's second Tally is a process in both places (`tally-in-cluster.ts`).
 */
export interface CapvHost {
  readonly where: string;
  startVcsim(namespace: string): Promise<CapvScenarioContext['vcsim'] & { readonly hint: string }>;
  tallyLog(): ProviderLog;
  /**
   * The reference provider with its pool CRDs, its pools on `net` (`providers.ts`), running until `halt` (its
   * objects and CRDs stay) or `stop` (on the lane its CRDs go too).
   */
  startReference(net?: number): Promise<Pick<RunningReferencePod, 'provider' | 'halt' | 'stop'>>;
  /** Where a process the test starts keeps its log when it stops (the lane's log directory), if anywhere. */
  readonly keepLogsIn: string | undefined;
  readonly capvHint: string;
  stop(): Promise<void>;
}

export async function localHost(capvVersion: string): Promise<CapvHost> {
  // One CAPV manager for every run; each run gets a simulator of its own, started with the credentials CAPV has, so
  // no run sees what an earlier one left in the simulator's inventory.
  const credentials: VcsimCredentials = vcsimCredentials();
  // The first use builds the binaries (npm test's prepare stage did already); the simulator's too, here.
  await startVcsim({ credentials, capvVersion, onProgress: log }).then((probe) => probe.stop());
  const capv: Capv = await startCapv(testEnv(), { version: capvVersion, credentials, onProgress: log });
  return {
    where: 'processes next to the control plane',
    startVcsim: async () => {
      const vcsim = await startVcsim({ credentials, capvVersion, onProgress: log });
      log(`simulator on ${vcsim.server} (thumbprint ${vcsim.thumbprint}); log: ${vcsim.logPath}`);
      return { ...vcsim, hint: `the simulator's log: ${vcsim.logPath}` };
    },
    tallyLog: () => {
      const apps = runningApps();
      if (apps.ipam.kind !== 'process') throw new Error('the IPAM controller must run as a process here');
      return tallyProcessLog(apps.ipam.logPath);
    },
    startReference: async (net) => {
      const reference = await startReferenceIpam(testEnv().kubeconfigPath, { onProgress: log });
      return {
        provider: referenceProvider(
          {
            version: reference.binary.version,
            log: { hint: `the reference provider's log: ${reference.logPath}`, read: reference.log },
          },
          net,
        ),
        // The process is all there is of it here: the CRDs startReferenceIpam installed stay, with every object.
        halt: () => reference.stop(),
        stop: () => reference.stop(),
      };
    },
    keepLogsIn: undefined,
    capvHint: `CAPV's log: ${capv.logPath}`,
    stop: () => capv.stop(),
  };
}

export async function laneHost(): Promise<CapvHost> {
  const { lane, capv } = laneCapv();
  const env = testEnv();
  const installed = await installCapvOnLane(lane, capv, env.kubeConfig, log);
  log(
    `CAPV ${capv.version} as a Pod: installed and its webhooks answering in ${(installed.durationMs / 1000).toFixed(1)} s`,
  );
  const since = Date.now();
  return {
    where: 'Pods on the kind lane',
    startVcsim: async (namespace) => {
      const vcsim = await startVcsimPod(env.kubeConfig, lane, capv, namespace);
      log(`simulator Pod behind ${vcsim.server} (thumbprint ${vcsim.thumbprint})`);
      return vcsim;
    },
    tallyLog: () => {
      const apps = runningApps();
      if (apps.ipam.kind !== 'pods') throw new Error('the IPAM controller must run as Pods on the lane');
      return podLogs(env.kubeConfig, apps.ipam.namespace, apps.ipam.podSelector, since);
    },
    startReference: (net) => startReferencePod(env.kubeConfig, lane, capv.reference, log, net),
    keepLogsIn: LANE_LOG_DIR,
    capvHint: `CAPV's log: kubectl -n ${capv.namespace} logs -l ${capv.podSelector} --tail=-1`,
    // CAPV stays installed: the lane's teardown keeps its Pod's log (kind/logs/) with the others'.
    stop: async () => {},
  };
}
