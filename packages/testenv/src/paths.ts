import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The cache root, outside any clone so a fresh checkout (CI) reuses binaries built earlier on the same machine:
 * `$TALLY_CACHE_DIR`, else `$XDG_CACHE_HOME/tally-ipam`, else `~/.cache/tally-ipam`.
 */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TALLY_CACHE_DIR) return env.TALLY_CACHE_DIR;
  const xdg = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(xdg, 'tally-ipam');
}

/** Directory holding one subdirectory per binary cache key. */
export function controlPlaneCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'control-plane');
}

/** Directory holding one subdirectory per Cluster API manager cache key. */
export function capiManagerCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'cluster-api');
}

/** The wrapper Go module; the same relative path from `src/` (tests) and `dist/` (published). */
export function wrapperModuleDir(): string {
  return fileURLToPath(new URL('../go/kube/', import.meta.url));
}
