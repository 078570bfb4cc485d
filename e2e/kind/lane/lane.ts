/**
 * The lane's cluster with everything installed, shared by the global setup and the memory bench: stale lane clusters
 * removed, the two apps' daemonless images built and, with the Cluster API manager image, loaded into a new kind
 * cluster; Cluster API core, Tally and Sim installed from their components in the variant without cert-manager
 * (serving certificate Secrets and caBundles issued here), the IPAM controller at `ipamReplicas`; ready once every
 * Deployment rolled out and every webhook answers through its Service.
 */
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import {
  applyManifests,
  issueServingCertificates,
  type Manifest,
  servingCertificateRequests,
  withServingCertificateSecrets,
} from '@tally-ipam/ship';
import { awaitWebhooksAnswer } from '../../test/webhooks.js';
import { renderCapiCoreComponents } from './capi-components.js';
import { createLaneCluster, type LaneCluster, prepareLane, removeStaleLaneClusters } from './kind.js';
import type { LanePhases } from './provided.js';
import {
  buildProviderImage,
  LANE_PROVIDERS,
  type LaneProvider,
  renderProviderComponents,
  withReplicas,
} from './providers.js';
import { awaitCapiWebhooks, awaitRollout, savePodLogs } from './rollout.js';

const FIELD_MANAGER = 'tally-kind-lane';
export const LANE_NAMESPACES: readonly string[] = [
  'capi-system',
  LANE_PROVIDERS.ipam.namespace,
  LANE_PROVIDERS.sim.namespace,
];
/** Where the Pods' logs are written when the lane's cluster is deleted. */
export const LANE_LOG_DIR = fileURLToPath(new URL('../logs/', import.meta.url));

export interface LaneOptions {
  /** Two by default: the chaos test deletes the leader and the other one takes over. */
  readonly ipamReplicas?: number;
  readonly log: (line: string) => void;
  /** Filled with each phase's wall time as it ends (also when a later phase fails). */
  readonly phases?: LanePhases;
}

export interface Lane {
  readonly cluster: LaneCluster;
  readonly kubeConfig: KubeConfig;
  readonly ipamReplicas: number;
  readonly phases: LanePhases;
  /** Keeps the Pods' logs in LANE_LOG_DIR and deletes the cluster (containers, network, volumes). */
  stop(): Promise<void>;
}

/** The components with their serving certificates issued here, the cert-manager objects replaced. */
async function withoutCertManager(manifests: readonly Manifest[]): Promise<Manifest[]> {
  return withServingCertificateSecrets(
    manifests,
    await issueServingCertificates(servingCertificateRequests(manifests)),
  );
}

export async function startLane(options: LaneOptions): Promise<Lane> {
  const { log } = options;
  const ipamReplicas = options.ipamReplicas ?? 2;
  const phases: LanePhases = options.phases ?? {};
  const mark = async <T>(phase: keyof LanePhases, work: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await work();
    } finally {
      const ms = Math.round(performance.now() - started);
      phases[phase] = ms;
      log(`${phase}: ${(ms / 1000).toFixed(1)} s`);
    }
  };
  const removed = await removeStaleLaneClusters(log);
  if (removed.length > 0) log(`removed clusters of an earlier run: ${removed.join(', ')}`);
  const tooling = await mark('prepare', () => prepareLane(log));
  const images = await mark('imagesBuild', async () => ({
    ipam: buildProviderImage(LANE_PROVIDERS.ipam),
    sim: buildProviderImage(LANE_PROVIDERS.sim),
  }));
  const cluster = await mark('clusterCreate', () => createLaneCluster(`tally-lane-${process.pid}`, log));
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(cluster.kubeconfigPath);
  const stop = async (): Promise<void> => {
    await savePodLogs(kubeConfig, LANE_NAMESPACES, LANE_LOG_DIR).then(
      () => log(`the Pods' logs are in ${LANE_LOG_DIR}`),
      (error: unknown) => log(`the Pods' logs could not be saved: ${String(error)}`),
    );
    await mark('clusterDelete', () => cluster.delete());
  };
  try {
    await mark('imagesLoad', async () => {
      for (const archive of [
        tooling.capiManagerArchive,
        LANE_PROVIDERS.ipam.imageArchive,
        LANE_PROVIDERS.sim.imageArchive,
      ]) {
        await cluster.loadImageArchive(archive);
      }
    });
    await mark('installs', async () => {
      await applyManifests(kubeConfig, await withoutCertManager(await renderCapiCoreComponents(log)), FIELD_MANAGER);
      const install = async (provider: LaneProvider, image: string, replicas: number): Promise<void> => {
        const manifests = withReplicas(renderProviderComponents(provider, image), provider.deployment, replicas);
        await applyManifests(kubeConfig, await withoutCertManager(manifests), FIELD_MANAGER);
      };
      await install(LANE_PROVIDERS.ipam, images.ipam, ipamReplicas);
      await install(LANE_PROVIDERS.sim, images.sim, 1);
    });
    await mark('rollouts', async () => {
      await Promise.all([
        awaitRollout(kubeConfig, 'capi-system', 'capi-controller-manager'),
        awaitRollout(kubeConfig, LANE_PROVIDERS.ipam.namespace, LANE_PROVIDERS.ipam.deployment),
        awaitRollout(kubeConfig, LANE_PROVIDERS.sim.namespace, LANE_PROVIDERS.sim.deployment),
      ]);
      await awaitCapiWebhooks(kubeConfig);
      await awaitWebhooksAnswer(kubeConfig, ['ipam', 'sim']);
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { cluster, kubeConfig, ipamReplicas, phases, stop };
}
