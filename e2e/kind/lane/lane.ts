/**
 * The lane's cluster with everything installed, shared by the global setup and the memory bench: stale lane clusters
 * removed, the two apps' daemonless images built (and, when the lane starts at the previous release, that release's
 * images from its own tree) and loaded with the Cluster API manager image into a new kind cluster; Metal3's CRDs
 * applied, then Cluster API core, Tally and Sim installed by the real `clusterctl init` from the lane's repository
 * (`repository.ts`: the components as the lane renders them, in the variant without cert-manager), the IPAM controller
 * at `ipamReplicas` serving Metal3's API too; ready once every Deployment rolled out and every webhook answers
 * through its Service.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { writeMetal3CRDsAsset } from '@tally-ipam/release';
import { installCRDs } from '@tally-ipam/testenv';
import { type ClusterctlSetup, clusterctlWithConfig, expectSuccess } from '../../test/lifecycle/clusterctl.js';
import { NEXT_VERSION } from '../../test/lifecycle/steps.js';
import { awaitWebhooksAnswer } from '../../test/webhooks.js';
import { renderCapiCoreComponents } from './capi-components.js';
import {
  buildCapvImages,
  CAPV_DEPLOYMENT,
  CAPV_NAMESPACE,
  CAPV_POD_SELECTOR,
  CAPV_PROVIDER,
  capvMetadataFile,
  type LaneCapv,
  laneCapvRelease,
  renderCapvComponents,
} from './capv.js';
import { createLaneCluster, type LaneCluster, prepareLane, removeStaleLaneClusters } from './kind.js';
import { buildPreviousImage, type LanePreviousRelease, previousRelease } from './previous-release.js';
import type { LanePhases, LaneVersions } from './provided.js';
import {
  buildProviderImage,
  LANE_PROVIDERS,
  type LaneProvider,
  onLaneNodes,
  providerMetadataFile,
  renderProviderComponents,
  withReplicas,
} from './providers.js';
import { buildReferenceImage } from './reference.js';
import {
  type LaneOtherProvider,
  type LaneRelease,
  laneCertificates,
  type WithoutCertManager,
  writeLaneRepository,
} from './repository.js';
import { awaitCapiWebhooks, awaitRollout, clusterHealth, savePodLogs } from './rollout.js';

export const LANE_NAMESPACES: readonly string[] = [
  'capi-system',
  CAPV_NAMESPACE,
  LANE_PROVIDERS.ipam.namespace,
  LANE_PROVIDERS.sim.namespace,
];
/** Where the Pods' logs are written when the lane's cluster is deleted. */
export const LANE_LOG_DIR = fileURLToPath(new URL('../logs/', import.meta.url));
/**
 * The cluster's container restarts and unwell-container Events (`clusterHealth`), written when the cluster is deleted;
 * `npm test`'s summary prints them under the lane's results (scripts/tally.mjs reads this path).
 */
export const LANE_HEALTH_FILE = fileURLToPath(new URL('../lane-health.json', import.meta.url));
/** What the lane sets of Tally's clusterctl variables: it serves Metal3's API too (the lifecycle fleet has both). */
export const LANE_IPAM_VARIABLES: Readonly<Record<string, string>> = { TALLY_IPAM_ENABLE_METAL3: 'true' };

export interface LaneOptions {
  /** Two by default: the chaos test deletes the leader and the other one takes over. */
  readonly ipamReplicas?: number;
  /**
   * `previous`: Tally and Sim installed at the previous release, which the lane's lifecycle test upgrades to this
   * tree before the other files run; `current` (the default): this tree's providers at once.
   */
  readonly installFrom?: 'previous' | 'current';
  readonly log: (line: string) => void;
  /** Filled with each phase's wall time as it ends (also when a later phase fails). */
  readonly phases?: LanePhases;
  /**
   * CAPV's, the simulator's and the reference IPAM provider's images built and loaded, CAPV in the repository (not
   * installed: the CAPV scenario installs it with `clusterctl init`, and the reference provider as a Deployment of its
   * own). Off by default (the memory bench has no use for it).
   */
  readonly withCapv?: boolean;
}

export interface Lane {
  readonly cluster: LaneCluster;
  readonly kubeConfig: KubeConfig;
  readonly ipamReplicas: number;
  readonly phases: LanePhases;
  /** The lane's clusterctl (its repository holds every version in `versions`), for test files. */
  readonly clusterctl: ClusterctlSetup;
  readonly versions: LaneVersions;
  /** What the CAPV scenario needs to install and use CAPV, when `withCapv`. */
  readonly capv?: LaneCapv;
  /** Keeps the Pods' logs in LANE_LOG_DIR and deletes the cluster (containers, network, volumes). */
  stop(): Promise<void>;
}

/**
 * One version of both providers, rendered from `providers`' tree with the loaded images, ready for the repository;
 * Tally's clusterctl variables are the lane's unless `ipamVariables` says otherwise.
 */
