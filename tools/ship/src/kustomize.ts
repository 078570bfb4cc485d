/**
 * The part of kustomize the apps' `config/` directories use, and nothing more: `resources` (files, or directories with
 * a `kustomization.yaml`), `namespace` and `labels` (`pairs`, metadata only). Anything else in a kustomization is an
 * error, so a feature added to a config cannot be silently dropped from the release artifact.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** Kinds the configs use that are not namespaced; every other kind gets the kustomization's namespace. */
export const CLUSTER_SCOPED_KINDS: ReadonlySet<string> = new Set([
  'Namespace',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
]);

/** kustomize's legacy output order: what must exist first comes first; webhooks last. */
const KIND_ORDER = [
  'Namespace',
  'ResourceQuota',
  'StorageClass',
  'CustomResourceDefinition',
  'ServiceAccount',
  'PodSecurityPolicy',
  'Role',
  'ClusterRole',
  'RoleBinding',
  'ClusterRoleBinding',
  'ConfigMap',
  'Secret',
  'Endpoints',
  'Service',
  'LimitRange',
  'PriorityClass',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'Deployment',
  'StatefulSet',
  'CronJob',
  'PodDisruptionBudget',
];
const KIND_ORDER_LAST = ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];

function kindRank(kind: string): number {
  const first = KIND_ORDER.indexOf(kind);
  if (first >= 0) return first;
  const last = KIND_ORDER_LAST.indexOf(kind);
  return last >= 0 ? KIND_ORDER.length + 1 + last : KIND_ORDER.length;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses every document of a multi-document YAML file into manifests; empty documents are skipped. */
export function parseManifests(text: string, source: string): Manifest[] {
  const manifests: Manifest[] = [];
  for (const [index, document] of parseAllDocuments(text).entries()) {
    if (document.errors.length > 0) {
      throw new Error(`${source}, document ${index + 1}: invalid YAML: ${document.errors[0]?.message ?? ''}`);
    }
    const value: unknown = document.toJS();
    if (value === null || value === undefined) continue;
    if (
      !isRecord(value) ||
      typeof value.apiVersion !== 'string' ||
      typeof value.kind !== 'string' ||
      !isRecord(value.metadata) ||
      typeof value.metadata.name !== 'string'
    ) {
      throw new Error(`${source}, document ${index + 1}: not a Kubernetes object (apiVersion, kind, metadata.name)`);
    }
    manifests.push(value as Manifest);
  }
  return manifests;
}

interface Kustomization {
  resources: string[];
  namespace?: string;
  labels: Record<string, string>[];
}

const KNOWN_KUSTOMIZATION_KEYS = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'labels']);

function readKustomization(dir: string): Kustomization {
  const file = join(dir, 'kustomization.yaml');
  if (!existsSync(file)) throw new Error(`${dir} is not a kustomization: ${file} is missing`);
  const raw: unknown = parseAllDocuments(readFileSync(file, 'utf8'))[0]?.toJS();
  if (!isRecord(raw)) throw new Error(`${file}: expected a mapping`);
  const unknown = Object.keys(raw).filter((key) => !KNOWN_KUSTOMIZATION_KEYS.has(key));
  if (unknown.length > 0) {
    throw new Error(`${file}: ${unknown.join(', ')} not supported by @tally-ipam/ship; extend the renderer first`);
  }
  const resources = raw.resources ?? [];
  if (!Array.isArray(resources) || !resources.every((entry) => typeof entry === 'string')) {
    throw new Error(`${file}: resources must be a list of paths`);
  }
  const labels: Record<string, string>[] = [];
  for (const entry of Array.isArray(raw.labels) ? raw.labels : []) {
    if (!isRecord(entry) || !isRecord(entry.pairs) || entry.includeSelectors === true || entry.includeTemplates) {
      throw new Error(`${file}: labels entries must be {pairs, includeSelectors: false} (metadata labels only)`);
    }
    labels.push(Object.fromEntries(Object.entries(entry.pairs).map(([key, value]) => [key, String(value)])));
  }
  const namespace = raw.namespace;
  if (namespace !== undefined && typeof namespace !== 'string') throw new Error(`${file}: namespace must be a string`);
  return { resources: resources as string[], labels, ...(namespace ? { namespace } : {}) };
}

function applyNamespace(manifest: Manifest, namespace: string): void {
  if (!CLUSTER_SCOPED_KINDS.has(manifest.kind)) manifest.metadata.namespace = namespace;
  if (manifest.kind === 'RoleBinding' || manifest.kind === 'ClusterRoleBinding') {
    const subjects = Array.isArray(manifest.subjects) ? manifest.subjects : [];
    for (const subject of subjects) {
      if (isRecord(subject) && subject.kind === 'ServiceAccount') subject.namespace = namespace;
    }
  }
}

/** Builds a kustomization directory the way `kustomize build` would for the features listed above. */
export function buildKustomization(dir: string): Manifest[] {
  const kustomization = readKustomization(dir);
  const manifests: Manifest[] = [];
  for (const resource of kustomization.resources) {
    const path = resolve(dir, resource);
    if (!existsSync(path)) throw new Error(`${join(dir, 'kustomization.yaml')}: resource ${resource} does not exist`);
    if (statSync(path).isDirectory()) manifests.push(...buildKustomization(path));
    else manifests.push(...parseManifests(readFileSync(path, 'utf8'), path));
  }
  for (const manifest of manifests) {
    if (kustomization.namespace) applyNamespace(manifest, kustomization.namespace);
    for (const pairs of kustomization.labels) manifest.metadata.labels = { ...manifest.metadata.labels, ...pairs };
  }
  const seen = new Set<string>();
  for (const manifest of manifests) {
    const id = `${manifest.apiVersion}/${manifest.kind}/${manifest.metadata.namespace ?? ''}/${manifest.metadata.name}`;
    if (seen.has(id)) throw new Error(`${dir}: ${id} is defined twice`);
    seen.add(id);
  }
  // A stable sort: within a kind, the order of the resources lists is kept.
  return manifests
    .map((manifest, index) => ({ manifest, index }))
    .sort((a, b) => kindRank(a.manifest.kind) - kindRank(b.manifest.kind) || a.index - b.index)
    .map(({ manifest }) => manifest);
}

/** The one object of `kind` (and `name`, when given); throws naming what was looked for and how many were found. */
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
