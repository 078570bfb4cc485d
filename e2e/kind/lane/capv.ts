/**
 * CAPV in the lane (issue 32, item 4): the unmodified upstream vSphere provider as a Pod and the vCenter simulator as
 * a Pod, both from images built here from the binaries `@tally-ipam/vsphere` builds (no registry), and CAPV's
 * components as its release renders them (`kustomize build config/default` of the module, the image set to the loaded
 * tag, clusterctl's variables substituted) for the lane's clusterctl repository. The lane writes CAPV into its
 * repository and loads the images; the CAPV scenario installs it with `clusterctl init --infrastructure vsphere` once
 * the lane's lifecycle file is done: installed before, `clusterctl move` to the lifecycle test's testenv cluster would
 * refuse ("provider infrastructure-vsphere not found in the target cluster", clusterctl's checkTargetProviders).
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type BinaryImageArchive, ensureBinaryImageArchive, kindCacheDir } from '@tally-ipam/kind';
import { type Manifest, parseManifests, substituteVariables } from '@tally-ipam/ship';
import { downloadGoModule, ensureGoBinary, GO_ENV, type GoToolchain } from '@tally-ipam/testenv';
import {
  CAPV_MODULE,
  capvRelease,
  capvVersionFor,
  ensureCapv,
  ensureVcsim,
  type VcsimCredentials,
  vcsimCredentials,
} from '@tally-ipam/vsphere';
import { ensureKustomize, withManagerImage } from './capi-components.js';
import type { LaneReferenceIpam } from './reference.js';

const execFileAsync = promisify(execFile);

/** Where CAPV's release manifests put everything (`config/default`'s namespace and name prefix). */
export const CAPV_NAMESPACE = 'capv-system';
export const CAPV_DEPLOYMENT = 'capv-controller-manager';
/** `config/default`'s commonLabels: the label every object of the provider carries, its Pods included. */
export const CAPV_POD_SELECTOR = 'cluster.x-k8s.io/provider=infrastructure-vsphere';
/** clusterctl's name for the provider (its built-in list), its label and its components file. */
export const CAPV_PROVIDER = {
  name: 'vsphere',
  type: 'InfrastructureProvider',
  label: 'infrastructure-vsphere',
  componentsFile: 'infrastructure-components.yaml',
} as const;

/** The image CAPV's release manifests name (its Makefile: `PROD_REGISTRY`/`IMAGE_NAME`, tag = the release). */
export function capvManagerImage(version: string): string {
  return `registry.k8s.io/cluster-api-vsphere/cluster-api-vsphere-controller:${version}`;
}

/** The ports of the simulator's Pod: the forwarder on the Pod's address, the simulator's two loopback listeners. */
export const VCSIM_PORTS = { service: 443, forward: 8989, api: 8990, inspect: 8991 } as const;

/** What the lane built and loaded for CAPV, and the credentials its components carry (plain data). */
export interface LaneCapv {
  readonly version: string;
  /** `--infrastructure` of `clusterctl init`: `vsphere:<version>`. */
  readonly infrastructure: string;
  readonly namespace: string;
  readonly deployment: string;
  readonly podSelector: string;
  /** The tag of the simulator's image (its binaries `/vcsim` and `/forward`). */
  readonly vcsimImage: string;
  /** What CAPV's manager got as VSPHERE_USERNAME/VSPHERE_PASSWORD: the simulators must accept them. */
  readonly credentials: VcsimCredentials;
  /** kubectl, for the port-forward to the simulator's inspection endpoint (loopback in its Pod). */
  readonly kubectl: string;
  /** The reference IPAM provider's image and CRDs: the scenario runs against it too, as a Deployment. */
  readonly reference: LaneReferenceIpam;
}

export interface CapvImages {
  readonly capv: BinaryImageArchive;
  readonly vcsim: BinaryImageArchive;
}

