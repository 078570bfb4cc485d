/**
 * The import rules evaluated over a workspace model: pure functions from (workspace, rules) to the list of
 * violations, so the same code checks the real repository and the planted violations of the tests.
 */
import { checkNoCycles, checkNoFileCycles, fileCycles, sameFiles } from './cycles.js';
import type { PackageRule, Role } from './rules.js';
import { defaultToolRule, LAYERS } from './rules.js';
import type { Rules, Violation } from './violation.js';
import type { DependencyKind, ImportSite, Workspace, WorkspacePackage } from './workspace.js';
import { ALL_KINDS, packageNameOf, resolveInWorkspace } from './workspace.js';

export { checkNoCycles, checkNoFileCycles, cyclesOf, type FileCycle, fileCycles } from './cycles.js';
export type { RuleId, Rules, Violation } from './violation.js';

const SHIPPED_KINDS: readonly DependencyKind[] = ['dependencies', 'peerDependencies'];

function where(site: ImportSite): string {
  return `${site.file}:${site.line}`;
}

function isDeclared(pkg: WorkspacePackage, name: string, kinds: readonly DependencyKind[]): boolean {
  return kinds.some((kind) => pkg.declared[kind].has(name));
}

function roleOf(rules: Rules, name: string): Role | undefined {
  return rules.packages[name]?.role;
}

/** The rules with an entry for every package under `tools/` that has none (see `defaultToolRule`). */
export function effectiveRules(workspace: Workspace, rules: Rules): Rules {
  const packages: Record<string, PackageRule> = { ...rules.packages };
  for (const pkg of workspace.packages) {
    if (packages[pkg.name] === undefined && pkg.dir.startsWith('tools/')) {
      packages[pkg.name] = defaultToolRule(pkg.description);
    }
  }
  return { ...rules, packages };
}

/** Every workspace package has a rule and every rule names a workspace package. */
export function checkCoverage(workspace: Workspace, rules: Rules): Violation[] {
  const names = new Set(workspace.packages.map((pkg) => pkg.name));
  const violations: Violation[] = [];
  for (const name of names) {
    if (rules.packages[name] === undefined) {
      violations.push({
        rule: 'rules-cover-workspace',
        message: `${name} has no rule in tools/architecture/src/rules.ts: give it a role and its allowed imports`,
      });
    }
  }
  for (const name of Object.keys(rules.packages)) {
    if (!names.has(name)) {
      violations.push({
        rule: 'rules-cover-workspace',
        message: `rules.ts has a rule for ${name}, which is not a workspace package: remove it`,
      });
    }
  }
  return violations;
}

/** The per-package rules only allow what their role's layer allows; exceptions are exactly what it does not. */
export function checkRulesFitLayers(rules: Rules): Violation[] {
  const violations: Violation[] = [];
  const fits = (from: string, to: string, context: 'shipped' | 'development'): boolean => {
    const fromRole = roleOf(rules, from);
    const toRole = roleOf(rules, to);
    return fromRole !== undefined && toRole !== undefined && LAYERS[fromRole][context].includes(toRole);
  };
  for (const [name, rule] of Object.entries(rules.packages)) {
    for (const to of [...(rule.shipped ?? []), ...(rule.scoped ?? []).map((edge) => edge.to)]) {
      if (!fits(name, to, 'shipped')) {
        violations.push({
          rule: 'rules-fit-layers',
          message: `${name} (${rule.role}) may not ship an import of ${to} (${roleOf(rules, to) ?? 'no rule'}): the ${rule.role} layer ships only ${LAYERS[rule.role].shipped.join(', ') || 'nothing from the workspace'}`,
        });
      }
    }
    for (const to of rule.development ?? []) {
      if (!fits(name, to, 'development') && !fits(name, to, 'shipped')) {
        violations.push({
          rule: 'rules-fit-layers',
          message: `${name} (${rule.role}) may not import ${to} (${roleOf(rules, to) ?? 'no rule'}) even in tests: the ${rule.role} layer allows ${LAYERS[rule.role].development.join(', ') || 'nothing'}`,
        });
      }
    }
  }
  for (const exception of rules.exceptions) {
    if (exception.kind === 'import' && fits(exception.from, exception.to, 'shipped')) {
      violations.push({
        rule: 'rules-fit-layers',
        message: `the known exception ${exception.from} → ${exception.to} fits the layering: make it a rule, not an exception`,
      });
    }
  }
  return violations;
}

function startsWithAny(path: string, prefixes: readonly string[]): boolean {
  return prefixes.some((prefix) => path.startsWith(prefix));
}

