/**
 * Cluster API core's components rendered the way its release (and so clusterctl) renders them: `kustomize build` of
 * the core provider's `default/` (`config/default` up to v1.13, `core/config/default` since v1.14) of the module at the
 * run's release (testenv's `clusterApiVersion()`: `TALLY_CAPI_VERSION`, else v1.14.2), the manager image set to the tag
 * the lane loads into kind
 * with pull policy IfNotPresent (what CAPI's release target sets), then clusterctl's variables substituted — MachinePool
 * on, ClusterTopology off, every other variable at its default. kustomize itself is built from the Go module proxy
 * into a content-keyed cache entry next to testenv's binaries.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { capiManagerImage } from '@tally-ipam/kind';
import { isRecord, type Manifest, parseManifests, substituteVariables } from '@tally-ipam/ship';
import {
  cacheRoot,
  capiCoreConfigDir,
  clusterApiVersion,
  detectGo,
  ensureCacheEntry,
  runGoCommand,
} from '@tally-ipam/testenv';

const execFileAsync = promisify(execFile);

/** The kustomize Cluster API builds its manifests with (its Makefile's KUSTOMIZE_VER; v1.12 and v1.14 alike). */
export const KUSTOMIZE_MODULE = 'sigs.k8s.io/kustomize/kustomize/v5';
export const KUSTOMIZE_VERSION = 'v5.7.0';
/** clusterctl variables the lane sets; the rest keep their defaults, as `clusterctl init` with no environment. */
export const CAPI_VARIABLES: Readonly<Record<string, string>> = { EXP_MACHINE_POOL: 'true', CLUSTER_TOPOLOGY: 'false' };
const CAPI_MANAGER_DEPLOYMENT = 'capi-controller-manager';
const KUSTOMIZE_CACHE_FORMAT = 1;

/** `kustomize` at KUSTOMIZE_VERSION, from the cache or built with `go install` (progress lines while Go works). */
export async function ensureKustomize(progress: (line: string) => void = () => {}): Promise<string> {
  const go = await detectGo();
  const key = createHash('sha256')
    .update(
      JSON.stringify({
        format: KUSTOMIZE_CACHE_FORMAT,
        module: KUSTOMIZE_MODULE,
        version: KUSTOMIZE_VERSION,
        go: go.version,
        platform: `${go.goos}/${go.goarch}`,
      }),
    )
    .digest('hex')
    .slice(0, 20);
  const { dir } = await ensureCacheEntry({
    cacheDir: join(cacheRoot(), 'kustomize'),
    key,
    what: `kustomize ${KUSTOMIZE_VERSION}`,
    read: async (entry) => {
      try {
        await access(join(entry, 'kustomize'));
        return true;
      } catch {
        return undefined;
      }
    },
    build: async (tmpDir, logPath) => {
      progress(`building kustomize ${KUSTOMIZE_VERSION} from the Go module proxy (log: ${logPath})`);
      await runGoCommand(
        ['install', '-v', '-trimpath', '-ldflags', '-s -w', `${KUSTOMIZE_MODULE}@${KUSTOMIZE_VERSION}`],
        {
          cwd: '/',
          logPath,
          what: `kustomize ${KUSTOMIZE_VERSION}`,
          progress,
          env: { GOBIN: tmpDir },
        },
      );
      return true;
    },
    progress,
  });
  return join(dir, 'kustomize');
}

/** Sets the manager container's image and pull policy (no registry is asked: the image is loaded into the node). */
export function withManagerImage(manifests: readonly Manifest[], deployment: string, image: string): Manifest[] {
  let found = false;
  const result = manifests.map((manifest) => {
    if (manifest.kind !== 'Deployment' || manifest.metadata.name !== deployment) return manifest;
    const spec = isRecord(manifest.spec) ? manifest.spec : {};
    const template = isRecord(spec.template) ? spec.template : {};
    const podSpec = isRecord(template.spec) ? template.spec : {};
    const containers = Array.isArray(podSpec.containers) ? podSpec.containers : [];
    const manager = containers.findIndex((c) => isRecord(c) && c.name === 'manager');
    if (manager < 0) throw new Error(`Deployment ${deployment} has no container named manager`);
    found = true;
    return {
      ...manifest,
      spec: {
        ...spec,
        template: {
          ...template,
          spec: {
            ...podSpec,
            containers: containers.map((container, index) =>
              index === manager && isRecord(container)
                ? { ...container, image, imagePullPolicy: 'IfNotPresent' }
                : container,
            ),
          },
        },
      },
    };
  });
  if (!found) throw new Error(`the components have no Deployment ${deployment}`);
  return result;
}

/**
 * Cluster API core's components of a release (default: the run's), variables substituted, ready for the variant
 * without cert-manager and `apply`; the manager image is the one `tools/kind` builds for that release.
 */
export async function renderCapiCoreComponents(
  progress: (line: string) => void = () => {},
  capiVersion?: string,
): Promise<Manifest[]> {
  const version = clusterApiVersion(capiVersion);
  const kustomize = await ensureKustomize(progress);
  const defaultDir = join(await capiCoreConfigDir(version), 'default');
  const { stdout } = await execFileAsync(kustomize, ['build', defaultDir], { maxBuffer: 64 * 1024 * 1024 });
  const source = `${defaultDir} (Cluster API ${version}, kustomize ${KUSTOMIZE_VERSION})`;
  const manifests = parseManifests(substituteVariables(stdout, CAPI_VARIABLES), source);
  return withManagerImage(manifests, CAPI_MANAGER_DEPLOYMENT, capiManagerImage(version));
}
