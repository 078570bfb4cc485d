import { chmod, copyFile, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureCacheEntry, ensureCapiManager, formatBytes, formatDuration } from '@tally-ipam/testenv';
import { z } from 'zod';
import { run } from './exec.js';
import { shortKey } from './hash.js';
import { kindCacheDir } from './paths.js';
import { baseStampSchema, readStamp, writeStamp } from './stamp.js';
import { capiManagerImage, KIND_CACHE_FORMAT } from './versions.js';

export interface CapiManagerImageArchive {
  /** A `docker save` archive holding `image`, for `kind load image-archive`. */
  readonly archivePath: string;
  readonly image: string;
  readonly key: string;
  readonly builtNow: boolean;
  readonly sizeBytes: number;
}

const stampSchema = baseStampSchema.extend({
  image: z.string(),
  sizeBytes: z.number(),
});
type Stamp = z.infer<typeof stampSchema>;

const ARCHIVE_FILE = 'cluster-api-controller.tar';

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
 * The image layout upstream's manager image has (a static `/manager`, user 65532, as distroless/static:nonroot), so
 * Cluster API's own Deployment (`command: [/manager]`, runAsNonRoot) runs it unchanged.
 */
async function build(
  key: string,
  image: string,
  managerBinary: string,
  tmpDir: string,
  progress: (m: string) => void,
): Promise<Stamp> {
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
  await copyFile(managerBinary, join(root, 'manager'));
  await chmod(join(root, 'manager'), 0o755);
  const archive = join(tmpDir, ARCHIVE_FILE);
  progress(`building ${image} from ${managerBinary}`);
  try {
    await run(
      'bash',
      [
        '-c',
        'set -euo pipefail; tar -C "$ROOT" --numeric-owner -c . | docker import --change \'ENTRYPOINT ["/manager"]\' ' +
          '--change "USER 65532:65532" - "$IMAGE" >/dev/null; docker save -o "$ARCHIVE" "$IMAGE"',
      ],
      { env: { ...process.env, ROOT: root, IMAGE: image, ARCHIVE: archive }, timeoutMs: 10 * 60_000 },
    );
  } finally {
    // The archive is what travels; the engine keeps no tag of it.
    await run('docker', ['rmi', image]).catch(() => '');
    await rm(root, { recursive: true, force: true });
  }
  const sizeBytes = (await stat(archive)).size;
  const stamp: Stamp = {
    format: KIND_CACHE_FORMAT,
    key,
    image,
    builtAt: new Date().toISOString(),
    buildDurationMs: Date.now() - started,
    sizeBytes,
  };
  await writeStamp(tmpDir, stamp);
  progress(`built ${image} in ${formatDuration(stamp.buildDurationMs)} (${formatBytes(sizeBytes)} archive)`);
  return stamp;
}

/**
 * The Cluster API core manager image of a release (default: the run's, testenv's `clusterApiVersion()`), from the
 * binary testenv builds for it, as an archive for `kind load image-archive`.
 */
export async function ensureCapiManagerImageArchive(
  onProgress: (message: string) => void = () => {},
  capiVersion?: string,
): Promise<CapiManagerImageArchive> {
  const manager = await ensureCapiManager({ version: capiVersion, onProgress });
  const image = capiManagerImage(manager.version);
  const key = shortKey({ format: KIND_CACHE_FORMAT, image, binary: manager.key });
  const result = await ensureCacheEntry({
    cacheDir: join(kindCacheDir(), 'capi-image'),
    key,
    what: 'the Cluster API manager image',
    read: readCompleteEntry,
    build: (tmpDir) => build(key, image, manager.path, tmpDir, onProgress),
    progress: onProgress,
  });
  return {
    archivePath: join(result.dir, ARCHIVE_FILE),
    image,
    key,
    builtNow: result.builtNow,
    sizeBytes: result.entry.sizeBytes,
  };
}
