import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { KIND_CACHE_FORMAT } from './versions.js';

/** Every cache entry of this package is complete when its `stamp.json` exists and parses; it is written last. */
const STAMP_FILE = 'stamp.json';

/** What every stamp records; each entry adds its own fields. */
export const baseStampSchema = z.object({
  format: z.literal(KIND_CACHE_FORMAT),
  key: z.string(),
  builtAt: z.string(),
  buildDurationMs: z.number(),
});

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
