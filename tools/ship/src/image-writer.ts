/**
 * Writes an app's image from an assembled root filesystem, in Node, without umoci, skopeo or a Docker daemon (so
 * `npm test` needs neither root nor apt): one uncompressed layer, an OCI image layout (`<outDir>/oci`) and a
 * docker-archive (`<outDir>/<name>.tar`) that `docker load` and `kind load image-archive` read.
 *
 * Deterministic, so the same inputs give the same digests on every machine: entries sorted by name, one fixed mtime
 * (SOURCE_DATE_EPOCH, default 0), owner 0:0 with no user or group names, and modes normalised (directories 0755,
 * files 0755 or 0644 by their owner's execute bit, a sticky directory 1777) so the builder's umask does not leak in.
 * Nothing in the image is owned by 65532: the process runs as 65532:65532 and writes only to /tmp (1777).
 */
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, open, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import tarStream from 'tar-stream';
import { IMAGE_ENTRYPOINT, IMAGE_USER } from './image.js';

const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';
const OCI_LAYER_TAR = 'application/vnd.oci.image.layer.v1.tar';

export interface ImageSpec {
  /** The assembled root filesystem (build.sh step 2). */
  readonly rootfs: string;
  readonly outDir: string;
  /** File name of the docker-archive: `<imageName>.tar`. */
  readonly imageName: string;
  /** Reference stored in the archive and the layout, e.g. `ghcr.io/tally-ipam/ipam-controller:dev`. */
  readonly imageRef: string;
  readonly labels?: Readonly<Record<string, string>>;
  /** Seconds since the epoch for every entry and the config's `created`; default SOURCE_DATE_EPOCH, else 0. */
  readonly epochSeconds?: number;
}

export interface WrittenImage {
  readonly archive: string;
  readonly ociLayout: string;
  /** The image ID `docker images` shows. */
  readonly configDigest: string;
  /** The digest a registry would give the image. */
  readonly manifestDigest: string;
  readonly layerDigest: string;
  readonly layerBytes: number;
  readonly archiveBytes: number;
}

interface TarEntry {
  readonly header: Partial<tarStream.Header> & Pick<tarStream.Header, 'name'>;
  /** File contents: a path to read or the bytes themselves. */
  readonly content?: string | Buffer;
}

interface Written {
  readonly digest: string;
  readonly bytes: number;
}

function sha256(bytes: Buffer | string): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

function hexOf(digest: string): string {
  return digest.slice('sha256:'.length);
}

/** The architecture of the node binary shipped (the host's), in OCI's vocabulary. */
export function ociArchitecture(nodeArch: string = process.arch): string {
  const known: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' };
  const arch = known[nodeArch];
  if (!arch) throw new Error(`image writer: no OCI architecture for Node's process.arch ${JSON.stringify(nodeArch)}`);
  return arch;
}

/** Splits `registry/repo:tag` into the repository and the tag (`latest` when there is none). */
export function splitImageRef(ref: string): { repository: string; tag: string } {
  const lastSlash = ref.lastIndexOf('/');
  const colon = ref.lastIndexOf(':');
  if (ref.includes('@'))
    throw new Error(`image writer: image reference ${JSON.stringify(ref)} has a digest; give a tag`);
  if (colon > lastSlash) return { repository: ref.slice(0, colon), tag: ref.slice(colon + 1) };
  return { repository: ref, tag: 'latest' };
}

function normalisedMode(mode: number, isDirectory: boolean): number {
  if (isDirectory) return mode & 0o1000 ? 0o1777 : 0o755;
  return mode & 0o100 ? 0o755 : 0o644;
}

/** The layer's entries: every file, directory and symbolic link under `rootfs`, sorted, with normalised metadata. */
export function layerEntries(rootfs: string, mtime: Date): TarEntry[] {
  const entries: TarEntry[] = [];
  const base = { uid: 0, gid: 0, uname: '', gname: '', mtime };
  const walk = (relativeDir: string): void => {
    const names = readdirSync(join(rootfs, relativeDir)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const name of names) {
      const relative = relativeDir ? `${relativeDir}/${name}` : name;
      const path = join(rootfs, relative);
      const stats = lstatSync(path);
      if (stats.isDirectory()) {
        entries.push({
          header: { ...base, name: `${relative}/`, type: 'directory', mode: normalisedMode(stats.mode, true) },
        });
        walk(relative);
      } else if (stats.isFile()) {
        entries.push({
          header: { ...base, name: relative, type: 'file', size: stats.size, mode: normalisedMode(stats.mode, false) },
          content: path,
        });
      } else if (stats.isSymbolicLink()) {
        entries.push({
          header: { ...base, name: relative, type: 'symlink', linkname: readlinkSync(path), mode: 0o777 },
        });
      } else {
        throw new Error(`image writer: ${path} is neither a file, a directory nor a symbolic link`);
      }
    }
  };
  walk('');
  return entries;
}

/** Writes a tar of `entries` in their order to `path`, returning its digest and size. */
async function writeTar(path: string, entries: readonly TarEntry[]): Promise<Written> {
  const pack = tarStream.pack();
  const hash = createHash('sha256');
  let bytes = 0;
  const out = await open(path, 'w');
  const sink = (async () => {
    try {
      for await (const chunk of pack as AsyncIterable<Buffer>) {
        hash.update(chunk);
        bytes += chunk.length;
        await out.write(chunk);
      }
    } finally {
      await out.close();
    }
  })();
  for (const entry of entries) {
    const content = typeof entry.content === 'string' ? readFileSync(entry.content) : entry.content;
    await new Promise<void>((resolve, reject) => {
      const callback = (error?: Error | null): void => (error ? reject(error) : resolve());
      if (content === undefined) pack.entry(entry.header, callback);
      else pack.entry({ ...entry.header, size: content.length }, content, callback);
    });
  }
  pack.finalize();
  await sink;
  return { digest: `sha256:${hash.digest('hex')}`, bytes };
}

