import { CoreV1Api, CustomObjectsApi, type KubeConfig, type V1APIResource } from '@kubernetes/client-node';
import type { ResourceKind } from '@tally-ipam/controller-kit';
import { stringify } from 'yaml';
import {
  buildKustomization,
  CONFIG_DIR,
  type Manifest,
  parseManifests,
  substituteVariables,
} from '../scripts/render-components.js';

export const CERT_MANAGER_API_VERSION = 'cert-manager.io/v1';

/** config/default as the API server would get it from clusterctl with every variable at its default. */
export function defaultManifests(values: Readonly<Record<string, string>> = {}): Manifest[] {
  const built = buildKustomization(`${CONFIG_DIR}/default`);
  const text = built.map((manifest) => `---\n${stringify(manifest, { lineWidth: 0 })}`).join('');
  return parseManifests(substituteVariables(text, values), 'config/default');
}

export function only(manifests: readonly Manifest[], kind: string, name?: string): Manifest {
  const found = manifests.filter((m) => m.kind === kind && (name === undefined || m.metadata.name === name));
  if (found.length !== 1) throw new Error(`expected one ${kind} ${name ?? ''}, found ${found.length}`);
  return found[0] as Manifest;
}

/** Walks `path` through nested objects and arrays (numeric segments index arrays). */
export function at(value: unknown, ...path: (string | number)[]): unknown {
  let current: unknown = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

/** The API server's discovery document for one group version, e.g. `v1` or `ipam.cluster.x-k8s.io/v1beta2`. */
export async function discover(kubeConfig: KubeConfig, apiVersion: string): Promise<V1APIResource[]> {
  if (!apiVersion.includes('/')) return (await kubeConfig.makeApiClient(CoreV1Api).getAPIResources()).resources;
  const [group = '', version = ''] = apiVersion.split('/');
  const list = await kubeConfig.makeApiClient(CustomObjectsApi).getAPIResources({ group, version });
  return list.resources;
}

/** The ResourceKind of a manifest, found through discovery (plural and scope come from the API server). */
export async function resourceKindOf(kubeConfig: KubeConfig, manifest: Manifest): Promise<ResourceKind> {
  const resources = await discover(kubeConfig, manifest.apiVersion);
  const resource = resources.find((candidate) => candidate.kind === manifest.kind && !candidate.name.includes('/'));
  if (!resource) throw new Error(`${manifest.apiVersion} ${manifest.kind} is not served by the API server`);
  return {
    apiVersion: manifest.apiVersion,
    kind: manifest.kind,
    plural: resource.name,
    namespaced: resource.namespaced,
  };
}
