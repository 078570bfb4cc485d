import { ensureBinaries, formatBytes, formatDuration } from '@tally-ipam/testenv';
import { ensureKindBinaries } from './binaries.js';
import { ensureCapiManagerImageArchive } from './capi-image.js';
import { ensureNodeImage } from './node-image.js';

export interface PrepareKindOptions {
  /** One line per step, and one every ~15 s while something builds. */
  readonly onProgress?: (message: string) => void;
}

export interface PreparedKind {
  /** The node image tag in the local engine, for `createKindCluster({ nodeImage })` or `kind create --image`. */
  readonly nodeImage: string;
  readonly kindBinary: string;
  readonly kubectlBinary: string;
  /**
   * `registry.k8s.io/cluster-api/cluster-api-controller:<the run's Cluster API release>` (testenv's
   * `clusterApiVersion()`) as a `docker save` archive.
   */
  readonly capiManagerImageArchive: string;
  /** Per step: how long it took in this call (a cache hit is milliseconds) and whether it built. */
  readonly steps: readonly PrepareStep[];
}

export interface PrepareStep {
  readonly name: string;
  readonly durationMs: number;
  readonly builtNow: boolean;
  readonly detail: string;
}

/**
 * Everything a kind cluster of this repository needs, built offline (or found in the content-keyed cache under
 * `${TALLY_CACHE_DIR:-~/.cache/tally-ipam}/kind`): kind, kubectl and the other node binaries, testenv's control
 * plane binaries, the node image, and the Cluster API manager image archive. Needs Go, debootstrap and a Docker
 * engine (see `ensureDockerEngine`). One heavy step at a time.
 */
export async function prepareKind(options: PrepareKindOptions = {}): Promise<PreparedKind> {
  const progress = options.onProgress ?? ((): void => {});
  const steps: PrepareStep[] = [];
  const timed = async <T>(
    name: string,
    work: () => Promise<T>,
    describe: (result: T) => { builtNow: boolean; detail: string },
  ): Promise<T> => {
    const started = Date.now();
    const result = await work();
    const { builtNow, detail } = describe(result);
    const step = { name, durationMs: Date.now() - started, builtNow, detail };
    steps.push(step);
    progress(`${name}: ${builtNow ? 'built' : 'cached'} in ${formatDuration(step.durationMs)} (${detail})`);
    return result;
  };
  const kind = await timed(
    'kind binaries',
    () => ensureKindBinaries(progress),
    (b) => ({
      builtNow: b.builtNow,
      detail: `${b.dir}; kubelet ${formatBytes(b.sizes.kubelet ?? 0)}`,
    }),
  );
  const controlPlane = await timed(
    'control plane binaries (testenv)',
    () => ensureBinaries({ onProgress: progress }),
    (b) => ({
      builtNow: b.builtNow,
      detail: b.dir,
    }),
  );
  const node = await timed(
    'node image',
    () => ensureNodeImage(kind, controlPlane, progress),
    (image) => ({
      builtNow: image.builtNow,
      detail: `${image.image}, ${formatBytes(image.sizeBytes)}`,
    }),
  );
  const capi = await timed(
    'Cluster API manager image',
    () => ensureCapiManagerImageArchive(progress),
    (archive) => ({
      builtNow: archive.builtNow,
      detail: `${archive.archivePath}, ${formatBytes(archive.sizeBytes)}`,
    }),
  );
  return {
    nodeImage: node.image,
    kindBinary: kind.paths.kind,
    kubectlBinary: kind.paths.kubectl,
    capiManagerImageArchive: capi.archivePath,
    steps,
  };
}
