import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type ControlPlaneBinaries,
  ensureCacheEntry,
  formatBytes,
  formatDuration,
  KUBERNETES_VERSION,
  PROGRESS_INTERVAL_MS,
} from '@tally-ipam/testenv';
import { z } from 'zod';
import type { KindBinaries } from './binaries.js';
import { dockerImageSize } from './docker.js';
import { run, runCommand } from './exec.js';
import { hashTrees, shortKey } from './hash.js';
import { kindCacheDir, packageDir } from './paths.js';
import { baseStampSchema, readStamp, writeStamp } from './stamp.js';
import {
  DEBIAN_SUITE,
  DEFAULT_DEBIAN_MIRROR,
  KIND_CACHE_FORMAT,
  NODE_IMAGE_REPOSITORY,
  NODE_IMAGES,
} from './versions.js';

export interface NodeImage {
  /** `tally-ipam/kind-node:v1.34.10-<key>`: present in the local Docker engine. */
  readonly image: string;
  readonly key: string;
  readonly builtNow: boolean;
  readonly buildDurationMs: number;
  readonly stepDurationsMs: Readonly<Record<string, number>>;
  readonly sizeBytes: number;
}

const stampSchema = baseStampSchema.extend({
  image: z.string(),
  stepDurationsMs: z.record(z.string(), z.number()),
  sizeBytes: z.number(),
});
type Stamp = z.infer<typeof stampSchema>;

async function readCompleteEntry(dir: string): Promise<Stamp | undefined> {
  const stamp = await readStamp(dir, stampSchema);
  if (!stamp) return undefined;
  // The image lives in the engine, not in the cache directory: an engine reset means a rebuild.
  return (await dockerImageSize(stamp.image)) === undefined ? undefined : stamp;
}

/** Runs the build script, turning its STEP lines into progress and a line every 15 s while a step runs. */
async function runBuildScript(
  env: NodeJS.ProcessEnv,
  logPath: string,
  progress: (m: string) => void,
): Promise<Record<string, number>> {
  const started = Date.now();
  const stepDurationsMs: Record<string, number> = {};
  let step = 'starting';
  let stepStarted = Date.now();
  const finishStep = (): void => {
    if (step !== 'starting') stepDurationsMs[step] = Date.now() - stepStarted;
  };
  const log: string[] = [];
  const timer = setInterval(() => {
    progress(
      `node image: ${step} (${formatDuration(Date.now() - stepStarted)} in this step, ${formatDuration(Date.now() - started)} in all)`,
    );
  }, PROGRESS_INTERVAL_MS);
  try {
    await run('bash', [packageDir('image/build-node-image.sh')], {
      env,
      timeoutMs: 60 * 60_000,
      onLine: (line) => {
        log.push(line);
        const match = /^STEP (.*)$/.exec(line);
        if (match?.[1]) {
          finishStep();
          step = match[1];
          stepStarted = Date.now();
          progress(`node image: ${step}`);
        }
      },
    });
    finishStep();
  } finally {
    clearInterval(timer);
    await writeFile(logPath, `${log.join('\n')}\n`);
  }
  return stepDurationsMs;
}

/**
 * What the build script needs of the machine, checked before it starts: without it the script would fail minutes in,
 * with bash's "command not found" (the guide's readers have Docker and Go, not necessarily debootstrap).
 */
async function requireBuildTools(): Promise<void> {
  const found = await runCommand('sh', ['-c', 'command -v debootstrap'], { timeoutMs: 10_000 });
  if (found.exitCode !== 0) {
    throw new Error(
      "the kind node image must be built and debootstrap is not on PATH: install Debian's debootstrap package " +
        '(apt-get install debootstrap) and run again as root',
    );
  }
  if (process.getuid?.() !== 0) {
    throw new Error(
      `the kind node image must be built, and debootstrap needs root (this process runs as uid ${process.getuid?.()})`,
    );
  }
}

