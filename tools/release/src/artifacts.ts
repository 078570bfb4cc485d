/**
 * The release artifacts of one version:
 *
 *   pnpm --filter @tally-ipam/release artifacts [--out <dir>] [--version <x.y.z>] [--no-images]
 *
 * writes, under `<dir>` (default `dist/release/v<version>` at the repository root):
 *   clusterctl/<provider>/v<version>/<type>-components.yaml + metadata.yaml   a clusterctl provider repository per app,
 *       each naming its image as the literal `ghcr.io/tally-ipam/<image>:v<version>`
 *   clusterctl.yaml                                                          a clusterctl config pointing at them
 *   metal3-crds.yaml                                                         Metal3's IPAM CRDs (ipam.metal3.io), not
 *       in any components: applied only by users who switch to Tally without Metal3 installed or want Tally's rules
 *   tally-ipam-dashboard.json                                                the Grafana dashboard (apps/ipam-controller)
 *   kubectl-tally.tgz                                                        the kubectl plugin's npm package
 *       (packages/kubectl-tally, `npm install -g ./kubectl-tally.tgz`), packed as npm publishes it
 *   images/<image>/<image>.tar, images/<image>/oci/                           each app's image, tagged with the version,
 *       as a docker-archive and an OCI layout (one directory per image: build.sh writes `oci/` and `inputs.sha256`
 *       under fixed names, so two images in one directory would leave only the second's)
 * The version defaults to the apps' package.json version (they are versioned together). Run `pnpm build` first.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { metal3CRDsYaml } from '@tally-ipam/api-types';
import { stringify } from 'yaml';
import { z } from 'zod';
import { REPOSITORY_ROOT, run } from './workspace.js';

export const IMAGE_REGISTRY = 'ghcr.io/tally-ipam';

/** The two shipped providers: their app, their clusterctl identity and their image. */
export const RELEASED_PROVIDERS = [
  {
    app: 'apps/ipam-controller',
    name: 'tally',
    type: 'IPAMProvider',
    label: 'ipam-tally',
    componentsFile: 'ipam-components.yaml',
    image: 'ipam-controller',
  },
  {
    app: 'apps/sim-infra-controller',
    name: 'sim',
    type: 'InfrastructureProvider',
    label: 'infrastructure-sim',
    componentsFile: 'infrastructure-components.yaml',
    image: 'sim-infra-controller',
  },
] as const;

export type ReleasedProvider = (typeof RELEASED_PROVIDERS)[number];

export interface ClusterctlRepository {
  /** `clusterctl.yaml`: the `providers:` list with `file://` URLs into this repository. */
  readonly configPath: string;
  readonly componentsPaths: Readonly<Record<ReleasedProvider['label'], string>>;
}

const AppPackage = z.object({ version: z.string().regex(/^\d+\.\d+\.\d+$/) });

/** The version both apps carry; they are released together, so a difference is an error. */
export function appsVersion(root: string = REPOSITORY_ROOT): string {
  const versions = RELEASED_PROVIDERS.map(
    (provider) => AppPackage.parse(JSON.parse(readFileSync(join(root, provider.app, 'package.json'), 'utf8'))).version,
  );
  if (new Set(versions).size !== 1) throw new Error(`the apps' versions differ: ${versions.join(' vs ')}`);
  return versions[0] ?? '';
}

/** Renders every provider's components and metadata into a clusterctl repository under `<out>/clusterctl`. */
export function writeClusterctlRepository(
  out: string,
  version: string,
  root: string = REPOSITORY_ROOT,
): ClusterctlRepository {
  const componentsPaths: Record<string, string> = {};
  for (const provider of RELEASED_PROVIDERS) {
    const dir = join(out, 'clusterctl', provider.label, `v${version}`);
    // The app's own generator (tools/ship), as `pnpm gen-components` runs it.
    run(
      process.execPath,
      ['--import', 'tsx', join(root, provider.app, 'scripts/render-components.ts'), '--out', dir, '--version', version],
      join(root, provider.app),
    );
    componentsPaths[provider.label] = join(dir, provider.componentsFile);
  }
  const configPath = join(out, 'clusterctl.yaml');
  writeFileSync(
    configPath,
    stringify({
      providers: RELEASED_PROVIDERS.map((provider) => ({
        name: provider.name,
        type: provider.type,
        url: pathToFileURL(componentsPaths[provider.label] ?? '').href,
      })),
    }),
  );
  return { configPath, componentsPaths: componentsPaths as ClusterctlRepository['componentsPaths'] };
}

/** The Grafana dashboard's file name, in the app's `config/grafana/` and in a release. */
export const GRAFANA_DASHBOARD = 'tally-ipam-dashboard.json';

/** The committed dashboard (its queries are checked against a running controller's metrics in the app's tests). */
function grafanaDashboard(root: string = REPOSITORY_ROOT): string {
  return readFileSync(join(root, 'apps/ipam-controller/config/grafana', GRAFANA_DASHBOARD), 'utf8');
}

