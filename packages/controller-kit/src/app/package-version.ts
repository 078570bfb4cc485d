import { readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * The `version` of the package.json at `url` (an app passes `new URL('../package.json', import.meta.url)`), for
 * `--version`; a readable placeholder when it is not there (a bundled image carries no package.json).
 */
export function readPackageVersion(url: URL): string {
  try {
    const text = readFileSync(url, 'utf8');
    return z.object({ version: z.string().max(64) }).parse(JSON.parse(text)).version;
  } catch {
    return 'unknown (no package.json next to the executable)';
  }
}
