/**
 * The cycle rules: no circle of workspace packages, and none between the files of one package's `src/` (a named
 * known exception aside). Pure functions of the workspace model, like every check.
 */
import { posix } from 'node:path';
import type { Rules, Violation } from './violation.js';
import type { ImportSite, Workspace } from './workspace.js';
import { ALL_KINDS, packageNameOf, resolveInWorkspace } from './workspace.js';

/**
 * The strongly connected components of a directed graph with more than one node, or with one node that reaches
 * itself (Tarjan's algorithm), each sorted; the components in the order of their first node.
 */
export function cyclesOf(nodes: Iterable<string>, edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const lowLinks = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (node: string): void => {
    indices.set(node, index);
    lowLinks.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!indices.has(next)) {
        connect(next);
        lowLinks.set(node, Math.min(lowLinks.get(node)!, lowLinks.get(next)!));
      } else if (onStack.has(next)) {
        lowLinks.set(node, Math.min(lowLinks.get(node)!, indices.get(next)!));
      }
    }
    if (lowLinks.get(node) === indices.get(node)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || edges.get(node)?.has(node)) cycles.push(component.sort());
    }
  };
  for (const node of [...nodes].sort()) if (!indices.has(node)) connect(node);
  return cycles.sort((a, b) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : 0));
}

/** The package graph, every import and every declared workspace dependency, has no cycle. */
export function checkNoCycles(workspace: Workspace): Violation[] {
  const names = new Set(workspace.packages.map((pkg) => pkg.name));
  const edges = new Map<string, Set<string>>();
  for (const pkg of workspace.packages) {
    const targets = new Set<string>();
    for (const kind of ALL_KINDS) for (const name of pkg.declared[kind]) if (names.has(name)) targets.add(name);
    for (const site of pkg.imports) {
      const name = packageNameOf(site.specifier);
      if (name !== undefined && names.has(name)) targets.add(name);
    }
    targets.delete(pkg.name);
    edges.set(pkg.name, targets);
  }
  return cyclesOf(names, edges).map((cycle) => ({
    rule: 'no-cycles',
    message: `these packages depend on each other in a cycle (imports or package.json): ${cycle.join(', ')}`,
  }));
}

/** The emitted extension of a relative specifier → the source extensions it may name (`./x.js` is `./x.ts`). */
const SOURCE_EXTENSIONS: Readonly<Record<string, readonly string[]>> = {
  '.js': ['.ts', '.tsx', '.js'],
  '.mjs': ['.mts', '.mjs'],
  '.cjs': ['.cts', '.cjs'],
  '.jsx': ['.tsx', '.jsx'],
  '.ts': ['.ts'],
  '.mts': ['.mts'],
  '.cts': ['.cts'],
  '.tsx': ['.tsx'],
};

/** The file of `files` a relative import names: `./x.js` → `x.ts`, `./x` → `x.ts` or `x/index.ts`. */
function resolveFile(path: string, files: ReadonlySet<string>): string | undefined {
  const extension = posix.extname(path);
  const base = path.slice(0, path.length - extension.length);
  const candidates = [
    ...(SOURCE_EXTENSIONS[extension] ?? []).map((source) => `${base}${source}`),
    ...['.ts', '.tsx', '.mts'].flatMap((source) => [`${path}${source}`, `${path}/index${source}`]),
  ];
  return candidates.find((candidate) => files.has(candidate));
}

/** A circle of imports between files of one package's `src/`. */
export interface FileCycle {
  /** The package's directory (`packages/testenv`). */
  dir: string;
  name: string;
  /** The files of the circle, paths inside the package (`src/a.ts`), sorted. */
  files: string[];
  /** Each import that ties the circle: `src/a.ts:3 imports ./b.js`. */
  ties: string[];
}

/**
 * The circles of imports between the files of each package's `src/` (relative imports of type-only names count too:
 * a reader follows them the same way).
 */
export function fileCycles(workspace: Workspace): FileCycle[] {
  const cycles: FileCycle[] = [];
  for (const pkg of workspace.packages) {
    const sites = pkg.imports.filter(
      (site) => site.context === 'src' && (site.specifier.startsWith('./') || site.specifier.startsWith('../')),
    );
    const files = new Set(sites.map((site) => site.file));
    const edges = new Map<string, Set<string>>();
    /** "from → to" → the first import that makes the edge. */
    const firstSite = new Map<string, ImportSite>();
    for (const site of sites) {
      const target = resolveFile(resolveInWorkspace(site), files);
      if (target === undefined) continue;
      let targets = edges.get(site.file);
      if (targets === undefined) {
        targets = new Set();
        edges.set(site.file, targets);
      }
      targets.add(target);
      const edge = `${site.file} → ${target}`;
      if (!firstSite.has(edge)) firstSite.set(edge, site);
    }
    const inPackage = (file: string): string => file.slice(pkg.dir.length + 1);
    for (const cycle of cyclesOf(files, edges)) {
      const members = new Set(cycle);
      const ties = cycle.flatMap((file) =>
        [...(edges.get(file) ?? [])]
          .filter((target) => members.has(target))
          .sort()
          .map((target) => {
            const site = firstSite.get(`${file} → ${target}`)!;
            return `${inPackage(file)}:${site.line} imports ${site.specifier}`;
          }),
      );
      cycles.push({ dir: pkg.dir, name: pkg.name, files: cycle.map(inPackage), ties });
    }
  }
  return cycles;
}

export function sameFiles(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().every((file, index) => file === [...b].sort()[index]);
}

function isExceptedCycle(rules: Rules, cycle: FileCycle): boolean {
  return rules.exceptions.some(
    (entry) => entry.kind === 'file cycle' && entry.from === cycle.name && sameFiles(entry.files, cycle.files),
  );
}

/**
 * No two files of a package's `src/` import each other, directly or through others: shipped code reads from its entry
 * down, each file standing on the ones it imports. Type-only imports count too; what both sides of a circle need goes
 * into a file of its own that neither imports back (a deps or types file), or is handed in as a parameter. A known
 * exception names the exact files of one circle; a circle that grows is reported again.
 */
export function checkNoFileCycles(workspace: Workspace, rules: Rules): Violation[] {
  return fileCycles(workspace)
    .filter((cycle) => !isExceptedCycle(rules, cycle))
    .map((cycle) => ({
      rule: 'no-file-cycles',
      message:
        `these files of ${cycle.dir}/ import each other in a circle: ${cycle.files.join(', ')} (${cycle.ties.join('; ')}): ` +
        'move what both sides need into a file of its own that neither imports back, or hand it in as a parameter',
    }));
}