/**
 * Release assets outside the clusterctl repository. `metal3-crds.yaml`: the ipam.metal3.io CRDs generated from
 * api-types' zod schemas (the committed `config/metal3/crd/` files, drift-checked there), kept out of Tally's
 * components because a cluster running Metal3 already has them, owned by Metal3's provider.
 * `tally-ipam-dashboard.json`: the Grafana dashboard, imported by hand or by a dashboard provisioner.
 */
/** The Metal3 CRDs' asset's file name. */
export const METAL3_CRDS_ASSET = 'metal3-crds.yaml';

export const STANDALONE_ASSETS = [
  { fileName: METAL3_CRDS_ASSET, render: metal3CRDsYaml },
  { fileName: GRAFANA_DASHBOARD, render: grafanaDashboard },
] as const;

/**
 * Writes the Metal3 CRDs' asset alone into `out` and returns its path: what a test installs as CRDs (the other assets
 * are no Kubernetes objects).
 */
export function writeMetal3CRDsAsset(out: string): string {
  mkdirSync(out, { recursive: true });
  const path = join(out, METAL3_CRDS_ASSET);
  writeFileSync(path, metal3CRDsYaml());
  return path;
}

/** Writes every standalone asset into `out`; returns their paths. */
export function writeStandaloneAssets(out: string): string[] {
  mkdirSync(out, { recursive: true });
  return STANDALONE_ASSETS.map((asset) => {
    const path = join(out, asset.fileName);
    writeFileSync(path, asset.render());
    return path;
  });
}

/** The kubectl plugin's tarball in a release, under a name without its version so that a link to it never changes. */
export const KUBECTL_PLUGIN_TARBALL = 'kubectl-tally.tgz';

/**
 * Packs the kubectl plugin (`packages/kubectl-tally`, built) with `pnpm pack`, which writes the tarball npm would
 * publish (workspace ranges replaced by versions), and moves it to `<out>/kubectl-tally.tgz`; returns its path. Packed
 * into a directory of its own first: pnpm names the file after the version, and nothing else may be mistaken for it.
 */
export function writeKubectlPluginTarball(out: string, root: string = REPOSITORY_ROOT): string {
  mkdirSync(out, { recursive: true });
  const scratch = mkdtempSync(join(out, '.pack-'));
  try {
    run('pnpm', ['pack', '--pack-destination', scratch], join(root, 'packages/kubectl-tally'));
    const packed = readdirSync(scratch).filter((name) => name.endsWith('.tgz'));
    if (packed.length !== 1 || packed[0] === undefined) {
      throw new Error(
        `pnpm pack of packages/kubectl-tally wrote ${packed.length} tarballs, not one: ${packed.join(', ')}`,
      );
    }
    const path = join(out, KUBECTL_PLUGIN_TARBALL);
    renameSync(join(scratch, packed[0]), path);
    return path;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Builds every app's image tagged `<registry>/<image>:v<version>` with the app's image entry point, each into its own
 * `<out>/images/<image>/`; returns the docker-archives.
 */
export function buildImages(out: string, version: string, root: string = REPOSITORY_ROOT): string[] {
  const archives: string[] = [];
  for (const provider of RELEASED_PROVIDERS) {
    const outDir = join(out, 'images', provider.image);
    mkdirSync(outDir, { recursive: true });
    run('bash', [join(root, provider.app, 'image/build.sh')], join(root, provider.app), {
      ...process.env,
      IMAGE_REF: `${IMAGE_REGISTRY}/${provider.image}:v${version}`,
      OUT_DIR: outDir,
    });
    const archive = join(outDir, `${provider.image}.tar`);
    if (!existsSync(archive)) throw new Error(`${provider.app}/image/build.sh wrote no ${archive}`);
    archives.push(archive);
  }
  return archives;
}

function main(argv: readonly string[]): void {
  const { values } = parseArgs({
    args: [...argv],
    options: { out: { type: 'string' }, version: { type: 'string' }, 'no-images': { type: 'boolean', default: false } },
  });
  const version = values.version ?? appsVersion();
  const out = resolve(values.out ?? join(REPOSITORY_ROOT, 'dist', 'release', `v${version}`));
  const repository = writeClusterctlRepository(out, version);
  process.stdout.write(`clusterctl repository: ${Object.values(repository.componentsPaths).join(', ')}\n`);
  process.stdout.write(`clusterctl config: ${repository.configPath}\n`);
  for (const asset of writeStandaloneAssets(out)) process.stdout.write(`asset: ${asset}\n`);
  process.stdout.write(`kubectl plugin: ${writeKubectlPluginTarball(out)}\n`);
  if (!values['no-images']) {
    for (const archive of buildImages(out, version)) process.stdout.write(`image: ${archive}\n`);
  }
}

const script = process.argv[1];
if (script && import.meta.url === pathToFileURL(resolve(script)).href) {
  try {
    main(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`artifacts: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
