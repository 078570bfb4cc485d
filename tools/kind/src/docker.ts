import { runCommand } from './exec.js';

/**
 * True when a Docker engine answers `docker info`. Never installs or starts one: providing the engine is the job of
 * the machine (`.ci/docker-engine.sh` on CI).
 */
export async function ensureDockerEngine(): Promise<boolean> {
  try {
    const result = await runCommand('docker', ['info', '--format', '{{.ServerVersion}}'], { timeoutMs: 20_000 });
    return result.exitCode === 0 && result.stdout.trim() !== '';
  } catch {
    return false;
  }
}

/** The image's size in bytes, or undefined when the engine does not have it. */
export async function dockerImageSize(image: string): Promise<number | undefined> {
  const result = await runCommand('docker', ['image', 'inspect', '--format', '{{.Size}}', image], {
    timeoutMs: 30_000,
  });
  if (result.exitCode !== 0) return undefined;
  const size = Number(result.stdout.trim());
  return Number.isFinite(size) ? size : undefined;
}
