import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { z } from 'zod';

/** Every cache entry of this package is complete when its `stamp.json` exists and parses; it is written last. */
const STAMP_FILE = 'stamp.json';

export async function readStamp<Schema extends z.ZodType>(
  dir: string,
  schema: Schema,
): Promise<z.infer<Schema> | undefined> {
  try {
    return schema.parse(JSON.parse(await readFile(join(dir, STAMP_FILE), 'utf8')));
  } catch {
    return undefined;
  }
}

export async function writeStamp(dir: string, stamp: unknown): Promise<void> {
  await writeFile(join(dir, STAMP_FILE), `${JSON.stringify(stamp, null, 2)}\n`);
}
