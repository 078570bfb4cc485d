import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { writeMetal3CRDsAsset } from '@tally-ipam/release';
import {
  type CapiCRDGroup,
  type CapiManager,
  type ControlPlane,
  createServingCertDir,
  installCRDs,
  type ServingCertDir,
  startCapiManager,
  startControlPlane,
} from '@tally-ipam/testenv';
import type { TestEnv } from '@tally-ipam/testenv/vitest';
import { type AppKey, type StartedApp, startApp } from '../apps.js';
import { awaitWebhooksAnswer, shippedWebhookConfigurations } from '../webhooks.js';
import { type Clusterctl, expectSuccess } from './clusterctl.js';
import { pointWebhooksAtProcess } from './webhook-redirect.js';

/** Flags beyond the harness's own: Tally serves Metal3's API too (installed with `TALLY_IPAM_ENABLE_METAL3=true`). */
const APP_FLAGS: Readonly<Record<AppKey, readonly string[]>> = { ipam: ['--enable-metal3-ipam'], sim: [] };

/** Every Cluster API CRD group testenv can install, as `clusterctl init` installs them. */
const CAPI_GROUPS: CapiCRDGroup[] = [
  'cluster.x-k8s.io',
  'ipam.cluster.x-k8s.io',
  'addons.cluster.x-k8s.io',
  'runtime.cluster.x-k8s.io',
];

/**
 * A management cluster as an operator has one after `clusterctl init --ipam tally --infrastructure sim`: a testenv
 * control plane (etcd, kube-apiserver, kube-controller-manager), the real Cluster API manager, the providers installed
 * by the real clusterctl from the release's components, Metal3's CRDs from the release asset, and Tally's and Sim's
 * controllers — the built apps — running as processes (no kubelet runs the installed Deployments), with the shipped
 * webhook configurations clusterctl installed pointed at them.
 */
export interface ManagementCluster {
  readonly name: string;
  readonly plane: ControlPlane;
  readonly capi: CapiManager;
  /** The running controllers (an app stopped with `stopApp` is absent). */
  readonly apps: Readonly<Partial<Record<AppKey, StartedApp>>>;
  /** The vitest-style environment the e2e harness's helpers take. */
  readonly env: TestEnv;
  kubeConfig(): KubeConfig;
  /** Stops an app's process, as deleting its Deployment would. */
  stopApp(app: AppKey): Promise<void>;
  /** Starts it again (same flags and certificate) and points its installed webhook configurations at it. */
  startApp(app: AppKey, options?: { mainJs?: string }): Promise<StartedApp>;
  /**
   * A rolling update of one replica: the new build started beside the old one, the webhooks pointed at it, then the
   * old one stopped.
   */
  replaceApp(app: AppKey, options?: { mainJs?: string }): Promise<StartedApp>;
  /** Where the controllers' logs are, for timeouts. */
  logsHint(): string;
  stop(): Promise<void>;
}

export interface ManagementClusterOptions {
  readonly onProgress?: (message: string) => void;
  /** Install Tally's providers at this version of the repository (default: this tree's). */
  readonly version?: string;
  /** Run these builds of the apps instead of this tree's (an earlier release's `dist/main.js`). */
  readonly mainJs?: Partial<Record<AppKey, string>>;
  /** The Metal3 CRD files to apply (default: this tree's release asset). */
  readonly metal3CRDs?: readonly string[];
}

export async function startManagementCluster(
  name: string,
  clusterctl: Clusterctl,
  options: ManagementClusterOptions = {},
): Promise<ManagementCluster> {
  const progress = options.onProgress ?? ((): void => {});
  const work = mkdtempSync(join(tmpdir(), `tally-lifecycle-${name}-`));
  const stops: (() => Promise<void>)[] = [];
  const stop = async (): Promise<void> => {
    for (const step of stops.reverse()) await step().catch(() => {});
    rmSync(work, { recursive: true, force: true });
  };
  try {
    const plane = await startControlPlane({
      ignoreTestKubeconfig: true,
      controllerManager: true,
      capiCRDs: CAPI_GROUPS,
      onProgress: (message) => progress(`[${name}] ${message}`),
    });
    stops.push(() => plane.stop());
    const capi = await startCapiManager(plane, { installCRDs: false, verbosity: 2 });
    stops.push(() => capi.stop());
    const kc = plane.kubeConfig();
    // The release asset, applied server-side as the Metal3 guide says (kubectl apply --server-side -f).
    await installCRDs(kc, [...(options.metal3CRDs ?? [writeMetal3CRDsAsset(join(work, 'assets'))])]);
    const initArgs = options.version ? clusterctl.initArgsAt(options.version) : clusterctl.initArgs;
    expectSuccess(
      await clusterctl.run(['init', '--kubeconfig', plane.kubeconfigPath, ...initArgs], {
        TALLY_IPAM_ENABLE_METAL3: 'true',
      }),
    );
    progress(`[${name}] clusterctl init done`);
    const certDirs = new Map<AppKey, ServingCertDir>();
    stops.push(async () => {
      for (const dir of certDirs.values()) await dir.remove();
    });
    const apps: Partial<Record<AppKey, StartedApp>> = {};
    stops.push(async () => {
      await Promise.all(Object.values(apps).map((app) => app.process.stop()));
    });
    const start = async (app: AppKey, mainJs = options.mainJs?.[app]): Promise<StartedApp> => {
      const certs = certDirs.get(app) ?? (await createServingCertDir(`tally-lifecycle-${name}-${app}`));
      certDirs.set(app, certs);
      const started = await startApp(app, plane.kubeconfigPath, {
        webhookCertDir: certs.path,
        extraArgs: APP_FLAGS[app],
        ...(mainJs ? { mainJs } : {}),
      });
      const previous = apps[app];
      apps[app] = started;
      if (!started.webhooks) throw new Error(`${app} was started without its webhook server`);
      for (const { configuration } of shippedWebhookConfigurations(app)) {
        await pointWebhooksAtProcess(kc, configuration.kind, configuration.name, started.webhooks, certs.caPem);
      }
      await previous?.process.stop();
      return started;
    };
    await Promise.all([start('ipam'), start('sim')]);
    await awaitWebhooksAnswer(kc, ['ipam', 'sim']);
    progress(`[${name}] controllers ready (ipam-controller log: ${apps.ipam?.process.logPath})`);
    const env: TestEnv = {
      get kubeConfig() {
        return plane.kubeConfig();
      },
      kubeconfigPath: plane.kubeconfigPath,
      server: plane.server,
      external: false,
      version: plane.version,
      capiManager: { local: true, logPath: capi.logPath, webhookPort: capi.webhookPort },
    };
    return {
      name,
      plane,
      capi,
      apps,
      env,
      kubeConfig: () => plane.kubeConfig(),
      stopApp: async (app) => {
        await apps[app]?.process.stop();
        delete apps[app];
      },
      startApp: async (app, startOptions = {}) => {
        if (apps[app]) throw new Error(`${app} is running already: replaceApp rolls it`);
        return start(app, startOptions.mainJs);
      },
      replaceApp: (app, startOptions = {}) => start(app, startOptions.mainJs),
      logsHint: () =>
        `[${name}] Cluster API manager log: ${capi.logPath}; IPAM controller log: ` +
        `${apps.ipam?.process.logPath ?? '(stopped)'}; Sim controller log: ${apps.sim?.process.logPath ?? '(stopped)'}`,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
