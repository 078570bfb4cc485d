/**
 * The lane's clusterctl repository: what `clusterctl init` and `upgrade apply` install on the kind cluster, exactly
 * the manifests the lane renders — Cluster API core as its release renders it, Tally's and Sim's components from their
 * generators, every variable substituted (literal values, nothing left for clusterctl to fill in), each in the variant
 * without cert-manager (serving certificate Secrets and caBundles issued here). Tally and Sim at one or two versions
 * (`<label>/v<version>/`, how clusterctl lists a local repository's versions); the kubeadm bootstrap and control-plane
 * providers and cert-manager as `@tally-ipam/release`'s stand-ins (their CRDs: clusterctl installs kubeadm with the
 * core provider, and probes cert-manager by creating an Issuer and a Certificate; nothing here uses either).
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { RELEASED_PROVIDERS, writeStandInRepository } from '@tally-ipam/release';
import {
  type IssuedServingCertificate,
  issueServingCertificates,
  type Manifest,
  servingCertificateRequests,
  withServingCertificateSecrets,
} from '@tally-ipam/ship';
import { ensureClusterctl } from '@tally-ipam/testenv';
import { stringify } from 'yaml';
import type { ClusterctlSetup } from '../../test/lifecycle/clusterctl.js';

/** One version of Tally's and Sim's providers as the lane installs them. */
export interface LaneRelease {
  readonly version: string;
  readonly components: Readonly<Record<'ipam' | 'sim', readonly Manifest[]>>;
  /** Each provider's `metadata.yaml` (its release series), from the tree that rendered it. */
  readonly metadataFiles: Readonly<Record<'ipam' | 'sim', string>>;
}

/** A provider of another project in the repository at one version (CAPV), rendered by the lane like the rest. */
export interface LaneOtherProvider {
  /** clusterctl's name and type (`vsphere`, `InfrastructureProvider`) and its label, the repository's directory. */
  readonly name: string;
  readonly type: string;
  readonly label: string;
  readonly componentsFile: string;
  /** `v1.16.1`: the directory `<label>/<version>/`. */
  readonly version: string;
  readonly components: readonly Manifest[];
  readonly metadataFile: string;
}

/** Components in the variant without cert-manager. */
export type WithoutCertManager = (manifests: readonly Manifest[]) => Promise<Manifest[]>;

/**
 * The variant without cert-manager, with one certificate per cert-manager Certificate (`namespace/name`) for the
 * whole lane: every version of a provider gets the same Secret and caBundle, as cert-manager keeps a Certificate's
 * Secret when clusterctl deletes and reinstalls the provider on an upgrade.
 */
export function laneCertificates(): WithoutCertManager {
  const issued = new Map<string, IssuedServingCertificate>();
  return async (manifests) => {
    const missing = servingCertificateRequests(manifests).filter(
      (request) => !issued.has(`${request.namespace}/${request.certificateName}`),
    );
    for (const [key, certificate] of await issueServingCertificates(missing)) issued.set(key, certificate);
    return withServingCertificateSecrets(manifests, issued);
  };
}

const PROVIDER_OF_APP = {
  ipam: RELEASED_PROVIDERS.find((provider) => provider.label === 'ipam-tally'),
  sim: RELEASED_PROVIDERS.find((provider) => provider.label === 'infrastructure-sim'),
} as const;

function writeComponents(path: string, manifests: readonly Manifest[]): void {
  writeFileSync(path, manifests.map((manifest) => `---\n${stringify(manifest, { lineWidth: 0 })}`).join(''));
}

/**
 * Writes the repository and the clusterctl configuration under `work` (`repository/`, `clusterctl.yaml`); resolves
 * with what a clusterctl runner needs (`clusterctlWithConfig`), at the last of `releases`' versions.
 */
export async function writeLaneRepository(
  work: string,
  core: readonly Manifest[],
  releases: readonly LaneRelease[],
  others: readonly LaneOtherProvider[] = [],
): Promise<ClusterctlSetup> {
  const latest = releases.at(-1);
  if (!latest) throw new Error('the lane repository needs at least one release of Tally and Sim');
  const repository = join(work, 'repository');
  const standIn = await writeStandInRepository(repository, { coreComponents: core });
  const urls: Partial<Record<'ipam' | 'sim', string>> = {};
  for (const release of releases) {
    for (const app of ['ipam', 'sim'] as const) {
      const provider = PROVIDER_OF_APP[app];
      if (!provider) throw new Error(`@tally-ipam/release names no released provider for ${app}`);
      const dir = join(repository, provider.label, `v${release.version}`);
      mkdirSync(dir, { recursive: true });
      writeComponents(join(dir, provider.componentsFile), release.components[app]);
      copyFileSync(release.metadataFiles[app], join(dir, 'metadata.yaml'));
      urls[app] = pathToFileURL(join(dir, provider.componentsFile)).href;
    }
  }
  const otherEntries = others.map((provider) => {
    const dir = join(repository, provider.label, provider.version);
    mkdirSync(dir, { recursive: true });
    writeComponents(join(dir, provider.componentsFile), provider.components);
    copyFileSync(provider.metadataFile, join(dir, 'metadata.yaml'));
    // Named like clusterctl's built-in provider, so this entry replaces the built-in one's GitHub URL.
    return { name: provider.name, type: provider.type, url: pathToFileURL(join(dir, provider.componentsFile)).href };
  });
  const config = join(work, 'clusterctl.yaml');
  writeFileSync(
    config,
    stringify({
      providers: [
        ...standIn.config.providers,
        ...(['ipam', 'sim'] as const).map((app) => ({
          name: PROVIDER_OF_APP[app]?.name,
          type: PROVIDER_OF_APP[app]?.type,
          url: urls[app],
        })),
        ...otherEntries,
      ],
      'cert-manager': standIn.config['cert-manager'],
    }),
  );
  return {
    binary: (await ensureClusterctl()).path,
    work,
    config,
    version: latest.version,
    standInArgs: standIn.initArgs,
  };
}
