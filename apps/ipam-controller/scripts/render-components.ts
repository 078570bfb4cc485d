/**
 * Renders the clusterctl components file (`ipam-components.yaml`) from `config/default` without a kustomize binary.
 *
 * It understands the part of kustomize the config uses and nothing more: `resources` (files, or directories with a
 * `kustomization.yaml`), `namespace` and `labels` (`pairs`, metadata only). Anything else in a kustomization is an
 * error, so a feature added to the config cannot be silently dropped from the release artifact.
 *
 *   tsx scripts/render-components.ts [--out <dir>] [--version <semver>] [--image <ref>]
 *
 * writes `<dir>/ipam-components.yaml` and `<dir>/metadata.yaml` (default `dist/release`), the two files a clusterctl
 * provider repository needs per version.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';

export const APP_DIR = fileURLToPath(new URL('..', import.meta.url));
export const CONFIG_DIR = join(APP_DIR, 'config');
export const METADATA_FILE = join(APP_DIR, 'metadata.yaml');
export const PROVIDER_LABEL = 'cluster.x-k8s.io/provider';
export const PROVIDER_NAME = 'ipam-tally';
export const IMAGE_REPOSITORY = 'ghcr.io/tally-ipam/ipam-controller';
/** The variable holding the controller image in config/manager/manager.yaml. */
export const IMAGE_VARIABLE = 'TALLY_IPAM_IMAGE';

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

/** Kinds the config uses that are not namespaced; every other kind gets the kustomization's namespace. */
const CLUSTER_SCOPED_KINDS = new Set([
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

function isRecord(value: unknown): value is Record<string, unknown> {
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
    throw new Error(`${file}: ${unknown.join(', ')} not supported by render-components.ts; extend the renderer first`);
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

/** A `${NAME}`, `${NAME:=default}`, `${NAME=default}` or `${NAME:-default}` reference (drone/envsubst, as clusterctl). */
export interface VariableReference {
  readonly text: string;
  readonly name: string;
  readonly defaultValue: string | undefined;
}

const VARIABLE = /\$\{([^}]*)\}/g;
const WELL_FORMED = /^([A-Z][A-Z0-9_]*)(?:(:=|=|:-)([^$}]*))?$/;

/** Every `${…}` in `text`; throws naming the reference when one is not a form clusterctl understands. */
export function findVariables(text: string): VariableReference[] {
  const found: VariableReference[] = [];
  for (const match of text.matchAll(VARIABLE)) {
    const inner = match[1] ?? '';
    const parsed = WELL_FORMED.exec(inner);
    if (!parsed?.[1]) {
      throw new Error(
        `variable reference ${match[0]} is not well formed: use \${NAME} or \${NAME:=default} with NAME in [A-Z0-9_]`,
      );
    }
    found.push({ text: match[0], name: parsed[1], defaultValue: parsed[2] ? (parsed[3] ?? '') : undefined });
  }
  return found;
}

/**
 * Replaces the variables as clusterctl does: a value from `values`, else the default; a variable with neither is an
 * error naming it (clusterctl refuses to install then, too).
 */
export function substituteVariables(text: string, values: Readonly<Record<string, string>> = {}): string {
  const missing = new Set<string>();
  for (const reference of findVariables(text)) {
    if (values[reference.name] === undefined && reference.defaultValue === undefined) missing.add(reference.name);
  }
  if (missing.size > 0) throw new Error(`variables without a value or default: ${[...missing].join(', ')}`);
  return text.replace(VARIABLE, (_whole, inner: string) => {
    const parsed = WELL_FORMED.exec(inner);
    const name = parsed?.[1] ?? '';
    return values[name] ?? parsed?.[3] ?? '';
  });
}

export interface RenderOptions {
  /** The release version (`0.1.0`); the image default becomes `<repository>:v<version>`. */
  readonly version: string;
  /** Overrides the default image reference entirely. */
  readonly image?: string;
}

/** The components file: every object of config/default as YAML documents, variables kept for clusterctl. */
export function renderComponents(options: RenderOptions): string {
  const manifests = buildKustomization(join(CONFIG_DIR, 'default'));
  const namespaces = manifests.filter((manifest) => manifest.kind === 'Namespace');
  if (namespaces.length !== 1) throw new Error(`components need exactly one Namespace, found ${namespaces.length}`);
  const image = options.image ?? `${IMAGE_REPOSITORY}:v${options.version}`;
  const body = manifests.map((manifest) => `---\n${stringify(manifest, { lineWidth: 0 })}`).join('');
  const pattern = new RegExp(`\\$\\{${IMAGE_VARIABLE}:=[^}]*\\}`, 'g');
  if (!pattern.test(body)) throw new Error(`config/manager/manager.yaml no longer uses \${${IMAGE_VARIABLE}:=…}`);
  const rendered = body.replace(pattern, `\${${IMAGE_VARIABLE}:=${image}}`);
  findVariables(rendered);
  return rendered;
}

function packageVersion(): string {
  const parsed: unknown = JSON.parse(readFileSync(join(APP_DIR, 'package.json'), 'utf8'));
  if (!isRecord(parsed) || typeof parsed.version !== 'string') throw new Error('package.json has no version');
  return parsed.version;
}

function main(argv: readonly string[]): void {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      out: { type: 'string', default: join(APP_DIR, 'dist', 'release') },
      version: { type: 'string' },
      image: { type: 'string' },
    },
  });
  const version = values.version ?? packageVersion();
  const out = resolve(values.out);
  mkdirSync(out, { recursive: true });
  const components = renderComponents({ version, ...(values.image ? { image: values.image } : {}) });
  writeFileSync(join(out, 'ipam-components.yaml'), components);
  copyFileSync(METADATA_FILE, join(out, 'metadata.yaml'));
  const count = components.split('\n---\n').length;
  process.stdout.write(
    `wrote ${join(out, 'ipam-components.yaml')} (${count} objects, v${version}) and metadata.yaml\n`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  try {
    main(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`render-components: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
