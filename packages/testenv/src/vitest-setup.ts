import type { TestProject } from 'vitest/node';
import { CAPI_CRD_GROUPS } from './capi.js';
import { type CapiManager, type CapiManagerOptions, startCapiManager } from './capi-manager.js';
import { CAPI_WEBHOOK_CONFIGURATION_NAMES } from './capi-webhooks.js';
import { type ControlPlane, type ControlPlaneOptions, startControlPlane } from './control-plane.js';
import { kubeRequest } from './kube-request.js';
import { clusterApiVersion } from './versions.js';

/** What the global setup hands to every test file (through vitest's `provide`/`inject`; plain data only). */
export interface ProvidedTestEnv {
  readonly kubeconfigYaml: string;
  readonly kubeconfigPath: string;
  readonly server: string;
  readonly external: boolean;
  readonly version: string;
  /**
   * The Cluster API release of the run (`capiVersion`, else `TALLY_CAPI_VERSION`, else the default): the CRDs and the
   * manager the setup installed and started. On an external cluster, the release the run expects to find there.
   */
  readonly capiVersion: string;
  /** Set when the global setup was asked for the Cluster API manager (`capiManager`). */
  readonly capiManager?: ProvidedCapiManager;
}

export interface ProvidedCapiManager {
  /** False when the manager is Cluster API's own deployment in an external cluster (nothing was started). */
  readonly local: boolean;
  /** The local manager's log; undefined for an external cluster. */
  readonly logPath: string | undefined;
  readonly webhookPort: number | undefined;
}

/** The `provide` key; test files read it through `testEnv()`. */
export const PROVIDE_KEY = 'tallyTestEnv';

declare module 'vitest' {
  export interface ProvidedContext {
    tallyTestEnv: ProvidedTestEnv;
  }
}

export interface GlobalSetupOptions extends Omit<ControlPlaneOptions, 'onProgress'> {
  /** Print progress (building, starting, ready) to stderr. Default true. */
  verbose?: boolean;
  /**
   * Also run the real Cluster API core manager (`startCapiManager`) with its webhooks and conversion registered;
   * implies all of Cluster API's CRDs. On an external cluster (`TALLY_TEST_KUBECONFIG`) nothing is started: the
   * setup checks that Cluster API is installed there (`clusterctl init`) and leaves its CRDs alone. Its release is
   * `capiVersion`'s, the same as the CRDs'.
   */
  capiManager?: boolean | Omit<CapiManagerOptions, 'onProgress' | 'version'>;
}

/** The shape vitest 4 expects from a global setup module's default export. */
export type GlobalSetup = (project: TestProject) => Promise<() => Promise<void>>;

/** Fails unless the cluster runs Cluster API's webhooks (what `clusterctl init` installs). */
async function assertCapiInstalled(plane: ControlPlane): Promise<void> {
  const name = CAPI_WEBHOOK_CONFIGURATION_NAMES.validating;
  const response = await kubeRequest(plane.kubeConfig(), {
    method: 'GET',
    path: `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${name}`,
  });
  if (response.status !== 200) {
    throw new Error(
      `the cluster at ${plane.server} (TALLY_TEST_KUBECONFIG) has no ValidatingWebhookConfiguration ${name} ` +
        `(HTTP ${response.status}): install Cluster API first, e.g. \`clusterctl init\`, or unset TALLY_TEST_KUBECONFIG`,
    );
  }
}

/**
 * A vitest global setup that starts one control plane for the whole test run and shares it with every test file.
 * In `test/global-setup.ts`: `export default createGlobalSetup({ controllerManager: true, capiCRDs: [...] })`,
 * then list that file under `globalSetup` in `vitest.config.ts`.
 */
export function createGlobalSetup(options: GlobalSetupOptions = {}): GlobalSetup {
  return async (project) => {
    const verbose = options.verbose ?? true;
    const onProgress = verbose ? (message: string): void => console.error(`[tally-testenv] ${message}`) : undefined;
    const { capiManager: managerRequest, ...planeOptions } = options;
    const capiVersion = clusterApiVersion(options.capiVersion);
    planeOptions.capiVersion = capiVersion;
    const external = Boolean(process.env.TALLY_TEST_KUBECONFIG) && !options.ignoreTestKubeconfig;
    if (managerRequest) {
      // Local: every CAPI CRD before kube-controller-manager starts (its garbage collector learns them at once).
      // External: Cluster API brought its own CRDs, with its own conversion settings; do not overwrite them.
      planeOptions.capiCRDs = external ? undefined : [...CAPI_CRD_GROUPS];
    }
    const plane: ControlPlane = await startControlPlane({ ...planeOptions, onProgress });
    let manager: CapiManager | undefined;
    try {
      if (managerRequest && plane.external) await assertCapiInstalled(plane);
      if (managerRequest && !plane.external) {
        manager = await startCapiManager(plane, {
          ...(managerRequest === true ? {} : managerRequest),
          version: capiVersion,
          onProgress,
        });
      }
    } catch (error) {
      await plane.stop();
      throw error;
    }
    project.provide(PROVIDE_KEY, {
      kubeconfigYaml: plane.kubeconfigYaml,
      kubeconfigPath: plane.kubeconfigPath,
      server: plane.server,
      external: plane.external,
      version: plane.version,
      capiVersion,
      ...(managerRequest
        ? {
            capiManager: { local: manager !== undefined, logPath: manager?.logPath, webhookPort: manager?.webhookPort },
          }
        : {}),
    });
    return async () => {
      try {
        await manager?.stop();
      } finally {
        await plane.stop();
      }
    };
  };
}
