/**
 * The workspace as data: its packages (from pnpm-workspace.yaml), what each declares in package.json, and the module
 * specifiers of its files (read by scan.ts). Nothing here loads TypeScript, so the checks and the documents can be
 * tested without it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, posix, sep } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

/** Where a file sits in its package decides what it may import: shipped code, or code that only runs in development. */
export type FileContext = 'src' | 'test' | 'bench' | 'scripts';

export const FILE_CONTEXTS: readonly FileContext[] = ['src', 'test', 'bench', 'scripts'];

export type DependencyKind = 'dependencies' | 'peerDependencies' | 'devDependencies';
export const ALL_KINDS: readonly DependencyKind[] = ['dependencies', 'peerDependencies', 'devDependencies'];

export interface ImportSite {
  /** Path relative to the workspace root, with forward slashes. */
  file: string;
  /** Path relative to the package's directory. */
  fileInPackage: string;
  context: FileContext;
  specifier: string;
  line: number;
}

export interface WorkspacePackage {
  name: string;
  /** Directory relative to the workspace root, with forward slashes (`packages/allocator`). */
  dir: string;
  private: boolean;
  description: string | undefined;
  declared: Readonly<Record<DependencyKind, ReadonlySet<string>>>;
  hasTestScript: boolean;
  /** The subpaths of its `exports` map (`.`, `./vitest`); undefined when it has none. */
  exportedSubpaths: ReadonlySet<string> | undefined;
  imports: readonly ImportSite[];
  /** Files named relative to the module (`new URL('../config/', import.meta.url)`); `specifier` holds the path. */
  fileReferences: readonly ImportSite[];
}

export interface Workspace {
  root: string;
  packages: readonly WorkspacePackage[];
  /** The root package.json's devDependencies: tools every package's tests and scripts may use (vitest, fast-check). */
  rootDevDependencies: ReadonlySet<string>;
}

const WorkspaceFile = z.object({ packages: z.array(z.string().min(1)).min(1) });

const DependencyMap = z.record(z.string(), z.string()).optional();
export const PackageJson = z.object({
  name: z.string().min(1),
  private: z.boolean().optional(),
  description: z.string().optional(),
  scripts: z.record(z.string(), z.string()).optional(),
  dependencies: DependencyMap,
  peerDependencies: DependencyMap,
  devDependencies: DependencyMap,
  exports: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
});

const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.git', '.turbo', 'coverage']);
const SOURCE_FILE = /\.(?:ts|mts|cts|tsx)$/;
const DECLARATION_FILE = /\.d\.(?:ts|mts|cts)$/;

export function toPosix(path: string): string {
  return path.split(sep).join('/');
}

export function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`cannot read ${path} as JSON: ${(error as Error).message}`);
  }
}

function cut(value: string, max = 60): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}

/** Expands pnpm-workspace.yaml's `packages` entries; only the two forms this repository uses (`dir/*` and `dir`). */
export function workspaceDirs(root: string): string[] {
  const path = join(root, 'pnpm-workspace.yaml');
  const parsed = WorkspaceFile.safeParse(parseYaml(readFileSync(path, 'utf8')));
  if (!parsed.success) throw new Error(`${path}: expected a non-empty "packages" list: ${parsed.error.message}`);
  const dirs: string[] = [];
  for (const entry of parsed.data.packages) {
    if (entry.startsWith('!')) throw new Error(`${path}: negated entry "${cut(entry)}" is not supported here`);
    if (entry.endsWith('/*') && !entry.slice(0, -2).includes('*')) {
      const base = entry.slice(0, -2);
      if (!existsSync(join(root, base))) continue;
      for (const name of readdirSync(join(root, base)).sort()) {
        if (existsSync(join(root, base, name, 'package.json'))) dirs.push(`${base}/${name}`);
      }
    } else if (!entry.includes('*')) {
      if (existsSync(join(root, entry, 'package.json'))) dirs.push(entry);
    } else {
      throw new Error(
        `${path}: packages entry "${cut(entry)}" uses a glob form this check does not expand (only dir/*)`,
      );
    }
  }
  return dirs;
}

/** The context of a file from its path inside its package: only `src/` ships; everything else is development. */
export function fileContext(fileInPackage: string, packageDir: string): FileContext {
  // e2e is nothing but tests, wherever its files sit.
  if (packageDir === 'e2e') return 'test';
  const top = fileInPackage.split('/')[0];
  if (top === 'src' || top === 'bench' || top === 'scripts') return top;
  // test/, vitest.config.ts and any other folder (fixtures, image helpers) only run in development.
  return 'test';
}

/** Files below `dir` whose name `accept`s, skipping installed and built folders (node_modules, dist, …), sorted. */
export function filesUnder(dir: string, accept: (name: string) => boolean): string[] {
  const files: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (SKIPPED_DIRS.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files.push(...filesUnder(path, accept));
    else if (accept(name)) files.push(path);
  }
  return files;
}

/** The TypeScript sources below `dir` (declaration files excluded). */
export function sourceFiles(dir: string): string[] {
  return filesUnder(dir, (name) => SOURCE_FILE.test(name) && !DECLARATION_FILE.test(name));
}

/** Package name → folder, for every package of the workspace. */
export function packageDirs(root: string): Map<string, string> {
  const dirs = new Map<string, string>();
  for (const dir of workspaceDirs(root)) {
    const path = join(root, dir, 'package.json');
    const manifest = PackageJson.safeParse(readJson(path));
    if (!manifest.success) throw new Error(`${path}: ${manifest.error.message}`);
    dirs.set(manifest.data.name, dir);
  }
  return dirs;
}

const NODE_BUILTINS = new Set(builtinModules);

/** `@scope/name/sub/path` → `@scope/name`; `name/sub` → `name`; undefined for relative, absolute and `node:` specifiers. */
export function packageNameOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) return undefined;
  if (NODE_BUILTINS.has(specifier.split('/')[0] ?? '')) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** The workspace path a relative (or absolute) import of `site` names, without a trailing slash. */
export function resolveInWorkspace(site: ImportSite): string {
  return site.specifier.startsWith('/')
    ? site.specifier
    : posix.normalize(posix.join(posix.dirname(site.file), site.specifier)).replace(/\/$/, '');
}
