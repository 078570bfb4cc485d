import { downloadGoModule } from './go.js';

/**
 * The reference in-cluster IPAM provider, `sigs.k8s.io/cluster-api-ipam-provider-in-cluster`, at the release Tally
 * is compared with: the CAPV scenario and the benchmark build it, and api-types reads its CRDs to check the
 * in-cluster kinds Tally can serve. One place for the module and version, so that all of them compare with the
 * same release.
 */
export const REFERENCE_IPAM_MODULE = 'sigs.k8s.io/cluster-api-ipam-provider-in-cluster';
export const REFERENCE_IPAM_VERSION = 'v1.1.0';

let moduleDir: Promise<string> | undefined;

/**
 * The read-only source of the reference provider in the Go module cache (`go mod download` the first time on a
 * machine; `npm test`'s prepare stage has already fetched it, as it builds the provider from this module).
 */
export function referenceIpamModuleDir(): Promise<string> {
  if (moduleDir === undefined) {
    moduleDir = downloadGoModule(REFERENCE_IPAM_MODULE, REFERENCE_IPAM_VERSION).catch((error: unknown) => {
      moduleDir = undefined;
      throw error;
    });
  }
  return moduleDir;
}