function allowedImport(rules: Rules, pkg: WorkspacePackage, site: ImportSite, target: string): boolean {
  const rule = rules.packages[pkg.name];
  if (rule === undefined) return false;
  const targetRole = roleOf(rules, target);
  if (rule.shipped === undefined) {
    if (targetRole !== undefined && LAYERS[rule.role].shipped.includes(targetRole)) return true;
  } else if (rule.shipped.includes(target)) {
    return true;
  }
  if ((rule.scoped ?? []).some((edge) => edge.to === target && startsWithAny(site.fileInPackage, edge.onlyFrom))) {
    return true;
  }
  const exception = rules.exceptions.some(
    (entry) =>
      entry.kind === 'import' &&
      entry.from === pkg.name &&
      entry.to === target &&
      startsWithAny(site.fileInPackage, entry.files),
  );
  if (exception) return true;
  if (site.context === 'src') return false;
  if (rule.development !== undefined) return rule.development.includes(target);
  return targetRole !== undefined && LAYERS[rule.role].development.includes(targetRole);
}

function describeAllowed(rules: Rules, name: string, context: ImportSite['context']): string {
  const rule = rules.packages[name];
  if (rule === undefined) return 'nothing (no rule)';
  const shipped = rule.shipped ?? LAYERS[rule.role].shipped.map((role) => `any ${role}`);
  if (context === 'src') return shipped.join(', ') || 'no workspace package';
  const development = rule.development ?? LAYERS[rule.role].development.map((role) => `any ${role}`);
  return [...shipped, ...development].join(', ') || 'no workspace package';
}

/**
 * Imports of workspace packages: declared in package.json with the right kind, allowed by the rules, and only
 * through the target's `exports`. External packages imported by shipped code must be runtime dependencies.
 */
export function checkImports(workspace: Workspace, rules: Rules): Violation[] {
  const byName = new Map(workspace.packages.map((pkg) => [pkg.name, pkg]));
  const violations: Violation[] = [];
  for (const pkg of workspace.packages) {
    for (const site of pkg.imports) {
      if (site.specifier.startsWith('#')) continue;
      const name = packageNameOf(site.specifier);
      if (name === undefined || name === pkg.name) continue;
      const target = byName.get(name);
      // What runs where the package is installed (a library's or an app's src/) needs runtime dependencies; a tool's
      // src/ is installed by nobody, so it is held to the development rule.
      const runtime = site.context === 'src' && rules.packages[pkg.name]?.role !== 'tool';
      const kinds = runtime ? SHIPPED_KINDS : ALL_KINDS;
      const declared =
        isDeclared(pkg, name, kinds) || (target === undefined && !runtime && workspace.rootDevDependencies.has(name));
      if (!declared) {
        const needed = runtime ? 'dependencies (or peerDependencies)' : 'its package.json';
        const actually = ALL_KINDS.find((kind) => pkg.declared[kind].has(name));
        violations.push({
          rule: 'declared-dependencies',
          message: `${where(site)} (${site.context}) imports ${site.specifier}, but ${pkg.dir}/package.json ${actually ? `declares ${name} only in ${actually}` : `does not declare ${name}`}: add it to ${needed}`,
        });
      }
      for (const forbidden of rules.packages[pkg.name]?.forbiddenExternals ?? []) {
        if (name.startsWith(forbidden.prefix) && (forbidden.in === 'every file' || site.context === 'src')) {
          violations.push({
            rule: 'forbidden-externals',
            message: `${where(site)} imports ${site.specifier}: ${pkg.name} may not import ${forbidden.prefix}… (${forbidden.why})`,
          });
        }
      }
      if (target === undefined) continue;
      if (!allowedImport(rules, pkg, site, name)) {
        violations.push({
          rule: 'allowed-imports',
          message: `${where(site)} (${site.context}) imports ${name}; ${pkg.name} may import there only ${describeAllowed(rules, pkg.name, site.context)}`,
        });
      }
      const subpath = `.${site.specifier.slice(name.length)}`;
      if (target.exportedSubpaths !== undefined && !target.exportedSubpaths.has(subpath)) {
        violations.push({
          rule: 'no-reach-into-packages',
          message: `${where(site)} imports ${site.specifier}, a path ${name} does not export (exports: ${[...target.exportedSubpaths].join(', ')})`,
        });
      }
    }
  }
  return violations;
}

function ownerOf(workspace: Workspace, path: string): WorkspacePackage | undefined {
  return workspace.packages.find((pkg) => path === pkg.dir || path.startsWith(`${pkg.dir}/`));
}

