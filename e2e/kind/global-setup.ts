/**
 * The kind lane's global setup: Tally run the way users run it. A kind cluster from the offline node image
 * (@tally-ipam/kind), the two apps' daemonless images and the Cluster API manager image loaded into it, then Cluster
 * API core, Tally and Sim installed from their components (the variant without cert-manager: serving certificate
 * Secrets and caBundles issued here), the IPAM controller at 2 replicas with leader election, webhooks reached through
 * their Services. Then testenv's external mode on that cluster, and the e2e files unchanged (`kind/vitest.config.ts`).
 * The cluster, its containers, network and volumes are deleted at teardown, also when a test or this setup failed;
 * the Pods' logs are kept in `kind/logs/`.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import {
  applyManifests,
  issueServingCertificates,
  type Manifest,
  servingCertificateRequests,
  withServingCertificateSecrets,
} from '@tally-ipam/ship';
import { createGlobalSetup, type GlobalSetup } from '@tally-ipam/testenv/vitest';
import { APPS_PROVIDE_KEY, WEBHOOKS_PROVIDE_KEY } from '../test/apps.js';
import { awaitWebhooksAnswer } from '../test/webhooks.js';
import { renderCapiCoreComponents } from './lane/capi-components.js';
import { createLaneCluster, type LaneCluster, prepareLane, removeStaleLaneClusters } from './lane/kind.js';
import { LANE_CLUSTER_PROVIDE_KEY, type LanePhases } from './lane/provided.js';
import {
  buildProviderImage,
  LANE_PROVIDERS,
  type LaneProvider,
  renderProviderComponents,
  withReplicas,
} from './lane/providers.js';
import { awaitCapiWebhooks, awaitRollout, savePodLogs } from './lane/rollout.js';

const FIELD_MANAGER = 'tally-kind-lane';
/** Two replicas: the chaos test deletes the leader and the other one takes over. */
export const IPAM_REPLICAS = 2;
const LOG_DIR = fileURLToPath(new URL('./logs/', import.meta.url));
const PHASES_FILE = fileURLToPath(new URL('./lane-phases.json', import.meta.url));

const log = (line: string): void => {
  console.error(`[tally-lane] ${line}`);
};

/** The components with their serving certificates issued here, the cert-manager objects replaced. */
async function withoutCertManager(manifests: readonly Manifest[]): Promise<Manifest[]> {
  return withServingCertificateSecrets(
    manifests,
    await issueServingCertificates(servingCertificateRequests(manifests)),
  );
}

const setup: GlobalSetup = async (project) => {
  const phases: LanePhases = {};
  const mark = async <T>(phase: keyof LanePhases, work: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await work();
    } finally {
      phases[phase] = Math.round(performance.now() - started);
      log(`${phase}: ${(phases[phase] / 1000).toFixed(1)} s`);
    }
  };
  const clusterName = `tally-lane-${process.pid}`;
  let cluster: LaneCluster | undefined;
  let teardownEnv: (() => Promise<void>) | undefined;
  let testsStartedAt: number | undefined;
  const namespaces = ['capi-system', LANE_PROVIDERS.ipam.namespace, LANE_PROVIDERS.sim.namespace];
  const teardown = async (): Promise<void> => {
    if (testsStartedAt !== undefined) phases.tests = Math.round(performance.now() - testsStartedAt);
    try {
      await teardownEnv?.();
    } finally {
      if (cluster) {
        const kc = new KubeConfig();
        kc.loadFromFile(cluster.kubeconfigPath);
        await savePodLogs(kc, namespaces, LOG_DIR).catch((error: unknown) =>
          log(`pod logs not saved: ${String(error)}`),
        );
        log(`the Pods' logs are in ${LOG_DIR}`);
        await mark('clusterDelete', () => (cluster as LaneCluster).delete());
      }
      writeFileSync(PHASES_FILE, `${JSON.stringify(phases, null, 2)}\n`);
      log(`phases (ms): ${JSON.stringify(phases)}`);
    }
  };
  try {
    const removed = await removeStaleLaneClusters(log);
    if (removed.length > 0) log(`removed clusters of an earlier run: ${removed.join(', ')}`);
    const tooling = await mark('prepare', () => prepareLane(log));
    const images = await mark('imagesBuild', async () => ({
      ipam: buildProviderImage(LANE_PROVIDERS.ipam),
      sim: buildProviderImage(LANE_PROVIDERS.sim),
    }));
    cluster = await mark('clusterCreate', () => createLaneCluster(clusterName, log));
    const created = cluster;
    await mark('imagesLoad', async () => {
      for (const archive of [
        tooling.capiManagerArchive,
        LANE_PROVIDERS.ipam.imageArchive,
        LANE_PROVIDERS.sim.imageArchive,
      ]) {
        await created.loadImageArchive(archive);
      }
    });
    const kc = new KubeConfig();
    kc.loadFromFile(created.kubeconfigPath);
    await mark('installs', async () => {
      await applyManifests(kc, await withoutCertManager(await renderCapiCoreComponents(log)), FIELD_MANAGER);
      const install = async (provider: LaneProvider, image: string, replicas: number): Promise<void> => {
        const manifests = withReplicas(renderProviderComponents(provider, image), provider.deployment, replicas);
        await applyManifests(kc, await withoutCertManager(manifests), FIELD_MANAGER);
      };
      await install(LANE_PROVIDERS.ipam, images.ipam, IPAM_REPLICAS);
      await install(LANE_PROVIDERS.sim, images.sim, 1);
    });
    await mark('rollouts', async () => {
      await Promise.all([
        awaitRollout(kc, 'capi-system', 'capi-controller-manager'),
        awaitRollout(kc, LANE_PROVIDERS.ipam.namespace, LANE_PROVIDERS.ipam.deployment),
        awaitRollout(kc, LANE_PROVIDERS.sim.namespace, LANE_PROVIDERS.sim.deployment),
      ]);
      await awaitCapiWebhooks(kc);
      await awaitWebhooksAnswer(kc, ['ipam', 'sim']);
    });
    // testenv's external mode on the lane's cluster: checks Cluster API's webhooks are there, provides the kubeconfig.
    process.env.TALLY_TEST_KUBECONFIG = created.kubeconfigPath;
    teardownEnv = await createGlobalSetup({ capiManager: true })(project);
    const pods = (provider: LaneProvider) =>
      ({
        kind: 'pods',
        namespace: provider.namespace,
        deployment: provider.deployment,
        podSelector: provider.podSelector,
        kubeconfigPath: created.kubeconfigPath,
      }) as const;
    project.provide(APPS_PROVIDE_KEY, { ipam: pods(LANE_PROVIDERS.ipam), sim: pods(LANE_PROVIDERS.sim) });
    project.provide(WEBHOOKS_PROVIDE_KEY, true);
    project.provide(LANE_CLUSTER_PROVIDE_KEY, {
      name: created.name,
      kubeconfigPath: created.kubeconfigPath,
      nodes: [...created.nodes],
      ipam: LANE_PROVIDERS.ipam,
      ipamReplicas: IPAM_REPLICAS,
    });
    testsStartedAt = performance.now();
  } catch (error) {
    await teardown();
    throw error;
  }
  return teardown;
};

export default setup;
