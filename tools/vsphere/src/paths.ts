import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheRoot } from '@tally-ipam/testenv';

/** `${TALLY_CACHE_DIR:-~/.cache/tally-ipam}/vsphere/<what>`: one entry per build key under each. */
export function vsphereCacheDir(what: 'capv' | 'vcsim', env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'vsphere', what);
}

/** A path inside this package (the same relative path from `src/` and `dist/`). */
export function packageDir(relative: string): string {
  return fileURLToPath(new URL(`../${relative}`, import.meta.url));
}

/** The Go module holding the simulator's sources and the module files that pin each CAPV build. */
export function goModuleDir(): string {
  return packageDir('go');
}