function json(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value));
}

/** Writes the OCI layout and the docker-archive of `spec.rootfs`; the previous outputs are replaced. */
export async function writeImage(spec: ImageSpec): Promise<WrittenImage> {
  const epochSeconds = spec.epochSeconds ?? Number(process.env.SOURCE_DATE_EPOCH ?? 0);
  if (!Number.isInteger(epochSeconds) || epochSeconds < 0) {
    throw new Error(`image writer: SOURCE_DATE_EPOCH must be a whole number of seconds, got ${epochSeconds}`);
  }
  const mtime = new Date(epochSeconds * 1000);
  const created = mtime.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const { repository, tag } = splitImageRef(spec.imageRef);
  await mkdir(spec.outDir, { recursive: true });
  const staging = join(spec.outDir, '.oci-staging');
  await rm(staging, { recursive: true, force: true });
  const blobs = join(staging, 'blobs', 'sha256');
  await mkdir(blobs, { recursive: true });

  const layerFile = join(blobs, '.layer');
  const layer = await writeTar(layerFile, layerEntries(spec.rootfs, mtime));
  await rename(layerFile, join(blobs, hexOf(layer.digest)));

  const config = json({
    created,
    architecture: ociArchitecture(),
    os: 'linux',
    config: {
      User: IMAGE_USER,
      Env: ['NODE_ENV=production', 'SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt'],
      Entrypoint: [...IMAGE_ENTRYPOINT],
      WorkingDir: '/app',
      Labels: spec.labels ?? {},
    },
    rootfs: { type: 'layers', diff_ids: [layer.digest] },
    history: [{ created, created_by: '@tally-ipam/ship image writer' }],
  });
  const configDigest = sha256(config);
  const manifest = json({
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    config: { mediaType: OCI_CONFIG, digest: configDigest, size: config.length },
    layers: [{ mediaType: OCI_LAYER_TAR, digest: layer.digest, size: layer.bytes }],
  });
  const manifestDigest = sha256(manifest);
  const index = json({
    schemaVersion: 2,
    mediaType: OCI_INDEX,
    manifests: [
      {
        mediaType: OCI_MANIFEST,
        digest: manifestDigest,
        size: manifest.length,
        annotations: { 'io.containerd.image.name': spec.imageRef, 'org.opencontainers.image.ref.name': tag },
      },
    ],
  });
  await writeFile(join(blobs, hexOf(configDigest)), config);
  await writeFile(join(blobs, hexOf(manifestDigest)), manifest);
  await writeFile(join(staging, 'index.json'), index);
  await writeFile(join(staging, 'oci-layout'), json({ imageLayoutVersion: '1.0.0' }));
  const ociLayout = join(spec.outDir, 'oci');
  await rm(ociLayout, { recursive: true, force: true });
  await rename(staging, ociLayout);

  // docker-archive as skopeo writes it: <config hex>.json, <layer hex>.tar, manifest.json naming them and the tag.
  const layerBlob = join(ociLayout, 'blobs', 'sha256', hexOf(layer.digest));
  const entryHeader = { uid: 0, gid: 0, uname: '', gname: '', mtime, mode: 0o644, type: 'file' as const };
  const configName = `${hexOf(configDigest)}.json`;
  const layerName = `${hexOf(layer.digest)}.tar`;
  const archive = join(spec.outDir, `${spec.imageName}.tar`);
  const archiveStaging = `${archive}.partial`;
  await writeTar(archiveStaging, [
    { header: { ...entryHeader, name: configName }, content: config },
    { header: { ...entryHeader, name: layerName }, content: layerBlob },
    {
      header: { ...entryHeader, name: 'manifest.json' },
      content: json([{ Config: configName, RepoTags: [`${repository}:${tag}`], Layers: [layerName] }]),
    },
  ]);
  await rename(archiveStaging, archive);
  return {
    archive,
    ociLayout,
    configDigest,
    manifestDigest,
    layerDigest: layer.digest,
    layerBytes: layer.bytes,
    archiveBytes: (await stat(archive)).size,
  };
}

/** `node dist/image-writer.js --rootfs DIR --out-dir DIR --name NAME --ref REF [--label k=v]...` (build.sh step 3). */
export async function runImageWriterCli(argv: readonly string[]): Promise<WrittenImage> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      rootfs: { type: 'string' },
      'out-dir': { type: 'string' },
      name: { type: 'string' },
      ref: { type: 'string' },
      label: { type: 'string', multiple: true },
    },
    strict: true,
  });
  const required = (name: 'rootfs' | 'out-dir' | 'name' | 'ref'): string => {
    const value = values[name];
    if (!value) throw new Error(`image writer: --${name} is required`);
    return value;
  };
  const labels: Record<string, string> = {};
  for (const label of values.label ?? []) {
    const equals = label.indexOf('=');
    if (equals <= 0)
      throw new Error(`image writer: --label wants key=value, got ${JSON.stringify(label.slice(0, 60))}`);
    labels[label.slice(0, equals)] = label.slice(equals + 1);
  }
  return writeImage({
    rootfs: required('rootfs'),
    outDir: required('out-dir'),
    imageName: required('name'),
    imageRef: required('ref'),
    labels,
  });
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  runImageWriterCli(process.argv.slice(2)).then(
    (image) => {
      process.stdout.write(
        `${JSON.stringify({
          archive: image.archive,
          configDigest: image.configDigest,
          manifestDigest: image.manifestDigest,
          layerBytes: image.layerBytes,
          archiveBytes: image.archiveBytes,
        })}\n`,
      );
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
