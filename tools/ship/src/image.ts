/**
 * The daemonless controller image of an app (built by `image/build.sh` of this package) and the sandbox that runs it
 * the way the app's Deployment runs the container (`image/sandbox-run.sh`), for the apps' image tests.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import type { ShippedProvider } from './provider.js';

/** This package's directory (the scripts live in `image/`). */
export const SHIP_DIR: string = fileURLToPath(new URL('..', import.meta.url));
export const BUILD_SCRIPT: string = join(SHIP_DIR, 'image', 'build.sh');
export const SANDBOX_SCRIPT: string = join(SHIP_DIR, 'image', 'sandbox-run.sh');
/** Where the image's process finds its code and what it runs. */
export const IMAGE_ENTRYPOINT: readonly string[] = ['/usr/bin/node', '/app/main.mjs'];
/** The non-root user and group of the image and of the Deployments' securityContext. */
export const IMAGE_USER = '65532:65532';
/**
 * Every file build.sh puts into an image besides the shared libraries of node (`/lib*`): nothing else — no shell, no
 * package manager.
 */
export const IMAGE_FILES: readonly string[] = [
  './app/main.mjs',
  './etc/group',
  './etc/passwd',
  './etc/ssl/certs/ca-certificates.crt',
  './usr/bin/node',
];

export function defaultImageRef(provider: ShippedProvider): string {
  return `${provider.imageRepository}:dev`;
}

export function defaultImageOutDir(provider: ShippedProvider): string {
  return join(provider.appDir, 'dist', 'image');
}

export function imageArchivePath(provider: ShippedProvider, outDir = defaultImageOutDir(provider)): string {
  return join(outDir, `${provider.imageName}.tar`);
}

/** Builds the app's image (run `pnpm build` first); build.sh reuses the archive when its inputs are unchanged. */
export function buildImage(provider: ShippedProvider, options: { imageRef?: string; outDir?: string } = {}): string {
  const outDir = options.outDir ?? defaultImageOutDir(provider);
  execFileSync('bash', [BUILD_SCRIPT, provider.appDir, provider.imageName], {
    env: { ...process.env, IMAGE_REF: options.imageRef ?? defaultImageRef(provider), OUT_DIR: outDir },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  return imageArchivePath(provider, outDir);
}

const ArchiveManifest = z.array(
  z.object({ Config: z.string(), RepoTags: z.array(z.string()), Layers: z.array(z.string()) }),
);
const ImageConfig = z.object({
  config: z.object({
    User: z.string().optional(),
    Entrypoint: z.array(z.string()).optional(),
    WorkingDir: z.string().optional(),
    Env: z.array(z.string()).optional(),
  }),
});
export type ImageConfig = z.infer<typeof ImageConfig>;

export interface UnpackedImage {
  readonly repoTags: readonly string[];
  readonly config: ImageConfig['config'];
  readonly rootfs: string;
  readonly archiveBytes: number;
  readonly layerBytes: number;
}

/** Extracts a docker-archive of one image with one layer (what build.sh writes) into `<workDir>/rootfs`. */
export function unpackImage(archive: string, workDir: string): UnpackedImage {
  const extracted = join(workDir, 'archive');
  const rootfs = join(workDir, 'rootfs');
  mkdirSync(extracted, { recursive: true });
  mkdirSync(rootfs, { recursive: true });
  execFileSync('tar', ['-xf', archive, '-C', extracted]);
  const manifests = ArchiveManifest.parse(JSON.parse(readFileSync(join(extracted, 'manifest.json'), 'utf8')));
  const [manifest] = manifests;
  const layer = manifest?.Layers[0];
  if (manifests.length !== 1 || manifest?.Layers.length !== 1 || !layer) {
    throw new Error(`${archive}: expected one image with one layer, found ${manifests.length} images`);
  }
  const config = ImageConfig.parse(JSON.parse(readFileSync(join(extracted, manifest.Config), 'utf8'))).config;
  execFileSync('tar', ['-xf', join(extracted, layer), '-C', rootfs]);
  return {
    repoTags: manifest.RepoTags,
    config,
    rootfs,
    archiveBytes: statSync(archive).size,
    layerBytes: statSync(join(extracted, layer)).size,
  };
}

/** The regular files of an unpacked root filesystem, sorted, without node's shared libraries under `/lib*`. */
export function imageFilesBesidesLibraries(rootfs: string): string[] {
  return execFileSync('find', ['.', '-type', 'f'], { cwd: rootfs, encoding: 'utf8' })
    .split('\n')
    .filter((file) => file && !/^\.\/(lib|lib64)\/.+\.so(\.\d+)*$/.test(file))
    .sort();
}

/**
 * Starts `command` from an unpacked image with sandbox-run.sh (root needed): read-only root, `/tmp` a tmpfs seeded with
 * the files of `tmpSeedDir`, uid/gid 65532, no capabilities, no new privileges.
 */
export function startInSandbox(rootfs: string, tmpSeedDir: string, command: readonly string[]): ChildProcess {
  return spawn(SANDBOX_SCRIPT, [rootfs, tmpSeedDir, ...command], { stdio: ['ignore', 'pipe', 'pipe'] });
}

/** How the kernel sees a running process: identities, capabilities, command line and mounts (paths inside its root). */
export interface ProcessSecurity {
  readonly uid: string;
  readonly gid: string;
  readonly capEff: string;
  readonly capPrm: string;
  readonly noNewPrivs: string;
  readonly cmdline: readonly string[];
  /** Whether the last mount at `/` is read-only. */
  readonly rootReadOnly: boolean;
  /** Writable mount points besides `/tmp`, `/proc` and those under `/dev/` (expected: none). */
  readonly otherWritableMounts: readonly string[];
}

function statusField(status: string, name: string): string {
  const match = new RegExp(`^${name}:\\t(.*)$`, 'm').exec(status);
  if (!match?.[1]) throw new Error(`/proc status has no ${name} line`);
  return match[1];
}

export function readProcessSecurity(pid: number): ProcessSecurity {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mounts = readFileSync(`/proc/${pid}/mountinfo`, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => ({ point: line.split(' ')[4] ?? '', options: (line.split(' ')[5] ?? '').split(',') }));
  return {
    uid: statusField(status, 'Uid'),
    gid: statusField(status, 'Gid'),
    capEff: statusField(status, 'CapEff'),
    capPrm: statusField(status, 'CapPrm'),
    noNewPrivs: statusField(status, 'NoNewPrivs'),
    cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean),
    rootReadOnly:
      mounts
        .filter((mount) => mount.point === '/')
        .at(-1)
        ?.options.includes('ro') ?? false,
    otherWritableMounts: mounts
      .filter((mount) => mount.options.includes('rw'))
      .map((mount) => mount.point)
      .filter((point) => point !== '/tmp' && point !== '/proc' && !point.startsWith('/dev/')),
  };
}
