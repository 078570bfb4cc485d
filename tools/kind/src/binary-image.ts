import { chmod, copyFile, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureCacheEntry, formatBytes, formatDuration } from '@tally-ipam/testenv';
import { z } from 'zod';
import { run } from './exec.js';
import { shortKey } from './hash.js';
import { kindCacheDir } from './paths.js';
import { baseStampSchema, readStamp, writeStamp } from './stamp.js';
import { KIND_CACHE_FORMAT } from './versions.js';

/** One static binary placed at the image's root (`/<name>`). */
export interface ImageBinary {
  /** The file name in the image, e.g. `manager`. */
  readonly name: string;
  readonly path: string;
  /** The key of the cache entry the binary came from: the image's key follows it. */
  readonly key: string;
}

export interface BinaryImageRequest {
  /** The cache subdirectory under `<cache>/kind/` (one entry per key), e.g. `capi-image`. */
  readonly cacheName: string;
  /** What is built, for progress lines ("the Cluster API manager image"). */
  readonly what: string;
  /** The tag the archive carries, the name the manifests give the image. */
  readonly image: string;
  readonly binaries: readonly ImageBinary[];
  /** The image's entrypoint, e.g. `['/manager']`. */
  readonly entrypoint: readonly string[];
  readonly onProgress?: (message: string) => void;
}

export interface BinaryImageArchive {
  /** A `docker save` archive holding `image`, for `kind load image-archive`. */
  readonly archivePath: string;
  readonly image: string;
  readonly key: string;
  readonly builtNow: boolean;
  readonly sizeBytes: number;
  /** How long the build took when it happened, in this or an earlier process. */
  readonly buildDurationMs: number;
}

const stampSchema = baseStampSchema.extend({ image: z.string(), sizeBytes: z.number() });
type Stamp = z.infer<typeof stampSchema>;

const ARCHIVE_FILE = 'image.tar';
/** The file names a binary may have in the image: one path component, no surprises in the entrypoint. */
const BINARY_NAME = /^[a-z][a-z0-9-]{0,40}$/;

async function readCompleteEntry(dir: string): Promise<Stamp | undefined> {
  const stamp = await readStamp(dir, stampSchema);
  if (!stamp) return undefined;
  try {
    await stat(join(dir, ARCHIVE_FILE));
    return stamp;
  } catch {
    return undefined;
  }
}

/**
 * The layout upstream's controller images have (static binaries at `/`, user 65532 as distroless/static:nonroot, a
 * writable `/tmp`), so upstream's Deployments (`command: [/manager]`, runAsNonRoot) run them unchanged. One layer,
 * made with `docker import`; the engine keeps no tag of it, the archive is what travels.
 */
async function build(request: BinaryImageRequest, key: string, tmpDir: string): Promise<Stamp> {
  const progress = request.onProgress ?? ((): void => {});
  const started = Date.now();
  const root = join(tmpDir, 'rootfs');
  await mkdir(join(root, 'etc'), { recursive: true });
  await mkdir(join(root, 'tmp'), { recursive: true });
  await chmod(join(root, 'tmp'), 0o1777);
  await writeFile(
    join(root, 'etc/passwd'),
    'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n',
  );
  await writeFile(join(root, 'etc/group'), 'root:x:0:\nnonroot:x:65532:\n');
  for (const binary of request.binaries) {
    await copyFile(binary.path, join(root, binary.name));
    await chmod(join(root, binary.name), 0o755);
  }
  const archive = join(tmpDir, ARCHIVE_FILE);
  progress(`building ${request.image} from ${request.binaries.map((b) => b.path).join(', ')}`);
  try {
    await run(
      'bash',
      [
        '-c',
        'set -euo pipefail; tar -C "$ROOT" --numeric-owner -c . | docker import --change "ENTRYPOINT $ENTRYPOINT" ' +
          '--change "USER 65532:65532" - "$IMAGE" >/dev/null; docker save -o "$ARCHIVE" "$IMAGE"',
      ],
      {
        env: {
          ...process.env,
          ROOT: root,
          IMAGE: request.image,
          ARCHIVE: archive,
          ENTRYPOINT: JSON.stringify(request.entrypoint),
        },
        timeoutMs: 10 * 60_000,
      },
    );
  } finally {
    await run('docker', ['rmi', request.image]).catch(() => '');
    await rm(root, { recursive: true, force: true });
  }
  const sizeBytes = (await stat(archive)).size;
  const stamp: Stamp = {
    format: KIND_CACHE_FORMAT,
    key,
    image: request.image,
    builtAt: new Date().toISOString(),
    buildDurationMs: Date.now() - started,
    sizeBytes,
  };
  await writeStamp(tmpDir, stamp);
  progress(`built ${request.image} in ${formatDuration(stamp.buildDurationMs)} (${formatBytes(sizeBytes)} archive)`);
  return stamp;
}

/**
 * An image of static Go binaries (Cluster API's or CAPV's manager, the vCenter simulator) as an archive for
 * `kind load image-archive`, built without a registry and cached under `<cache>/kind/<cacheName>/<key>`, the key
 * following the binaries' own cache keys, the tag and the entrypoint.
 */
export async function ensureBinaryImageArchive(request: BinaryImageRequest): Promise<BinaryImageArchive> {
  const progress = request.onProgress ?? ((): void => {});
  for (const binary of request.binaries) {
    if (!BINARY_NAME.test(binary.name)) {
      throw new Error(
        `${request.what}: binary name "${binary.name.slice(0, 50)}" must be one lowercase path component`,
      );
    }
  }
  if (request.binaries.length === 0) throw new Error(`${request.what}: an image needs at least one binary`);
  const key = shortKey({
    format: KIND_CACHE_FORMAT,
    layout: 'static-binaries',
    image: request.image,
    entrypoint: request.entrypoint,
    binaries: request.binaries.map(({ name, key: binaryKey }) => ({ name, key: binaryKey })),
  });
  const result = await ensureCacheEntry({
    cacheDir: join(kindCacheDir(), request.cacheName),
    key,
    what: request.what,
    read: readCompleteEntry,
    build: (tmpDir) => build(request, key, tmpDir),
    progress,
  });
  return {
    archivePath: join(result.dir, ARCHIVE_FILE),
    image: request.image,
    key,
    builtNow: result.builtNow,
    sizeBytes: result.entry.sizeBytes,
    buildDurationMs: result.entry.buildDurationMs,
  };
}