async function build(
  key: string,
  image: string,
  kind: KindBinaries,
  controlPlane: ControlPlaneBinaries,
  tmpDir: string,
  logPath: string,
  progress: (m: string) => void,
): Promise<Stamp> {
  await requireBuildTools();
  const started = Date.now();
  const binDir = join(tmpDir, 'bin');
  const workDir = join(tmpDir, 'work');
  await mkdir(binDir, { recursive: true });
  await mkdir(workDir, { recursive: true });
  const binaries: Record<string, string> = {
    ...kind.paths,
    'kube-apiserver': controlPlane.kubeAPIServer,
    'kube-controller-manager': controlPlane.kubeControllerManager,
    etcd: controlPlane.etcd,
  };
  for (const [name, path] of Object.entries(binaries)) await copyFile(path, join(binDir, name));
  progress(`building the node image ${image} (log: ${logPath})`);
  try {
    const stepDurationsMs = await runBuildScript(
      {
        ...process.env,
        BIN_DIR: binDir,
        WORK_DIR: workDir,
        DEBS_DIR: join(kindCacheDir(), 'debs'),
        ROOTFS_DIR: join(kindCacheDir(), 'rootfs'),
        MIRROR: process.env.TALLY_DEBIAN_MIRROR ?? DEFAULT_DEBIAN_MIRROR,
        NODE_IMAGE: image,
        BUILD_ID: `${key.slice(0, 8)}-${randomBytes(4).toString('hex')}`,
        KUBERNETES_VERSION,
        IMAGE_APISERVER: NODE_IMAGES.apiserver,
        IMAGE_CONTROLLER_MANAGER: NODE_IMAGES.controllerManager,
        IMAGE_SCHEDULER: NODE_IMAGES.scheduler,
        IMAGE_PROXY: NODE_IMAGES.proxy,
        IMAGE_ETCD: NODE_IMAGES.etcd,
        IMAGE_COREDNS: NODE_IMAGES.coredns,
        IMAGE_PAUSE: NODE_IMAGES.pause,
      },
      logPath,
      progress,
    );
    const sizeBytes = (await dockerImageSize(image)) ?? 0;
    const stamp: Stamp = {
      format: KIND_CACHE_FORMAT,
      key,
      image,
      builtAt: new Date().toISOString(),
      buildDurationMs: Date.now() - started,
      stepDurationsMs,
      sizeBytes,
    };
    await writeStamp(tmpDir, stamp);
    progress(`built the node image ${image} in ${formatDuration(stamp.buildDurationMs)} (${formatBytes(sizeBytes)})`);
    return stamp;
  } finally {
    // Root file systems and image archives are only inputs; the image itself is in the engine.
    await rm(binDir, { recursive: true, force: true });
    await rm(workDir, { recursive: true, force: true });
  }
}

/**
 * The kind node image, built offline into the local Docker engine unless an image with this key is already there:
 * Debian bookworm (debootstrap) with systemd, containerd, runc, iptables and CNI plugins, the kubelet, kubeadm and
 * kubectl, and every control-plane image preloaded in containerd. The key covers every input, so a warm call only
 * reads a stamp and runs `docker image inspect`.
 */
export async function ensureNodeImage(
  kind: KindBinaries,
  controlPlane: ControlPlaneBinaries,
  onProgress: (message: string) => void = () => {},
): Promise<NodeImage> {
  const key = shortKey({
    format: KIND_CACHE_FORMAT,
    suite: DEBIAN_SUITE,
    kindBinaries: kind.key,
    controlPlaneBinaries: controlPlane.key,
    images: NODE_IMAGES,
    sources: await hashTrees([packageDir('image')]),
  });
  const image = `${NODE_IMAGE_REPOSITORY}:${KUBERNETES_VERSION}-${key}`;
  const result = await ensureCacheEntry({
    cacheDir: join(kindCacheDir(), 'node-image'),
    key,
    what: 'the kind node image',
    read: readCompleteEntry,
    build: (tmpDir, logPath) => build(key, image, kind, controlPlane, tmpDir, logPath, onProgress),
    progress: onProgress,
  });
  return {
    image,
    key,
    builtNow: result.builtNow,
    buildDurationMs: result.entry.buildDurationMs,
    stepDurationsMs: result.entry.stepDurationsMs,
    sizeBytes: result.entry.sizeBytes,
  };
}