/**
 * Nothing reaches into another package by path. A relative import never does (import the package through its
 * exports); it may reach the workspace root's own files only as a tool (or a vitest.config.ts, for vitest.shared.ts).
 * A file named by path (`new URL('../x', import.meta.url)`) is never outside its package in shipped code (a tool's
 * src/ excepted: it is installed by nobody), and never
 * inside a library or testenv in any code (their files are reached through their exports); tests, e2e and tools
 * may name an app's files (apps export nothing: their built entry and config/ are what a test runs) and the root's.
 */
export function checkNoReach(workspace: Workspace, rules: Rules): Violation[] {
  const violations: Violation[] = [];
  const outsideRepository = (path: string): boolean => path === '..' || path.startsWith('../') || path.startsWith('/');
  for (const pkg of workspace.packages) {
    const role = roleOf(rules, pkg.name);
    for (const site of pkg.imports) {
      if (!site.specifier.startsWith('.') && !site.specifier.startsWith('/')) continue;
      const resolved = resolveInWorkspace(site);
      const owner = ownerOf(workspace, resolved);
      if (owner === pkg) continue;
      if (owner === undefined && !outsideRepository(resolved)) {
        if (role === 'tool') continue;
        if (resolved === 'vitest.shared.ts' && !site.fileInPackage.includes('/')) continue;
      }
      violations.push({
        rule: 'no-reach-into-packages',
        message: `${where(site)} imports ${site.specifier}, which leaves ${pkg.dir}/${owner ? ` into ${owner.dir}/: import ${owner.name} through its exports instead` : outsideRepository(resolved) ? ' and the repository' : ' for a file of the workspace root (only tools read those)'}`,
      });
    }
    for (const site of pkg.fileReferences) {
      const resolved = resolveInWorkspace(site);
      const owner = ownerOf(workspace, resolved);
      if (owner === pkg) continue;
      const ownerRole = owner === undefined ? undefined : roleOf(rules, owner.name);
      const intoExporter = ownerRole === 'library' || ownerRole === 'test-support';
      // A tool's src/ is private workspace tooling, not code anyone installs: it may read the workspace like a test.
      const development = site.context !== 'src' || role === 'tool';
      if (development && !intoExporter && !outsideRepository(resolved)) continue;
      const excepted = rules.exceptions.some(
        (entry) =>
          entry.kind === 'file reference' &&
          entry.from === pkg.name &&
          startsWithAny(site.fileInPackage, entry.files) &&
          `${resolved}/`.startsWith(entry.to),
      );
      if (excepted) continue;
      violations.push({
        rule: 'no-reach-into-packages',
        message: `${where(site)} names the path ${site.specifier} (${resolved}), outside ${pkg.dir}/${site.context === 'src' ? ' from shipped code, which must not depend on the repository layout' : ''}: reach another package's files through the package (its exports, or require.resolve of its package.json), not by path`,
      });
    }
  }
  return violations;
}

/** Every known exception is still needed: some file it names makes the import. */
export function checkExceptionsInUse(workspace: Workspace, rules: Rules): Violation[] {
  const cycles = rules.exceptions.some((exception) => exception.kind === 'file cycle') ? fileCycles(workspace) : [];
  return rules.exceptions
    .filter((exception) => {
      const pkg = workspace.packages.find((candidate) => candidate.name === exception.from);
      if (pkg === undefined) return true;
      if (exception.kind === 'file cycle') {
        return !cycles.some((cycle) => cycle.name === exception.from && sameFiles(cycle.files, exception.files));
      }
      if (exception.kind === 'import') {
        return !pkg.imports.some(
          (site) =>
            packageNameOf(site.specifier) === exception.to && startsWithAny(site.fileInPackage, exception.files),
        );
      }
      return !pkg.fileReferences.some(
        (site) =>
          startsWithAny(site.fileInPackage, exception.files) && `${resolveInWorkspace(site)}/`.startsWith(exception.to),
      );
    })
    .map((exception) => ({
      rule: 'exceptions-in-use',
      message:
        exception.kind === 'file cycle'
          ? `the known file circle of ${exception.from} (${exception.files.join(', ')}) is gone: remove it from rules.ts and regenerate docs/ARCHITECTURE.md`
          : `the known exception ${exception.from} → ${exception.to} (${exception.files.join(', ')}) is no longer used: remove it from rules.ts and regenerate docs/ARCHITECTURE.md`,
    }));
}

/** All the checks, in the order a reader fixes them. */
export function checkWorkspace(workspace: Workspace, declaredRules: Rules): Violation[] {
  const rules = effectiveRules(workspace, declaredRules);
  return [
    ...checkCoverage(workspace, rules),
    ...checkRulesFitLayers(rules),
    ...checkImports(workspace, rules),
    ...checkNoReach(workspace, rules),
    ...checkNoCycles(workspace),
    ...checkNoFileCycles(workspace, rules),
    ...checkExceptionsInUse(workspace, rules),
  ];
}
