import { createHash } from 'node:crypto';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tarStream from 'tar-stream';
import { afterAll, describe, expect, it } from 'vitest';
import { IMAGE_ENTRYPOINT, IMAGE_USER, unpackImage } from '../src/image.js';
import { type ImageSpec, ociArchitecture, splitImageRef, type WrittenImage, writeImage } from '../src/image-writer.js';

const work = mkdtempSync(join(tmpdir(), 'ship-image-writer-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface TarMember {
  readonly name: string;
  readonly type: string;
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
  readonly mtime: number;
  readonly content: Buffer;
}

async function readTar(bytes: Buffer): Promise<TarMember[]> {
  const extract = tarStream.extract();
  const members: TarMember[] = [];
  const done = (async () => {
    for await (const entry of extract) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      const { name, type, mode, uid, gid, mtime } = entry.header;
      members.push({ name, type, mode, uid, gid, mtime: mtime.getTime(), content: Buffer.concat(chunks) });
    }
  })();
  extract.end(bytes);
  await done;
  return members;
}

/** A small root filesystem whose metadata (owner-independent modes, mtimes) differs by `variant`. */
function makeRootfs(dir: string, variant: number): string {
  const rootfs = join(dir, 'rootfs');
  mkdirSync(join(rootfs, 'usr/bin'), { recursive: true });
  mkdirSync(join(rootfs, 'app'), { recursive: true });
  mkdirSync(join(rootfs, 'tmp'), { recursive: true });
  writeFileSync(join(rootfs, 'usr/bin/node'), 'not really node');
  writeFileSync(join(rootfs, 'app/main.mjs'), 'console.log(1)');
  writeFileSync(join(rootfs, 'b-file'), 'b');
  symlinkSync('usr/bin', join(rootfs, 'bin'));
  chmodSync(join(rootfs, 'usr/bin/node'), variant === 0 ? 0o755 : 0o775);
  chmodSync(join(rootfs, 'app/main.mjs'), variant === 0 ? 0o644 : 0o664);
  chmodSync(join(rootfs, 'app'), variant === 0 ? 0o755 : 0o775);
  chmodSync(join(rootfs, 'tmp'), 0o1777);
  const when = new Date(variant === 0 ? Date.UTC(2020, 0, 1) : Date.UTC(2024, 5, 6));
  utimesSync(join(rootfs, 'app/main.mjs'), when, when);
  return rootfs;
}

/** Writes the demo image of the root filesystem in `<work>/<dir>` (made by makeRootfs unless given). */
function writeDemo(
  dir: string,
  options: { variant?: number; rootfs?: string; imageRef?: string } & Partial<ImageSpec> = {},
): Promise<WrittenImage> {
  const { variant = 0, rootfs, imageRef = 'example.test/demo:dev', ...rest } = options;
  return writeImage({
    rootfs: rootfs ?? makeRootfs(join(work, dir), variant),
    outDir: join(work, dir, 'out'),
    imageName: 'demo',
    imageRef,
    ...rest,
  });
}

