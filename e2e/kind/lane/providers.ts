/**
 * Tally's and Sim's provider components as a user gets them — each app's `gen-components` writes the clusterctl
 * components file from its shipped `config/` — with clusterctl's variables substituted (the controller image set to
 * the tag loaded into kind), and their daemonless images from each app's own `image/build.sh`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Manifest, parseManifests, substituteVariables } from '@tally-ipam/ship';
import { z } from 'zod';

export interface LaneProvider {
  readonly app: 'ipam' | 'sim';
  readonly appDir: string;
  /** The components file `gen-components` writes. */
  readonly componentsFile: string;
  /** The archive the app's `image/build.sh` writes. */
  readonly imageArchive: string;
  readonly namespace: string;
  readonly deployment: string;
  /** The Pods' label selector (the Deployment's `matchLabels`). */
  readonly podSelector: string;
}

const appDir = (name: string): string => fileURLToPath(new URL(`../../../apps/${name}/`, import.meta.url));

export const LANE_PROVIDERS: Readonly<Record<'ipam' | 'sim', LaneProvider>> = {
  ipam: {
    app: 'ipam',
    appDir: appDir('ipam-controller'),
    componentsFile: 'ipam-components.yaml',
    imageArchive: join(appDir('ipam-controller'), 'dist', 'image', 'ipam-controller.tar'),
    namespace: 'tally-system',
    deployment: 'tally-ipam-controller-manager',
    podSelector: 'control-plane=tally-ipam-controller-manager',
  },
  sim: {
    app: 'sim',
    appDir: appDir('sim-infra-controller'),
    componentsFile: 'infrastructure-components.yaml',
    imageArchive: join(appDir('sim-infra-controller'), 'dist', 'image', 'sim-infra-controller.tar'),
    namespace: 'sim-system',
    deployment: 'sim-infra-controller-manager',
    podSelector: 'control-plane=sim-infra-controller-manager',
  },
};

const ArchiveManifest = z.array(z.looseObject({ RepoTags: z.array(z.string()).min(1) })).length(1);

/** Builds the app's image with its own build script (rebuilt only when its inputs changed); returns the archive's tag. */
export function buildProviderImage(provider: LaneProvider): string {
  execFileSync('bash', [join(provider.appDir, 'image', 'build.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
  return archiveTag(provider.imageArchive);
}

/** The one tag of a docker-archive (what `kind load image-archive` imports it as). */
export function archiveTag(archive: string): string {
  const manifest = execFileSync('tar', ['-xOf', archive, 'manifest.json'], { encoding: 'utf8' });
  const [image] = ArchiveManifest.parse(JSON.parse(manifest));
  const tag = image?.RepoTags[0];
  if (!tag) throw new Error(`${archive}: manifest.json names no tag`);
  return tag;
}

/**
 * The app's components file, written by its `gen-components --image <image>` into a temporary directory (the
 * components carry a literal image; the release's is `ghcr.io/tally-ipam/<image>:v<version>`, here the tag loaded into
 * kind), the remaining clusterctl variables substituted with their defaults as `clusterctl init` would.
 */
export function renderProviderComponents(provider: LaneProvider, image: string): Manifest[] {
  const out = mkdtempSync(join(tmpdir(), `tally-lane-${provider.app}-release-`));
  try {
    execFileSync(
      'pnpm',
      ['--dir', provider.appDir, 'run', '--silent', 'gen-components', '--out', out, '--image', image],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    const file = join(out, provider.componentsFile);
    return parseManifests(substituteVariables(readFileSync(file, 'utf8'), {}), file);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** The Deployment at `replicas` (the lane runs the IPAM controller at 2, with the leader election it ships). */
export function withReplicas(manifests: readonly Manifest[], deployment: string, replicas: number): Manifest[] {
  return manifests.map((manifest) =>
    manifest.kind === 'Deployment' && manifest.metadata.name === deployment
      ? { ...manifest, spec: { ...(manifest.spec as object), replicas } }
      : manifest,
  );
}
