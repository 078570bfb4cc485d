// The real repository held to the rules of src/rules.ts. Each rule is one test, so a failure names the rule and
// lists every offending file and line.
import { beforeAll, describe, expect, test } from 'vitest';
import {
  checkCoverage,
  checkExceptionsInUse,
  checkImports,
  checkNoCycles,
  checkNoFileCycles,
  checkNoReach,
  checkRulesFitLayers,
  effectiveRules,
  type Rules,
  type Violation,
} from '../src/check.js';
import { WORKSPACE_ROOT } from '../src/paths.js';
import { KNOWN_EXCEPTIONS, PACKAGE_RULES } from '../src/rules.js';
import { readWorkspace } from '../src/scan.js';
import type { Workspace } from '../src/workspace.js';

let workspace: Workspace;
/** rules.ts, plus the default rule of any tool without an entry of its own. */
let rules: Rules;

beforeAll(() => {
  workspace = readWorkspace(WORKSPACE_ROOT);
  rules = effectiveRules(workspace, { packages: PACKAGE_RULES, exceptions: KNOWN_EXCEPTIONS });
});

function messages(violations: Violation[], rule: Violation['rule']): string[] {
  return violations.filter((violation) => violation.rule === rule).map((violation) => violation.message);
}

describe('the workspace', () => {
  test('is read whole: every package of pnpm-workspace.yaml, with its imports', () => {
    const dirs = workspace.packages.map((pkg) => pkg.dir);
    for (const dir of ['packages/allocator', 'packages/testenv', 'apps/ipam-controller', 'e2e', 'tools/architecture']) {
      expect(dirs).toContain(dir);
    }
    // A scanner that found nothing would pass every rule below; the libraries import each other hundreds of times.
    const workspaceImports = workspace.packages
      .flatMap((pkg) => pkg.imports)
      .filter((site) => site.specifier.startsWith('@tally-ipam/'));
    expect(workspaceImports.length).toBeGreaterThan(200);
  });

  test('every package has a rule and every rule a package', () => {
    expect(checkCoverage(workspace, rules)).toEqual([]);
  });

  test('the rules fit the layering (nothing imports an app or e2e, libraries ship no testenv or tool)', () => {
    expect(checkRulesFitLayers(rules)).toEqual([]);
  });

  test('every import of another package is declared in package.json, shipped code in dependencies', () => {
    expect(messages(checkImports(workspace, rules), 'declared-dependencies')).toEqual([]);
  });

  test('every import of a workspace package is an allowed edge (or a known exception)', () => {
    expect(messages(checkImports(workspace, rules), 'allowed-imports')).toEqual([]);
  });

  test('the allocator imports nothing from Kubernetes, api-types ships no Kubernetes client', () => {
    expect(messages(checkImports(workspace, rules), 'forbidden-externals')).toEqual([]);
  });

  test('no import or file path reaches into another package (src/, dist/, config/) except through its exports', () => {
    expect([
      ...messages(checkImports(workspace, rules), 'no-reach-into-packages'),
      ...messages(checkNoReach(workspace, rules), 'no-reach-into-packages'),
    ]).toEqual([]);
  });

  test('the package graph has no cycle', () => {
    expect(checkNoCycles(workspace)).toEqual([]);
  });

  test("no circle of imports between the files of a package's src/ (type-only imports count)", () => {
    expect(checkNoFileCycles(workspace, rules)).toEqual([]);
  });

  test('every known exception is still needed', () => {
    expect(checkExceptionsInUse(workspace, rules)).toEqual([]);
  });
});