export async function laneRelease(
  version: string,
  providers: Readonly<Record<'ipam' | 'sim', LaneProvider>>,
  images: Readonly<Record<'ipam' | 'sim', string>>,
  ipamReplicas: number,
  nodes: readonly string[],
  withoutCertManager: WithoutCertManager,
  ipamVariables: Readonly<Record<string, string>> = LANE_IPAM_VARIABLES,
): Promise<LaneRelease> {
  const ipam = withReplicas(
    renderProviderComponents(providers.ipam, images.ipam, ipamVariables),
    providers.ipam.deployment,
    ipamReplicas,
  );
  return {
    version,
    components: {
      ipam: await withoutCertManager(onLaneNodes(ipam, nodes)),
      sim: await withoutCertManager(onLaneNodes(renderProviderComponents(providers.sim, images.sim), nodes)),
    },
    metadataFiles: { ipam: providerMetadataFile(providers.ipam), sim: providerMetadataFile(providers.sim) },
  };
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
  const capvRelease = options.withCapv ? laneCapvRelease() : undefined;
  // The reference IPAM provider's image with CAPV's: the CAPV scenario runs against both providers.
  const capvImages = capvRelease
    ? await mark('capvImagesBuild', async () => ({
        ...(await buildCapvImages(capvRelease.version, log)),
        reference: await buildReferenceImage(log),
      }))
    : undefined;
  const previous: LanePreviousRelease | undefined =
    options.installFrom === 'previous' ? await mark('previousRelease', async () => previousRelease(log)) : undefined;
  // The previous release's images are built while kind creates the cluster (mostly waiting on the node).
  const previousImages = previous
    ? (async () => ({
        ipam: await buildPreviousImage(previous, 'ipam'),
        sim: await buildPreviousImage(previous, 'sim'),
      }))()
    : undefined;
  previousImages?.catch(() => {});
  const imagesStarted = performance.now();
  const cluster = await mark('clusterCreate', () => createLaneCluster(`tally-lane-${process.pid}`, log));
  const work = mkdtempSync(join(tmpdir(), 'tally-lane-clusterctl-'));
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(cluster.kubeconfigPath);
  const stop = async (): Promise<void> => {
    await clusterHealth(kubeConfig).then(
      (health) => {
        writeFileSync(LANE_HEALTH_FILE, `${JSON.stringify(health, null, 2)}\n`);
        for (const line of [...health.restarts, ...health.events]) log(`health: ${line}`);
      },
      (error: unknown) => log(`the cluster's health could not be read: ${String(error).slice(0, 200)}`),
    );
    await savePodLogs(kubeConfig, [...LANE_NAMESPACES, 'kube-system'], LANE_LOG_DIR).then(
      () => log(`the Pods' logs are in ${LANE_LOG_DIR}`),
      (error: unknown) => log(`the Pods' logs could not be saved: ${String(error)}`),
    );
    await mark('clusterDelete', () => cluster.delete());
    rmSync(work, { recursive: true, force: true });
  };
  try {
    const previousTags = await previousImages;
    if (previousTags) {
      phases.previousImagesBuild = Math.round(performance.now() - imagesStarted);
      log(`previous release's images: ${previousTags.ipam}, ${previousTags.sim}`);
    }
    await mark('imagesLoad', async () => {
      for (const archive of [
        tooling.capiManagerArchive,
        LANE_PROVIDERS.ipam.imageArchive,
        LANE_PROVIDERS.sim.imageArchive,
        ...(previous ? [previous.providers.ipam.imageArchive, previous.providers.sim.imageArchive] : []),
        ...(capvImages
          ? [capvImages.capv.archivePath, capvImages.vcsim.archivePath, capvImages.reference.archive.archivePath]
          : []),
      ]) {
        await cluster.loadImageArchive(archive);
      }
    });
    const versions: LaneVersions = {
      installed: previous ? previous.release.version : NEXT_VERSION,
      current: NEXT_VERSION,
      ...(previous ? { previous: previous.release.version } : {}),
    };
    const clusterctl = await mark('installs', async () => {
      const withoutCertManager = laneCertificates();
      const releases: LaneRelease[] = [];
      if (previous && previousTags) {
        releases.push(
          await laneRelease(
            versions.installed,
            previous.providers,
            previousTags,
            ipamReplicas,
            cluster.nodes,
            withoutCertManager,
          ),
        );
      }
      releases.push(
        await laneRelease(NEXT_VERSION, LANE_PROVIDERS, images, ipamReplicas, cluster.nodes, withoutCertManager),
      );
      const core = await withoutCertManager(onLaneNodes(await renderCapiCoreComponents(log), cluster.nodes));
      const others: LaneOtherProvider[] = [];
      if (capvRelease) {
        const capvComponents = await renderCapvComponents(capvRelease.version, capvRelease.credentials, log);
        others.push({
          ...CAPV_PROVIDER,
          version: capvRelease.version,
          components: await withoutCertManager(onLaneNodes(capvComponents, cluster.nodes)),
          metadataFile: await capvMetadataFile(capvRelease.version),
        });
      }
      const setup = await writeLaneRepository(work, core, releases, others);
      // Metal3's CRDs before the controller that serves them: the asset the installed release told users to apply.
      await installCRDs(kubeConfig, [
        previous
          ? join(previous.release.root, 'packages/api-types/config/metal3/crd')
          : writeMetal3CRDsAsset(join(work, 'assets')),
      ]);
      const clusterctl = clusterctlWithConfig(setup);
      const init = expectSuccess(
        await clusterctl.run([
          'init',
          '--kubeconfig',
          cluster.kubeconfigPath,
          ...clusterctl.initArgsAt(versions.installed),
        ]),
      );
      log(`clusterctl init (Tally and Sim v${versions.installed}) took ${(init.durationMs / 1000).toFixed(1)} s`);
      return setup;
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
    const capv: LaneCapv | undefined =
      capvRelease && capvImages
        ? {
            version: capvRelease.version,
            infrastructure: `${CAPV_PROVIDER.name}:${capvRelease.version}`,
            namespace: CAPV_NAMESPACE,
            deployment: CAPV_DEPLOYMENT,
            podSelector: CAPV_POD_SELECTOR,
            vcsimImage: capvImages.vcsim.image,
            credentials: capvRelease.credentials,
            kubectl: tooling.prepared.kubectlBinary,
            reference: capvImages.reference.reference,
          }
        : undefined;
    return { cluster, kubeConfig, ipamReplicas, phases, clusterctl, versions, ...(capv ? { capv } : {}), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
