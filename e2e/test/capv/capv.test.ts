import { Client } from '@tally-ipam/controller-kit/client';
import { createTestNamespace, testEnv } from '@tally-ipam/testenv/vitest';
import {
  type Capv,
  capvVersionFor,
  startCapv,
  startReferenceIpam,
  startVcsim,
  type VcsimCredentials,
  vcsimCredentials,
} from '@tally-ipam/vsphere';
import { afterAll, beforeAll, describe, inject, it } from 'vitest';
import type { LaneCapv } from '../../kind/lane/capv.js';
import { LANE_CLUSTER_PROVIDE_KEY, type ProvidedLaneCluster } from '../../kind/lane/provided.js';
import { eventually, logsHint, runningApps } from '../harness.js';
import { installCapvOnLane, podLogs, startVcsimPod } from './in-cluster.js';
import {
  type IpamProviderUnderTest,
  type ProviderLog,
  referenceProvider,
  tallyProcessLog,
  tallyProvider,
} from './providers.js';
import { startReferencePod } from './reference-pod.js';
import { type CapvScenarioContext, runCapvScenario, type ScenarioFigures } from './scenario.js';

const log = (line: string): void => {
  console.error(`[tally-e2e] capv: ${line}`);
};

/** A whole scenario on a loaded 2-core machine: CAPV requeues some steps after 10 s. Only against a hang. */
const SCENARIO_TIMEOUT_MS = 1_800_000;
/** The binaries come from npm test's prepare stage; run alone on a fresh machine, beforeAll builds them. */
const SETUP_TIMEOUT_MS = 3_600_000;

/** The CAPV release paired with the run's Cluster API release (CAPV v1.16.1 on v1.14.2, v1.15.2 on v1.12.10). */
const capvVersion = capvVersionFor(testEnv().capiVersion);

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

/**
 * Where CAPV, the simulators and the reference provider run: next to testenv's control plane as processes (the e2e
 * suite), or as Pods on the kind lane's cluster, where an API server in a container calls CAPV's webhooks through
 * their Service, Tally runs as its Deployment (webhooks on) and the reference provider as a Deployment of its own.
 */
interface CapvHost {
  readonly where: string;
  startVcsim(namespace: string): Promise<CapvScenarioContext['vcsim'] & { readonly hint: string }>;
  tallyLog(): ProviderLog;
  /** The reference provider with its pool CRDs, running until `stop`. */
  startReference(): Promise<{ provider: IpamProviderUnderTest; stop(): Promise<void> }>;
  readonly capvHint: string;
  stop(): Promise<void>;
}

async function localHost(capvVersion: string): Promise<CapvHost> {
  // One CAPV manager for both runs; each run gets a simulator of its own, started with the credentials CAPV has, so
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
    startReference: async () => {
      const reference = await startReferenceIpam(testEnv().kubeconfigPath, { onProgress: log });
      return {
        provider: referenceProvider({
          version: reference.binary.version,
          log: { hint: `the reference provider's log: ${reference.logPath}`, read: reference.log },
        }),
        stop: () => reference.stop(),
      };
    },
    capvHint: `CAPV's log: ${capv.logPath}`,
    stop: () => capv.stop(),
  };
}

async function laneHost(): Promise<CapvHost> {
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
    startReference: () => startReferencePod(env.kubeConfig, lane, capv.reference, log),
    capvHint: `CAPV's log: kubectl -n ${capv.namespace} logs -l ${capv.podSelector} --tail=-1`,
    // CAPV stays installed: the lane's teardown keeps its Pod's log (kind/logs/) with the others'.
    stop: async () => {},
  };
}

describe(`CAPV ${capvVersion}, unmodified, on the vCenter simulator claims IPAM addresses (Cluster API ${testEnv().capiVersion})`, () => {
  let host: CapvHost | undefined;
  const figures: ScenarioFigures[] = [];

  beforeAll(async () => {
    host = testEnv().external ? await laneHost() : await localHost(capvVersion);
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await host?.stop();
    for (const figure of figures) {
      log(
        `${figure.provider} (${host?.where}): MachineDeployment created → all 3 Machines have addresses in ` +
          `${(figure.firstAddressesMs / 1000).toFixed(1)} s; phases: ${figure.phases.join(', ')}`,
      );
    }
  });

  const run = async (provider: IpamProviderUnderTest, prefix: string): Promise<void> => {
    const env = testEnv();
    if (!host) throw new Error('CAPV did not start');
    const ns = await createTestNamespace(env.kubeConfig, prefix);
    const client = new Client(env.kubeConfig, { fieldManager: 'tally-e2e' });
    let vcsim: Awaited<ReturnType<CapvHost['startVcsim']>> | undefined;
    try {
      vcsim = await host.startVcsim(ns.name);
      const hint = `${logsHint(env)}; ${host.capvHint}; ${vcsim.hint}`;
      const context: CapvScenarioContext = {
        kubeConfig: env.kubeConfig,
        client,
        vcsim,
        namespace: ns.name,
        suffix: ns.name.split('-').pop() ?? ns.name,
        hint,
        eventually: (what, probe, describe) => eventually(what, probe, { timeoutMs: 300_000, hint, describe }),
      };
      const figure = await runCapvScenario(context, provider);
      figures.push(figure);
      log(
        `${figure.provider}: MachineDeployment created → all 3 Machines have addresses in ${(figure.firstAddressesMs / 1000).toFixed(1)} s`,
      );
    } finally {
      client.close();
      await vcsim?.stop();
      await ns.delete();
    }
  };

  it(
    'Tally binds every claim CAPV creates; the VMs carry exactly those addresses; pause, scale 3 → 6 → 1 and delete',
    async () => {
      if (!host) throw new Error('CAPV did not start');
      await run(tallyProvider(host.tallyLog()), 'e2e-capv-tally');
    },
    SCENARIO_TIMEOUT_MS,
  );

  it(
    'the reference in-cluster provider v1.1.0 passes the same scenario with its own pool kinds',
    async () => {
      if (!host) throw new Error('CAPV did not start');
      let reference: Awaited<ReturnType<CapvHost['startReference']>> | undefined;
      try {
        reference = await host.startReference();
        await run(reference.provider, 'e2e-capv-reference');
      } finally {
        await reference?.stop();
      }
    },
    SCENARIO_TIMEOUT_MS,
  );
});
