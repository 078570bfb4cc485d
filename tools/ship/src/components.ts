/**
 * The clusterctl components file of an app (`<type>-components.yaml`), rendered from its `config/default` without a
 * kustomize binary, and the release directory clusterctl reads per version (components + `metadata.yaml`).
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { at, buildKustomization, isRecord, type Manifest, parseManifests } from './kustomize.js';
import type { ShippedProvider } from './provider.js';
import { findVariables, substituteVariables } from './variables.js';

export interface RenderOptions {
  /** The release version (`0.1.0`); the image becomes `<repository>:v<version>`. Default: package.json's. */
  readonly version?: string;
  /** Overrides the image reference entirely. */
  readonly image?: string;
}

function toYamlDocuments(manifests: readonly Manifest[]): string {
  return manifests.map((manifest) => `---\n${stringify(manifest, { lineWidth: 0 })}`).join('');
}

/** `ghcr.io/x/y:dev` → `ghcr.io/x/y`; a registry port (`host:5000/y`) is not a tag. */
function repositoryOf(image: string): string {
  const withoutDigest = image.split('@')[0] ?? image;
  const lastColon = withoutDigest.lastIndexOf(':');
  return lastColon > withoutDigest.lastIndexOf('/') ? withoutDigest.slice(0, lastColon) : withoutDigest;
}

/**
 * Sets every container of the provider's Deployments whose image is the provider's repository (any tag) to `image`.
 * A literal, never a clusterctl variable: clusterctl parses each image to apply its `images:` override and refuses a
 * components file whose image is `${VAR:=…}` ("couldn't parse image name").
 */
function setProviderImage(manifests: readonly Manifest[], provider: ShippedProvider, image: string): void {
  let replaced = 0;
  for (const deployment of manifests.filter((manifest) => manifest.kind === 'Deployment')) {
    const podSpec = at(deployment, 'spec', 'template', 'spec');
    for (const list of ['initContainers', 'containers']) {
      const containers = isRecord(podSpec) && Array.isArray(podSpec[list]) ? (podSpec[list] as unknown[]) : [];
      for (const container of containers) {
        if (!isRecord(container) || typeof container.image !== 'string') continue;
        if (repositoryOf(container.image) !== provider.imageRepository) continue;
        container.image = image;
        replaced++;
      }
    }
  }
  if (replaced === 0) {
    throw new Error(
      `${provider.configDir}/manager/manager.yaml: no container image of ${provider.imageRepository} (a literal ` +
        `\`image: ${provider.imageRepository}:<tag>\`) to set to ${image}`,
    );
  }
}

/** The components file: every object of config/default as YAML documents, variables kept for clusterctl. */
export function renderComponents(provider: ShippedProvider, options: RenderOptions = {}): string {
  const manifests = buildKustomization(join(provider.configDir, 'default'));
  const namespaces = manifests.filter((manifest) => manifest.kind === 'Namespace');
  if (namespaces.length !== 1) throw new Error(`components need exactly one Namespace, found ${namespaces.length}`);
  const version = options.version ?? provider.version;
  setProviderImage(manifests, provider, options.image ?? `${provider.imageRepository}:v${version}`);
  const rendered = toYamlDocuments(manifests);
  findVariables(rendered);
  return rendered;
}

/** config/default as the API server would get it from clusterctl, every variable at `values` or its default. */
export function defaultManifests(provider: ShippedProvider, values: Readonly<Record<string, string>> = {}): Manifest[] {
  const text = toYamlDocuments(buildKustomization(join(provider.configDir, 'default')));
  return parseManifests(substituteVariables(text, values), `${provider.configDir}/default`);
}

export interface WrittenRelease {
  readonly componentsPath: string;
  readonly metadataPath: string;
  readonly objects: number;
  readonly version: string;
}

/** Writes `<out>/<type>-components.yaml` and a copy of `metadata.yaml`: a clusterctl provider repository's version. */
export function writeRelease(provider: ShippedProvider, out: string, options: RenderOptions = {}): WrittenRelease {
  const version = options.version ?? provider.version;
  const components = renderComponents(provider, { ...options, version });
  mkdirSync(out, { recursive: true });
  const componentsPath = join(out, provider.componentsFile);
  const metadataPath = join(out, 'metadata.yaml');
  writeFileSync(componentsPath, components);
  copyFileSync(provider.metadataFile, metadataPath);
  return { componentsPath, metadataPath, objects: components.split('\n---\n').length, version };
}

/** `[--out <dir>] [--version <semver>] [--image <ref>]`, default out `<app>/dist/release`. */
export function runComponentsCli(provider: ShippedProvider, argv: readonly string[]): void {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      out: { type: 'string', default: join(provider.appDir, 'dist', 'release') },
      version: { type: 'string' },
      image: { type: 'string' },
    },
  });
  const written = writeRelease(provider, resolve(values.out), {
    ...(values.version ? { version: values.version } : {}),
    ...(values.image ? { image: values.image } : {}),
  });
  process.stdout.write(
    `wrote ${written.componentsPath} (${written.objects} objects, v${written.version}) and metadata.yaml\n`,
  );
}

/**
 * Runs the components CLI when `moduleUrl` is the script node was started with (an app's
 * `scripts/render-components.ts`); errors end the process with 1 and the message.
 */
export function runComponentsCliIfMain(moduleUrl: string, provider: ShippedProvider): void {
  const script = process.argv[1];
  if (!script || moduleUrl !== pathToFileURL(resolve(script)).href) return;
  try {
    runComponentsCli(provider, process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`render-components: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
