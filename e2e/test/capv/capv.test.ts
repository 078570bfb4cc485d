import { Client } from '@tally-ipam/controller-kit/client';
import { createTestNamespace, testEnv } from '@tally-ipam/testenv/vitest';
import { capvVersionFor } from '@tally-ipam/vsphere';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { eventually, logsHint } from '../harness.js';
import { type CapvHost, laneHost, localHost } from './hosts.js';
import { tallyProvider } from './providers.js';
import { runCapvScenario } from './scenario.js';
import type { CapvScenarioContext, ScenarioFigures } from './steps.js';
import { runTakeOver } from './takeover.js';
import { type InClusterTally, startInClusterTally } from './tally-in-cluster.js';

const log = (line: string): void => {
  console.error(`[tally-e2e] capv: ${line}`);
};

/** A whole scenario on a loaded 2-core machine: CAPV requeues some steps after 10 s. Only against a hang. */
const SCENARIO_TIMEOUT_MS = 1_800_000;
/** The binaries come from npm test's prepare stage; run alone on a fresh machine, beforeAll builds them. */
const SETUP_TIMEOUT_MS = 3_600_000;

/** The CAPV release paired with the run's Cluster API release (CAPV v1.16.1 on v1.14.2, v1.15.2 on v1.12.10). */
const capvVersion = capvVersionFor(testEnv().capiVersion);
/** The take-over's pools are on 10.92.0.0/24 and fd00:92::/64 (the reference's own run on 91, Tally's on 90). */
const TAKE_OVER_NET = 92;

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

  /** One scenario in a namespace of its own, with a simulator of its own. */
  const run = async (
    prefix: string,
    scenario: (context: CapvScenarioContext) => Promise<ScenarioFigures>,
  ): Promise<void> => {
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
      const figure = await scenario(context);
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
      const provider = tallyProvider(host.tallyLog());
      await run('e2e-capv-tally', (context) => runCapvScenario(context, provider));
    },
    SCENARIO_TIMEOUT_MS,
  );

  it(
    'the reference in-cluster provider v1.1.0 passes the same scenario with its own pool kinds',
    async () => {
      if (!host) throw new Error('CAPV did not start');
      let reference: Awaited<ReturnType<CapvHost['startReference']>> | undefined;
      try {
        const started = await host.startReference();
        reference = started;
        await run('e2e-capv-reference', (context) => runCapvScenario(context, started.provider));
      } finally {
        await reference?.stop();
      }
    },
    SCENARIO_TIMEOUT_MS,
  );

  it(
    'Tally (--enable-in-cluster-ipam) takes over 3 CAPV Machines from the running reference provider v1.1.0 without ' +
      'touching an IPAddress, then scales 3 → 6 → 3 and deletes',
    async () => {
      if (!host) throw new Error('CAPV did not start');
      const { keepLogsIn } = host;
      let reference: Awaited<ReturnType<CapvHost['startReference']>> | undefined;
      let tally: InClusterTally | undefined;
      try {
        const started = await host.startReference(TAKE_OVER_NET);
        reference = started;
        await run('e2e-capv-takeover', (context) =>
          runTakeOver(context, {
            reference: started.provider,
            haltReference: () => started.halt(),
            startTally: async (namespace) => {
              const env = testEnv();
              tally = startInClusterTally({
                kubeconfigPath: env.kubeconfigPath,
                namespace,
                net: TAKE_OVER_NET,
                keepLogIn: keepLogsIn,
              });
              log(`Tally --enable-in-cluster-ipam --namespace=${namespace} started; log: ${tally.logPath}`);
              return tally.provider;
            },
          }),
        );
      } finally {
        // The reference first: on the lane its stop deletes its CRDs, and after a failure Tally, still running, is
        // what releases the finalizers of any pool left.
        await reference?.stop();
        await tally?.stop();
      }
    },
    SCENARIO_TIMEOUT_MS,
  );
});
