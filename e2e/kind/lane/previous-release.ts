/**
 * The release the lane installs first and upgrades from: `@tally-ipam/release`'s `buildRelease()` (the tree at its
 * commit, installed and built, cached by commit), and its two images built by that tree's own `image/build.sh` (the
 * daemonless Node image writer of its `tools/ship`; no Docker), tagged as that release tags them
 * (`ghcr.io/tally-ipam/<image>:v<version>`), so they sit in the node next to this tree's `:dev` images.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type BuiltRelease, buildRelease, IMAGE_REGISTRY, releaseCacheDir } from '@tally-ipam/release';
import { archiveTag, LANE_PROVIDERS, type LaneProvider, providerAt } from './providers.js';

const execFileAsync = promisify(execFile);

export interface LanePreviousRelease {
  readonly release: BuiltRelease;
  /** The release's providers: their app directories in its tree, their image archives. */
  readonly providers: Readonly<Record<'ipam' | 'sim', LaneProvider>>;
}

/** The previous release's tree, from the cache or built now (minutes on 2 cores: its own install and build). */
export function previousRelease(log: (line: string) => void): LanePreviousRelease {
  const release = buildRelease({ onProgress: (message) => log(`previous release: ${message}`) });
  log(`previous release ${release.version} from ${release.commit.slice(0, 12)} in ${release.root}`);
  // Next to the cached tree, never inside it: a cache entry is immutable once built.
  const imageDir = join(releaseCacheDir(), `${release.commit}-lane-images`);
  return {
    release,
    providers: {
      ipam: providerAt(LANE_PROVIDERS.ipam, release.root, imageDir),
      sim: providerAt(LANE_PROVIDERS.sim, release.root, imageDir),
    },
  };
}

/**
 * Builds one of the release's images with its own build script (which keeps the archive when its inputs are
 * unchanged) and resolves with the archive's tag. Asynchronous, so it can run while the kind cluster is created.
 */
export async function buildPreviousImage(previous: LanePreviousRelease, app: 'ipam' | 'sim'): Promise<string> {
  const provider = previous.providers[app];
  const image = provider.app === 'ipam' ? 'ipam-controller' : 'sim-infra-controller';
  const ref = `${IMAGE_REGISTRY}/${image}:v${previous.release.version}`;
  try {
    await execFileAsync('bash', [join(provider.appDir, 'image', 'build.sh')], {
      cwd: provider.appDir,
      env: { ...process.env, IMAGE_REF: ref, OUT_DIR: join(provider.imageArchive, '..') },
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const output = error instanceof Error && 'stderr' in error ? String(error.stderr).slice(-2_000) : '';
    throw new Error(`building ${ref} from ${provider.appDir} failed: ${String(error)}\n${output}`, { cause: error });
  }
  const tag = archiveTag(provider.imageArchive);
  if (tag !== ref) throw new Error(`${provider.imageArchive} is tagged ${tag}, not ${ref}`);
  return tag;
}
