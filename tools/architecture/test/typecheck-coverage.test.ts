// `npm test` type-checks the whole workspace as one program (the root tsconfig.check.json): the libraries' types are
// read and the shared packages' declarations resolved once, not once per package (21 programs took 400–640 s of the
// run on two cores; the one program takes about a tenth of that). A package's own check configuration
// (tsconfig.check.json, or tsconfig.json where it has no build) stays the statement of what that package wants
// checked; this test holds the root program to every file of every one of them, so that a new package, or a new
// directory of one, cannot drop out of the run's typecheck unnoticed.
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, test } from 'vitest';
import { WORKSPACE_ROOT } from '../src/paths.js';
import { readWorkspace } from '../src/scan.js';
import type { Workspace } from '../src/workspace.js';

const ROOT_CHECK_CONFIG = 'tsconfig.check.json';

/** The files a tsconfig names, relative to the workspace root; the config's own errors fail the test. */
function configFiles(path: string): string[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(path, undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(`${path}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
    },
  });
  if (!parsed) throw new Error(`${path}: not a tsconfig`);
  const errors = parsed.errors.filter((error) => error.category === ts.DiagnosticCategory.Error);
  if (errors.length > 0) {
    throw new Error(`${path}: ${errors.map((e) => ts.flattenDiagnosticMessageText(e.messageText, ' ')).join('; ')}`);
  }
  return parsed.fileNames.map((file) => relative(WORKSPACE_ROOT, file).split('\\').join('/'));
}

/** A package's own check configuration: tsconfig.check.json where it builds, else its only tsconfig.json. */
function packageCheckConfig(dir: string): string | undefined {
  for (const name of ['tsconfig.check.json', 'tsconfig.json']) {
    const path = join(WORKSPACE_ROOT, dir, name);
    if (existsSync(path)) return path;
  }
  return undefined;
}

let workspace: Workspace;
let rootFiles: ReadonlySet<string>;

beforeAll(() => {
  workspace = readWorkspace(WORKSPACE_ROOT);
  rootFiles = new Set(configFiles(join(WORKSPACE_ROOT, ROOT_CHECK_CONFIG)));
});

describe(`the run's one typecheck program (${ROOT_CHECK_CONFIG})`, () => {
  test('holds every file each package checks on its own', () => {
    const missing: string[] = [];
    let checked = 0;
    for (const pkg of workspace.packages) {
      const config = packageCheckConfig(pkg.dir);
      if (!config) continue;
      for (const file of configFiles(config)) {
        checked += 1;
        if (!rootFiles.has(file)) missing.push(`${file} (checked by ${relative(WORKSPACE_ROOT, config)})`);
      }
    }
    expect(missing, `add their directories to ${ROOT_CHECK_CONFIG}'s include`).toEqual([]);
    // A reading that found no package configuration would pass; the workspace has hundreds of checked files.
    expect(checked).toBeGreaterThan(500);
  });

  test('holds nothing built or installed', () => {
    const stray = [...rootFiles].filter((file) => /(^|\/)(dist|node_modules)\//.test(file));
    expect(stray).toEqual([]);
  });
});
