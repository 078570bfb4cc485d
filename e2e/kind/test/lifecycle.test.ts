/**
 * The lifecycle on the kind lane, where Tally and Sim run as Pods (the IPAM controller at 2 replicas with leader
 * election, webhooks through their Services), installed by `clusterctl init` at the previous release. This file runs
 * first (`kind/sequencer.ts`): it upgrades them to this tree with `clusterctl upgrade apply` while the Pods serve the
 * fleet of both APIs (`test/lifecycle/fleet.ts`), with an admission probe counting what the API server answered
 * during the upgrade, then moves the fleet's namespace to a testenv management cluster (controllers as processes)
 * and back. The steps and their assertions are the testenv suite's (`test/lifecycle/steps.ts`). The fleet is removed
 * at the end, so the files after it find the lane as the setup left it, on this tree's providers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { Client, isNotFound } from '@tally-ipam/controller-kit/client';
import { POOL_RESOURCES } from '@tally-ipam/ipam-provider';
import { writeMetal3CRDsAsset } from '@tally-ipam/release';
import { installCRDs } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { eventually, logsHint, runningApps } from '../../test/harness.js';
import { type Clusterctl, clusterctlWithConfig, prepareClusterctl } from '../../test/lifecycle/clusterctl.js';
import {
  type FleetCluster,
  fleetReady,
  NAMESPACE,
  OTHER_NAMESPACE,
  populateFleet,
} from '../../test/lifecycle/fleet.js';
import { addressesByClaim, describeCounts, type Inventory } from '../../test/lifecycle/inventory.js';
import { type ManagementCluster, startManagementCluster } from '../../test/lifecycle/management-cluster.js';
import { expectMoveThereAndBack, expectUpgradeKept, upgradeTallyProviders } from '../../test/lifecycle/steps.js';
import { awaitWebhooksAnswer } from '../../test/webhooks.js';
import { LANE_CLUSTER_PROVIDE_KEY } from '../lane/provided.js';
import { LANE_PROVIDERS } from '../lane/providers.js';
import { awaitRollout } from '../lane/rollout.js';
import { removeAdmissionProbe, startAdmissionProbe } from './admission-probe.js';

const progress = (message: string): void => {
  process.stderr.write(`[lifecycle kind] ${message}\n`);
};
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

const lane = inject(LANE_CLUSTER_PROVIDE_KEY);
const env = testEnv();
/** The lane's cluster as the fleet's helpers take it. */
const kind: FleetCluster = {
  name: 'kind',
  env,
  kubeConfig: () => env.kubeConfig,
  logsHint: () => `${logsHint(env)} (kind/logs/ keeps every Pod's log after the run)`,
};
/** The lane's clusterctl: its repository holds both versions of Tally and Sim as the lane renders them. */
const clusterctl: Clusterctl = clusterctlWithConfig(lane.clusterctl);
const work = mkdtempSync(join(tmpdir(), 'tally-lane-lifecycle-'));
let target: ManagementCluster | undefined;
/** The fleet as the upgrade left it. */
let fleet: Inventory;

beforeAll(async () => {
  runningApps();
  // The testenv management cluster the fleet moves to: Tally's providers of this tree from the stand-in repository
  // (no kubelet runs their Deployments there; the apps run as processes), Cluster API's manager as a process.
  const testenvClusterctl = await prepareClusterctl(work, { version: lane.versions.current });
  target = await startManagementCluster('testenv', testenvClusterctl, { onProgress: progress });
}, 1_800_000);

afterAll(async () => {
  try {
    await removeFleet();
  } finally {
    await target?.stop();
    rmSync(work, { recursive: true, force: true });
  }
});

