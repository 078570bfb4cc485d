import { Client } from '@tally-ipam/controller-kit/client';
import { createTestNamespace, testEnv } from '@tally-ipam/testenv/vitest';
import {
  type Capv,
  capvVersionFor,
  type ReferenceIpam,
  startCapv,
  startReferenceIpam,
  startVcsim,
  type VcsimCredentials,
  vcsimCredentials,
} from '@tally-ipam/vsphere';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { eventually, logsHint, runningApps } from '../harness.js';
import { type IpamProviderUnderTest, referenceProvider, tallyProvider } from './providers.js';
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

// CAPV's webhooks, like the apps', are served on this machine's loopback, which an external cluster's API server
// (kind: in a container) cannot call. The kind lane's config leaves this file out; run on an external cluster anyway,
// it fails with that reason instead of passing without running (CAPV as a Pod in kind is issue 32's item 4).
describe(`CAPV ${capvVersion}, unmodified, on the vCenter simulator claims IPAM addresses (Cluster API ${testEnv().capiVersion})`, () => {
  // One CAPV manager for both runs; each run gets a simulator of its own, started with the credentials CAPV has, so
  // no run sees what an earlier one left in the simulator's inventory.
  const credentials: VcsimCredentials = vcsimCredentials();
  let capv: Capv | undefined;
  const figures: ScenarioFigures[] = [];

  beforeAll(async () => {
    if (testEnv().external) {
      throw new Error(
        'the CAPV scenario runs CAPV and its vCenter simulator as processes on this machine, whose loopback an ' +
          "external cluster's API server (TALLY_TEST_KUBECONFIG) cannot reach for CAPV's webhooks: run it without " +
          'TALLY_TEST_KUBECONFIG (the kind lane leaves this file out)',
      );
    }
    // The first use builds the binaries (npm test's prepare stage did already); the simulator's too, here.
    await startVcsim({ credentials, capvVersion, onProgress: log }).then((probe) => probe.stop());
    capv = await startCapv(testEnv(), { version: capvVersion, credentials, onProgress: log });
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await capv?.stop();
    for (const figure of figures) {
      log(
        `${figure.provider}: MachineDeployment created → all 3 Machines have addresses in ` +
          `${(figure.firstAddressesMs / 1000).toFixed(1)} s; phases: ${figure.phases.join(', ')}`,
      );
    }
  });

  const run = async (provider: IpamProviderUnderTest, prefix: string): Promise<void> => {
    const env = testEnv();
    if (!capv) throw new Error('CAPV did not start');
    const vcsim = await startVcsim({ credentials, capvVersion, onProgress: log });
    log(`simulator on ${vcsim.server} (thumbprint ${vcsim.thumbprint}); log: ${vcsim.logPath}`);
    const ns = await createTestNamespace(env.kubeConfig, prefix);
    const client = new Client(env.kubeConfig, { fieldManager: 'tally-e2e' });
    const hint = `${logsHint(env)}; CAPV's log: ${capv.logPath}; the simulator's log: ${vcsim.logPath}`;
    const context: CapvScenarioContext = {
      kubeConfig: env.kubeConfig,
      client,
      vcsim,
      namespace: ns.name,
      suffix: ns.name.split('-').pop() ?? ns.name,
      hint,
      eventually: (what, probe, describe) => eventually(what, probe, { timeoutMs: 300_000, hint, describe }),
    };
    try {
      const figure = await runCapvScenario(context, provider);
      figures.push(figure);
      log(
        `${figure.provider}: MachineDeployment created → all 3 Machines have addresses in ${(figure.firstAddressesMs / 1000).toFixed(1)} s`,
      );
    } finally {
      client.close();
      await ns.delete();
      await vcsim.stop();
    }
  };

  it(
    'Tally binds every claim CAPV creates; the VMs carry exactly those addresses; pause, scale 3 → 6 → 1 and delete',
    async () => {
      const apps = runningApps();
      if (apps.ipam.kind !== 'process') throw new Error('the IPAM controller must run as a process here');
      await run(tallyProvider(apps.ipam.logPath), 'e2e-capv-tally');
    },
    SCENARIO_TIMEOUT_MS,
  );

  it(
    'the reference in-cluster provider v1.1.0 passes the same scenario with its own pool kinds',
    async () => {
      const env = testEnv();
      let reference: ReferenceIpam | undefined;
      try {
        reference = await startReferenceIpam(env.kubeconfigPath, { onProgress: log });
        await run(referenceProvider(reference), 'e2e-capv-reference');
      } finally {
        await reference?.stop();
      }
    },
    SCENARIO_TIMEOUT_MS,
  );
});
