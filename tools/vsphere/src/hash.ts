import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

/**
 * SHA-256 over the relative path and content of every file under `dir` that `include` accepts, in sorted order: any
 * edit of a build input changes it.
 */
export async function hashTree(dir: string, include: (path: string) => boolean = () => true): Promise<string> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  const files = entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .filter(include)
    .sort();
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(relative(dir, file));
    hash.update('\0');
    hash.update(await readFile(file));
    hash.update('\0');
  }
  return hash.digest('hex');
}
