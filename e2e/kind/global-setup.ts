/**
 * The kind lane's global setup: Tally run the way users run it (`lane/lane.ts`: a kind cluster from the offline node
 * image, the images loaded, Cluster API core, Tally and Sim installed by `clusterctl init` from their components
 * without cert-manager, the IPAM controller at 2 replicas with leader election, webhooks through their Services).
 * Tally and Sim start at the previous release: `kind/test/lifecycle.test.ts`, which the lane runs first, upgrades them
 * to this tree (`TALLY_LANE_INSTALL=current` installs this tree's at once, e.g. to run one file alone). Then
 * testenv's external mode on that cluster, and the e2e files unchanged (`kind/vitest.config.ts`). The cluster, its
 * containers, network and volumes are deleted at teardown, also when a test or this setup failed; the Pods' logs are
 * kept in `kind/logs/`, the phases' wall times in `kind/lane-phases.json`.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createGlobalSetup, type GlobalSetup } from '@tally-ipam/testenv/vitest';
import { APPS_PROVIDE_KEY, METAL3_PROVIDE_KEY, type ProvidedApp, WEBHOOKS_PROVIDE_KEY } from '../test/apps.js';
import { type Lane, startLane } from './lane/lane.js';
import { LANE_CLUSTER_PROVIDE_KEY, type LanePhases } from './lane/provided.js';
import { LANE_PROVIDERS, type LaneProvider } from './lane/providers.js';

const PHASES_FILE = fileURLToPath(new URL('./lane-phases.json', import.meta.url));

const log = (line: string): void => {
  console.error(`[tally-lane] ${line}`);
};

function writePhases(phases: LanePhases): void {
  writeFileSync(PHASES_FILE, `${JSON.stringify(phases, null, 2)}\n`);
  log(`phases (ms): ${JSON.stringify(phases)}`);
}

/** Where the lane starts: `TALLY_LANE_INSTALL=current` skips the previous release (and the upgrade test). */
function installFrom(): 'previous' | 'current' {
  const value = process.env.TALLY_LANE_INSTALL ?? 'previous';
  if (value !== 'previous' && value !== 'current') {
    throw new Error(`TALLY_LANE_INSTALL=${value}: expected previous (the default) or current`);
  }
  return value;
}

const setup: GlobalSetup = async (project) => {
  const phases: LanePhases = {};
  let lane: Lane;
  try {
    lane = await startLane({ log, phases, installFrom: installFrom(), withCapv: true });
  } catch (error) {
    writePhases(phases);
    throw error;
  }
  let teardownEnv: (() => Promise<void>) | undefined;
  let testsStartedAt: number | undefined;
  const teardown = async (): Promise<void> => {
    if (testsStartedAt !== undefined) lane.phases.tests = Math.round(performance.now() - testsStartedAt);
    try {
      await teardownEnv?.();
    } finally {
      await lane.stop();
      writePhases(lane.phases);
    }
  };
  try {
    // testenv's external mode on the lane's cluster: checks Cluster API's webhooks are there, provides the kubeconfig.
    process.env.TALLY_TEST_KUBECONFIG = lane.cluster.kubeconfigPath;
    teardownEnv = await createGlobalSetup({ capiManager: true })(project);
    const pods = (provider: LaneProvider): ProvidedApp => ({
      kind: 'pods',
      namespace: provider.namespace,
      deployment: provider.deployment,
      podSelector: provider.podSelector,
      kubeconfigPath: lane.cluster.kubeconfigPath,
    });
    project.provide(APPS_PROVIDE_KEY, { ipam: pods(LANE_PROVIDERS.ipam), sim: pods(LANE_PROVIDERS.sim) });
    project.provide(WEBHOOKS_PROVIDE_KEY, true);
    project.provide(METAL3_PROVIDE_KEY, true);
    project.provide(LANE_CLUSTER_PROVIDE_KEY, {
      name: lane.cluster.name,
      kubeconfigPath: lane.cluster.kubeconfigPath,
      nodes: [...lane.cluster.nodes],
      ipam: LANE_PROVIDERS.ipam,
      ipamReplicas: lane.ipamReplicas,
      clusterctl: lane.clusterctl,
      versions: lane.versions,
      ...(lane.capv ? { capv: lane.capv } : {}),
    });
    testsStartedAt = performance.now();
  } catch (error) {
    await teardown();
    throw error;
  }
  return teardown;
};

export default setup;
