import type { TestProject } from 'vitest/node';
import { type ControlPlane, type ControlPlaneOptions, startControlPlane } from './control-plane.js';

/** What the global setup hands to every test file (through vitest's `provide`/`inject`; plain data only). */
export interface ProvidedTestEnv {
  readonly kubeconfigYaml: string;
  readonly kubeconfigPath: string;
  readonly server: string;
  readonly external: boolean;
  readonly version: string;
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
}

/** The shape vitest 4 expects from a global setup module's default export. */
export type GlobalSetup = (project: TestProject) => Promise<() => Promise<void>>;

/**
 * A vitest global setup that starts one control plane for the whole test run and shares it with every test file.
 * In `test/global-setup.ts`: `export default createGlobalSetup({ controllerManager: true, capiCRDs: [...] })`,
 * then list that file under `globalSetup` in `vitest.config.ts`.
 */
export function createGlobalSetup(options: GlobalSetupOptions = {}): GlobalSetup {
  return async (project) => {
    const verbose = options.verbose ?? true;
    const plane: ControlPlane = await startControlPlane({
      ...options,
      onProgress: verbose ? (message) => console.error(`[tally-testenv] ${message}`) : undefined,
    });
    project.provide(PROVIDE_KEY, {
      kubeconfigYaml: plane.kubeconfigYaml,
      kubeconfigPath: plane.kubeconfigPath,
      server: plane.server,
      external: plane.external,
      version: plane.version,
    });
    return async () => {
      await plane.stop();
    };
  };
}