describe('image writer', () => {
  it('gives the same digests for the same files whatever their mtimes and the umask, and others for other files', async () => {
    const first = await writeDemo('a');
    const second = await writeDemo('b', { variant: 1 });
    expect(second.configDigest).toBe(first.configDigest);
    expect(second.manifestDigest).toBe(first.manifestDigest);
    expect(readFileSync(second.archive).equals(readFileSync(first.archive))).toBe(true);

    const changedRootfs = makeRootfs(join(work, 'c'), 0);
    writeFileSync(join(changedRootfs, 'app/main.mjs'), 'console.log(2)');
    const changed = await writeDemo('c', { rootfs: changedRootfs });
    expect(changed.layerDigest).not.toBe(first.layerDigest);
    expect(changed.manifestDigest).not.toBe(first.manifestDigest);
  });

  it('writes a layer with sorted entries, owner 0:0, one mtime and normalised modes', async () => {
    const image = await writeDemo('d', { variant: 1, epochSeconds: 1_700_000_000 });
    const layer = readFileSync(join(image.ociLayout, 'blobs', 'sha256', image.layerDigest.slice(7)));
    const members = await readTar(layer);
    expect(members.map((m) => [m.name, m.type, m.mode.toString(8)])).toEqual([
      ['app/', 'directory', '755'],
      ['app/main.mjs', 'file', '644'],
      ['b-file', 'file', '644'],
      ['bin', 'symlink', '777'],
      ['tmp/', 'directory', '1777'],
      ['usr/', 'directory', '755'],
      ['usr/bin/', 'directory', '755'],
      ['usr/bin/node', 'file', '755'],
    ]);
    expect(new Set(members.map((m) => `${m.uid}:${m.gid}@${m.mtime}`))).toEqual(new Set(['0:0@1700000000000']));
  });

  it('writes an OCI layout and a docker-archive whose digests and references agree', async () => {
    const image = await writeDemo('e', {
      imageRef: 'example.test/tally/demo:v1',
      labels: { 'org.opencontainers.image.title': 'demo' },
    });
    const blob = (digest: string): Buffer => readFileSync(join(image.ociLayout, 'blobs', 'sha256', digest.slice(7)));
    const digestOf = (bytes: Buffer): string => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    expect(JSON.parse(readFileSync(join(image.ociLayout, 'oci-layout'), 'utf8'))).toEqual({
      imageLayoutVersion: '1.0.0',
    });
    const index = JSON.parse(readFileSync(join(image.ociLayout, 'index.json'), 'utf8'));
    expect(index.manifests).toHaveLength(1);
    expect(index.manifests[0].digest).toBe(image.manifestDigest);
    expect(index.manifests[0].annotations['org.opencontainers.image.ref.name']).toBe('v1');
    const manifest = JSON.parse(blob(image.manifestDigest).toString('utf8'));
    expect(digestOf(blob(image.manifestDigest))).toBe(image.manifestDigest);
    expect(manifest.config.digest).toBe(image.configDigest);
    expect(digestOf(blob(image.configDigest))).toBe(image.configDigest);
    expect(manifest.layers).toEqual([
      { mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: image.layerDigest, size: image.layerBytes },
    ]);
    expect(digestOf(blob(image.layerDigest))).toBe(image.layerDigest);
    const config = JSON.parse(blob(image.configDigest).toString('utf8'));
    expect(config.rootfs).toEqual({ type: 'layers', diff_ids: [image.layerDigest] });
    expect(config.architecture).toBe(ociArchitecture());
    expect(config.config.Labels).toEqual({ 'org.opencontainers.image.title': 'demo' });

    // The docker-archive, read the way the apps' image tests read it (system tar), names the same config and layer.
    const unpacked = unpackImage(image.archive, join(work, 'e', 'unpacked'));
    expect(unpacked.repoTags).toEqual(['example.test/tally/demo:v1']);
    expect(unpacked.config.User).toBe(IMAGE_USER);
    expect(unpacked.config.Entrypoint).toEqual(IMAGE_ENTRYPOINT);
    expect(unpacked.layerBytes).toBe(image.layerBytes);
    expect(readFileSync(join(unpacked.rootfs, 'app/main.mjs'), 'utf8')).toBe('console.log(1)');
    const archiveMembers = await readTar(readFileSync(image.archive));
    expect(archiveMembers.map((m) => m.name)).toEqual([
      `${image.configDigest.slice(7)}.json`,
      `${image.layerDigest.slice(7)}.tar`,
      'manifest.json',
    ]);
  });

  it('splits image references and refuses digests', () => {
    expect(splitImageRef('ghcr.io/tally-ipam/ipam-controller:dev')).toEqual({
      repository: 'ghcr.io/tally-ipam/ipam-controller',
      tag: 'dev',
    });
    expect(splitImageRef('localhost:5000/demo')).toEqual({ repository: 'localhost:5000/demo', tag: 'latest' });
    expect(() => splitImageRef('demo@sha256:00')).toThrow(/has a digest/);
    expect(() => ociArchitecture('mips')).toThrow(/"mips"/);
  });
});
