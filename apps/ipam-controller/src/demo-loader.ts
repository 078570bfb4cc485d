import type * as Demo from './demo/run-demo.js';

/**
 * Where the demo lives, next to this file in `dist/`. A computed specifier, so bundlers leave the import alone: the
 * production image (one esbuild bundle of `dist/main.js`) carries neither the demo nor the test control plane it
 * starts (`@tally-ipam/testenv`, the certificate generator), only the controller.
 */
export const DEMO_MODULE_URL: string = new URL('./demo/run-demo.js', import.meta.url).href;

function isModuleNotFound(error: unknown): boolean {
  return error instanceof Error && 'code' in error && error.code === 'ERR_MODULE_NOT_FOUND';
}

/** Loads the demo on demand; in a build without it (the image), says what to give instead. */
export async function loadDemo(moduleUrl: string = DEMO_MODULE_URL): Promise<typeof Demo> {
  try {
    return (await import(moduleUrl)) as typeof Demo;
  } catch (error) {
    if (!isModuleNotFound(error)) throw error;
    throw new Error(
      `no cluster given (--kubeconfig, $KUBECONFIG, in-cluster) and this build has no embedded demo (${moduleUrl} ` +
        'is missing: the image carries only the controller); give the controller a cluster',
      { cause: error },
    );
  }
}