/** The fleet leaves the lane's cluster: its Cluster (with its tree), namespaces and global pools deleted. */
async function removeFleet(): Promise<void> {
  const kc = env.kubeConfig;
  const core = kc.makeApiClient(CoreV1Api);
  const client = new Client(kc, { fieldManager: 'tally-lane-lifecycle' });
  try {
    for (const name of [NAMESPACE, OTHER_NAMESPACE]) await core.deleteNamespace({ name }).catch(() => undefined);
    await eventually(
      'the fleet namespaces gone (Tally released their addresses, its pool webhooks let the pools go)',
      async () => {
        const names = (await core.listNamespace()).items.map((item) => item.metadata?.name);
        return names.includes(NAMESPACE) || names.includes(OTHER_NAMESPACE) ? undefined : true;
      },
      { hint: kind.logsHint() },
    );
    // Absent when the upgrade test failed before the fleet was written.
    const gone = (error: unknown): void => {
      if (!isNotFound(error)) throw error;
    };
    await client.delete(POOL_RESOURCES.GlobalTallyIPPool, { name: 'fleet-v6' }).catch(gone);
    await client.delete(POOL_RESOURCES.GlobalTallyPrefixPool, { name: 'fleet-v6-prefixes' }).catch(gone);
  } finally {
    client.close();
  }
}

describe('the kind lane: Tally and Sim as Pods through clusterctl', () => {
  it('upgrade apply from the previous release while the Pods serve keeps every allocation; the webhooks answer again', async () => {
    const { previous, current } = lane.versions;
    if (previous === undefined) {
      throw new Error(
        `the lane installed v${lane.versions.installed} (TALLY_LANE_INSTALL=current): this file upgrades from the ` +
          'previous release, run the lane without it',
      );
    }
    const kc = env.kubeConfig;
    await populateFleet(kind);
    const before = await fleetReady(kind);
    progress(`on v${previous}: ${describeCounts(before)}`);

    const probe = await startAdmissionProbe(kc);
    let counts: Awaited<ReturnType<typeof probe.stop>>;
    let applied: number;
    try {
      applied = await upgradeTallyProviders(clusterctl, kind, previous, current);
      progress(`clusterctl upgrade apply took ${seconds(applied)}`);
      // The release notes' step for Metal3 users: the new asset, server-side (it fixes the CRDs' labels).
      await installCRDs(kc, [writeMetal3CRDsAsset(join(work, 'assets'))]);
      const rollStarted = performance.now();
      await Promise.all([
        awaitRollout(kc, LANE_PROVIDERS.ipam.namespace, LANE_PROVIDERS.ipam.deployment),
        awaitRollout(kc, LANE_PROVIDERS.sim.namespace, LANE_PROVIDERS.sim.deployment),
      ]);
      await awaitWebhooksAnswer(kc, ['ipam', 'sim']);
      progress(
        `after apply, both Deployments rolled out and all webhooks answering in ${seconds(performance.now() - rollStarted)}`,
      );
    } finally {
      counts = await probe.stop();
      await removeAdmissionProbe(kc);
    }
    progress(`admission probe during the upgrade: ${JSON.stringify(counts)}`);
    // Before the upgrade and once it is done, the webhooks themselves answered.
    expect(counts.tally.answered).toBeGreaterThan(0);
    expect(counts.sim.answered).toBeGreaterThan(0);
    expect(counts.last).toEqual({ tally: 'answered', sim: 'answered' });
    // No valid request was refused by anything but a webhook that could not be called.
    expect(counts.tally.refused, JSON.stringify(counts.messages)).toBe(0);
    expect(counts.sim.refused, JSON.stringify(counts.messages)).toBe(0);

    fleet = await expectUpgradeKept(kind, before, progress);
    progress(`after the upgrade: ${describeCounts(fleet)}`);
  });

  it("move to a testenv management cluster and back keeps every address of the Cluster's tree; claims outside it stay", async () => {
    if (!target) throw new Error('the testenv management cluster did not start');
    expect(fleet, 'the upgrade test left no fleet').toBeDefined();
    const times = await expectMoveThereAndBack(clusterctl, { source: kind, target }, fleet, progress);
    progress(`clusterctl move kind → testenv ${seconds(times.there)}, back ${seconds(times.back)}`);
    // Back on the Pods: every claim bound again at the address it had (the IPAddress objects are new ones, as the
    // move creates each object anew; their uids differ by construction).
    const after = await fleetReady(kind);
    expect(addressesByClaim(after)).toEqual(addressesByClaim(fleet));
  });
});
