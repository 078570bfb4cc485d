import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheRoot } from '@tally-ipam/testenv';

/** `${TALLY_CACHE_DIR:-~/.cache/tally-ipam}/kind`: one subdirectory per kind of entry, one entry per key. */
export function kindCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'kind');
}

/** A directory of this package (the same relative path from `src/` and `dist/`). */
export function packageDir(relative: string): string {
  return fileURLToPath(new URL(`../${relative}`, import.meta.url));
}