/** The forwarder of the simulator's Pod (`../go/forward`, standard library only), built like every Go binary here. */
async function ensureForwarder(onProgress: (line: string) => void): Promise<{ path: string; key: string }> {
  const dir = fileURLToPath(new URL('../go/forward/', import.meta.url));
  const entry = await ensureGoBinary({
    cacheDir: join(kindCacheDir(), 'forward'),
    what: 'the TCP forwarder of the simulator Pod',
    format: 1,
    keyMaterial: async (go: GoToolchain) => ({
      go: go.version,
      platform: `${go.goos}/${go.goarch}`,
      env: GO_ENV,
      sources: await Promise.all(['go.mod', 'main.go'].map((file) => readFile(join(dir, file), 'utf8'))),
    }),
    binaries: ['forward'],
    steps: [
      {
        name: 'forward',
        logName: 'forward',
        source: { kind: 'module-dir', dir },
        packages: ['.'],
        ldflags: '-s -w',
        output: 'forward',
      },
    ],
    onProgress,
  });
  return { path: entry.paths.forward ?? join(entry.dir, 'forward'), key: entry.key };
}

/** CAPV's manager image and the simulator's image (with the forwarder), from the cache or built from the binaries. */
export async function buildCapvImages(version: string, log: (line: string) => void): Promise<CapvImages> {
  const capvBinary = await ensureCapv({ version, onProgress: log });
  const capv = await ensureBinaryImageArchive({
    cacheName: 'capv-image',
    what: `CAPV's manager image ${version}`,
    image: capvManagerImage(version),
    binaries: [{ name: 'manager', path: capvBinary.path, key: capvBinary.key }],
    entrypoint: ['/manager'],
    onProgress: log,
  });
  const vcsimBinary = await ensureVcsim({ capvVersion: version, onProgress: log });
  const forwarder = await ensureForwarder(log);
  const vcsim = await ensureBinaryImageArchive({
    cacheName: 'vcsim-image',
    what: 'the vCenter simulator image',
    image: `tally-ipam/vcsim:${vcsimBinary.key.slice(0, 12)}`,
    binaries: [
      { name: 'vcsim', path: vcsimBinary.path, key: vcsimBinary.key },
      { name: 'forward', path: forwarder.path, key: forwarder.key },
    ],
    entrypoint: ['/vcsim'],
    onProgress: log,
  });
  return { capv, vcsim };
}

/**
 * CAPV's components as its release renders them (`kustomize build config/default`, its Makefile's
 * `release-manifests`), the manager image the loaded tag, then clusterctl's variables: the simulator's credentials as
 * VSPHERE_USERNAME/VSPHERE_PASSWORD, every other at its default. Still with cert-manager's Certificate and
 * injection annotations: the lane's variant without cert-manager replaces them.
 */
export async function renderCapvComponents(
  version: string,
  credentials: VcsimCredentials,
  log: (line: string) => void,
): Promise<Manifest[]> {
  const release = capvRelease(version);
  const moduleDir = await downloadGoModule(CAPV_MODULE, release.version);
  const kustomize = await ensureKustomize(log);
  const defaultDir = join(moduleDir, 'config/default');
  const { stdout } = await execFileAsync(kustomize, ['build', defaultDir], { maxBuffer: 64 * 1024 * 1024 });
  const variables = { VSPHERE_USERNAME: credentials.username, VSPHERE_PASSWORD: credentials.password };
  const manifests = parseManifests(substituteVariables(stdout, variables), `${defaultDir} (CAPV ${version})`);
  return withManagerImage(manifests, CAPV_DEPLOYMENT, capvManagerImage(version));
}

/** The release's `metadata.yaml` (its release series and contracts), what clusterctl reads next to the components. */
export async function capvMetadataFile(version: string): Promise<string> {
  return join(await downloadGoModule(CAPV_MODULE, capvRelease(version).version), 'metadata.yaml');
}

/** The CAPV release the lane installs (paired with the run's Cluster API release) and fresh credentials. */
export function laneCapvRelease(): { version: string; credentials: VcsimCredentials } {
  return { version: capvVersionFor(), credentials: vcsimCredentials() };
}
