import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { installCRDs } from './crds.js';
import { downloadGoModule } from './go.js';
import { CLUSTER_API_MODULE, clusterApiRelease, clusterApiVersion } from './versions.js';

/** The API groups of Cluster API's CRDs (their file names start with the group). */
export const CAPI_CRD_GROUPS = [
  'cluster.x-k8s.io',
  'ipam.cluster.x-k8s.io',
  'addons.cluster.x-k8s.io',
  'runtime.cluster.x-k8s.io',
] as const;

export type CapiCRDGroup = (typeof CAPI_CRD_GROUPS)[number];

export interface CapiCRDOptions {
  /** Which groups to include; all four by default. */
  groups?: CapiCRDGroup[];
  /** A key of `CLUSTER_API_RELEASES`; default `clusterApiVersion()` (`TALLY_CAPI_VERSION`, else the default). */
  version?: string;
}

const moduleDirs = new Map<string, Promise<string>>();

/**
 * The read-only source of `sigs.k8s.io/cluster-api` at a release (default `clusterApiVersion()`), downloaded into the
 * Go module cache once.
 */
export async function capiModuleDir(version?: string): Promise<string> {
  const resolved = clusterApiVersion(version);
  let dir = moduleDirs.get(resolved);
  if (!dir) {
    dir = downloadGoModule(CLUSTER_API_MODULE, resolved).catch((error: unknown) => {
      moduleDirs.delete(resolved);
      throw error;
    });
    moduleDirs.set(resolved, dir);
  }
  return dir;
}

/**
 * The core provider's kustomize tree of a release (`config/` up to v1.13, `core/config/` since v1.14): its `crd/`,
 * `webhook/` and `default/`, which the release renders into its core components.
 */
export async function capiCoreConfigDir(version?: string): Promise<string> {
  const resolved = clusterApiVersion(version);
  return join(await capiModuleDir(resolved), clusterApiRelease(resolved).coreConfigDir);
}

/** The CRD bases of a release's core provider (`<core config>/crd/bases`), downloaded into the Go module cache once. */
export async function capiCRDDir(version?: string): Promise<string> {
  return join(await capiCoreConfigDir(version), 'crd', 'bases');
}

/**
 * Paths of Cluster API's CRD files for the chosen groups, e.g. `ipam.cluster.x-k8s.io` gives the IPAddress and
 * IPAddressClaim CRDs. Needs Go (for `go mod download`) the first time on a machine.
 */
export async function capiCRDPaths(options: CapiCRDOptions = {}): Promise<string[]> {
  const groups = options.groups ?? [...CAPI_CRD_GROUPS];
  for (const group of groups) {
    if (!(CAPI_CRD_GROUPS as readonly string[]).includes(group)) {
      throw new Error(`unknown Cluster API CRD group "${group}"; known groups: ${CAPI_CRD_GROUPS.join(', ')}`);
    }
  }
  const dir = await capiCRDDir(options.version);
  const files = (await readdir(dir)).filter((name) => name.endsWith('.yaml')).sort();
  // File names are `<group>_<plural>.yaml`; the group before the underscore must match exactly.
  const selected = files.filter((name) => (groups as readonly string[]).includes(name.slice(0, name.indexOf('_'))));
  if (selected.length === 0) {
    throw new Error(`no Cluster API CRDs for groups ${groups.join(', ')} in ${dir}`);
  }
  return selected.map((name) => join(dir, name));
}

/** Installs Cluster API's CRDs for the chosen groups (all by default) and waits until they are served. */
export async function installCapiCRDs(kc: KubeConfig, options: CapiCRDOptions = {}): Promise<void> {
  await installCRDs(kc, await capiCRDPaths(options));
}
