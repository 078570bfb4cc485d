/**
 * Writes the generated Sim CRDs to config/crd/ (run: `pnpm --filter @tally-ipam/sim-infra gen-crds`).
 * With `--check` it writes nothing and exits 1 when a committed file differs.
 */
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedSimCRDFiles } from '../src/crds.js';

const crdDir = fileURLToPath(new URL('../config/crd/', import.meta.url));
const check = process.argv.includes('--check');

const files = generatedSimCRDFiles();
const expected = new Set(files.map((file) => file.fileName));
const stale = (await readdir(crdDir)).filter((name) => name.endsWith('.yaml') && !expected.has(name));
const changed: string[] = [];
for (const file of files) {
  const path = join(crdDir, file.fileName);
  const current = await readFile(path, 'utf8').catch(() => undefined);
  if (current === file.yaml) continue;
  changed.push(file.fileName);
  if (!check) await writeFile(path, file.yaml);
}
if (!check) for (const name of stale) await rm(join(crdDir, name));

if (check && (changed.length > 0 || stale.length > 0)) {
  console.error(`config/crd is out of date: changed ${changed.join(', ') || '-'}; stale ${stale.join(', ') || '-'}`);
  console.error('run: pnpm --filter @tally-ipam/sim-infra gen-crds');
  process.exit(1);
}
console.log(`${check ? 'checked' : 'wrote'} ${files.length} CRDs in config/crd (${changed.length} changed)`);
