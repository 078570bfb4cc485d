import { fileURLToPath } from 'node:url';
import { capiCRDPaths, installCRDs, kubeConfigFromYaml, startControlPlane } from '@tally-ipam/testenv';
import { PROVIDE_KEY } from '@tally-ipam/testenv/vitest';
import type { TestProject } from 'vitest/node';

const TALLY_CRD_DIR = fileURLToPath(new URL('../config/crd/', import.meta.url));
const INSTALL_ATTEMPTS = 3;

/**
 * One real etcd + kube-apiserver for the run, with the committed Tally CRDs and CAPI's IPAM and core CRDs.
 *
 * The CRDs are installed here rather than through `createGlobalSetup({ crds })` so that the install can be
 * repeated: testenv's "Established" check (38090d3) parses a freshly created CRD whose `status.conditions` is
 * still null and throws. Installing is a server-side apply, so a repeat is harmless.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const plane = await startControlPlane({ onProgress: (message) => console.error(`[tally-testenv] ${message}`) });
  try {
    const kc = kubeConfigFromYaml(plane.kubeconfigYaml);
    const paths = [TALLY_CRD_DIR, ...(await capiCRDPaths({ groups: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'] }))];
    for (let attempt = 1; ; attempt += 1) {
      try {
        await installCRDs(kc, paths);
        break;
      } catch (error) {
        const isStatusRace = error instanceof Error && error.name === 'ZodError';
        if (!isStatusRace || attempt >= INSTALL_ATTEMPTS) throw error;
      }
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
  });
  return async () => {
    await plane.stop();
  };
}
