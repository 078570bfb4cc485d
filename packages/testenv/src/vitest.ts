import type { KubeConfig } from '@kubernetes/client-node';
import { inject, onTestFinished } from 'vitest';
import { kubeConfigFromYaml } from './kubeconfig.js';
import { createTestNamespace, type TestNamespace } from './namespaces.js';
import { PROVIDE_KEY, type ProvidedCapiManager } from './vitest-setup.js';

export {
  createGlobalSetup,
  type GlobalSetup,
  type GlobalSetupOptions,
  PROVIDE_KEY,
  type ProvidedCapiManager,
  type ProvidedTestEnv,
} from './vitest-setup.js';

export interface TestEnv {
  /** A fresh admin KubeConfig for this call. */
  readonly kubeConfig: KubeConfig;
  readonly kubeconfigPath: string;
  readonly server: string;
  readonly external: boolean;
  /** The API server's gitVersion. */
  readonly version: string;
  /**
   * The Cluster API release of the run: its CRDs and, when asked for, its manager (see `ProvidedTestEnv`). Always set
   * by `testEnv()`; optional so that a `TestEnv` made by hand (a test's own control plane) stays valid without it.
   */
  readonly capiVersion?: string;
  /** The Cluster API manager, when the global setup was asked for it (`capiManager`). */
  readonly capiManager: ProvidedCapiManager | undefined;
}

/** The control plane started by the global setup (`createGlobalSetup`), for use inside test files. */
export function testEnv(): TestEnv {
  const provided = inject(PROVIDE_KEY);
  if (!provided) {
    throw new Error(
      'no test control plane was provided: add a global setup file that exports createGlobalSetup() from ' +
        '@tally-ipam/testenv/vitest to `globalSetup` in vitest.config.ts',
    );
  }
  return {
    kubeConfig: kubeConfigFromYaml(provided.kubeconfigYaml),
    kubeconfigPath: provided.kubeconfigPath,
    server: provided.server,
    external: provided.external,
    version: provided.version,
    capiVersion: provided.capiVersion,
    capiManager: provided.capiManager,
  };
}

/**
 * A namespace for the current test, deleted when the test finishes (pass or fail). Call it inside a test or a
 * `beforeEach`; in a `beforeAll`, use `createTestNamespace` and delete it in `afterAll`.
 */
export async function withTestNamespace(
  kc: KubeConfig = testEnv().kubeConfig,
  prefix = 'test',
): Promise<TestNamespace> {
  const namespace = await createTestNamespace(kc, prefix);
  onTestFinished(async () => {
    await namespace.delete();
  });
  return namespace;
}

export { createTestNamespace, type TestNamespace } from './namespaces.js';
