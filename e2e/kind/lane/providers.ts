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
 * kind), the clusterctl variables substituted as `clusterctl init` would: `variables` where given, the rest with their
 * defaults. `provider.appDir` may be an earlier release's tree (its own generator renders it).
 */
export function renderProviderComponents(
  provider: LaneProvider,
  image: string,
  variables: Readonly<Record<string, string>> = {},
): Manifest[] {
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
    return parseManifests(substituteVariables(readFileSync(file, 'utf8'), variables), file);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** The provider's clusterctl metadata (its release series), as its generator copies it next to the components. */
export function providerMetadataFile(provider: LaneProvider): string {
  return join(provider.appDir, 'metadata.yaml');
}

/** The same provider in another tree (an earlier release's), its image archive in `imageDir`. */
export function providerAt(provider: LaneProvider, root: string, imageDir: string): LaneProvider {
  const app = provider.app === 'ipam' ? 'ipam-controller' : 'sim-infra-controller';
  return {
    ...provider,
    appDir: join(root, 'apps', app),
    imageArchive: join(imageDir, app, `${app}.tar`),
  };
}

/** The Deployment at `replicas` (the lane runs the IPAM controller at 2, with the leader election it ships). */
export function withReplicas(manifests: readonly Manifest[], deployment: string, replicas: number): Manifest[] {
  return manifests.map((manifest) =>
    manifest.kind === 'Deployment' && manifest.metadata.name === deployment
      ? { ...manifest, spec: { ...(manifest.spec as object), replicas } }
      : manifest,
  );
}

/**
 * Every Deployment's Pods pinned to the lane's own nodes (`kubernetes.io/hostname` in `nodes`). Sim's simulated
 * kubelet registers a Node per Machine in each test Cluster's workload cluster, which here is the lane's cluster
 * itself, and no kubelet runs behind those Nodes: a Pod scheduled there stays Pending. Seen in the lifecycle test,
 * where the fleet's Nodes `m0` and `m1` exist while `clusterctl upgrade apply` creates the new Tally and Sim Pods.
 * A lane-only change, as the replicas: a real management cluster is not its own workload cluster.
 */
export function onLaneNodes(manifests: readonly Manifest[], nodes: readonly string[]): Manifest[] {
  return manifests.map((manifest) => {
    if (manifest.kind !== 'Deployment') return manifest;
    const spec = (manifest.spec ?? {}) as { template?: { spec?: { affinity?: object } } };
    const podSpec = spec.template?.spec ?? {};
    const nodeAffinity = {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [...nodes] }] },
        ],
      },
    };
    return {
      ...manifest,
      spec: {
        ...spec,
        template: { ...spec.template, spec: { ...podSpec, affinity: { ...podSpec.affinity, nodeAffinity } } },
      },
    };
  });
}
