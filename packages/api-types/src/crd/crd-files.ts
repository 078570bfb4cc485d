import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CustomResourceDefinition } from './custom-resource-definition.js';
import { crdToYaml } from './yaml.js';

/** A generated CRD with the file name it is committed under (`config/crd/<group>_<plural>.yaml`). */
export interface GeneratedCRDFile {
  /** controller-gen's convention, which the reference providers' `config/crd/bases` also follow. */
  fileName: string;
  crd: CustomResourceDefinition;
  yaml: string;
}

/** The committed files of a package's CRDs: controller-gen's file names and stable YAML. */
export function crdFiles(crds: readonly CustomResourceDefinition[]): GeneratedCRDFile[] {
  return crds.map((crd) => ({
    fileName: `${crd.spec.group}_${crd.spec.names.plural}.yaml`,
    crd,
    yaml: crdToYaml(crd),
  }));
}

/** CRD files as one multi-document YAML stream (for `kubectl apply -f -` or client-node's `loadAllYaml`). */
export function crdFilesYaml(files: readonly GeneratedCRDFile[]): string {
  return files.map((file) => file.yaml).join('');
}

/** How a CRD directory differs from what the schemas generate; all empty means it is up to date. */
export interface CRDDrift {
  /** Generated files whose committed text differs, or that are not committed at all. */
  readonly changed: string[];
  /** Committed `.yaml` files that nothing generates any more. */
  readonly stale: string[];
}

/** Compares `dir` with the generated files, byte for byte, without writing. */
export async function diffCRDs(dir: string, files: readonly GeneratedCRDFile[]): Promise<CRDDrift> {
  const expected = new Set(files.map((file) => file.fileName));
  const stale = (await readdir(dir)).filter((name) => name.endsWith('.yaml') && !expected.has(name)).sort();
  const changed: string[] = [];
  for (const file of files) {
    const current = await readFile(join(dir, file.fileName), 'utf8').catch(() => undefined);
    if (current !== file.yaml) changed.push(file.fileName);
  }
  return { changed, stale };
}

/** Brings `dir` up to date: writes the changed files, removes the stale ones; returns what it did. */
export async function writeCRDs(dir: string, files: readonly GeneratedCRDFile[]): Promise<CRDDrift> {
  const drift = await diffCRDs(dir, files);
  const byName = new Map(files.map((file) => [file.fileName, file.yaml]));
  for (const name of drift.changed) await writeFile(join(dir, name), byName.get(name) ?? '');
  for (const name of drift.stale) await rm(join(dir, name));
  return drift;
}

/**
 * A package's `gen-crds` script: writes the CRDs into `dir`, or with `--check` in `argv` writes nothing and resolves
 * 1 (naming the changed and stale files and `regenerate`, the command that fixes it) when `dir` is out of date.
 */
export async function runGenCRDs(
  dir: string,
  files: readonly GeneratedCRDFile[],
  options: { readonly argv: readonly string[]; readonly regenerate: string },
): Promise<number> {
  const check = options.argv.includes('--check');
  const drift = check ? await diffCRDs(dir, files) : await writeCRDs(dir, files);
  if (check && (drift.changed.length > 0 || drift.stale.length > 0)) {
    console.error(
      `${dir} is out of date: changed ${drift.changed.join(', ') || '-'}; stale ${drift.stale.join(', ') || '-'}`,
    );
    console.error(`run: ${options.regenerate}`);
    return 1;
  }
  console.log(`${check ? 'checked' : 'wrote'} ${files.length} CRDs in ${dir} (${drift.changed.length} changed)`);
  return 0;
}
