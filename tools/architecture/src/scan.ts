/**
 * Reads the workspace from disk: every package's manifest and, with TypeScript's own scanner and parser, every module
 * specifier and every path named relative to a module in its TypeScript files.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import {
  fileContext,
  type ImportSite,
  PackageJson,
  readJson,
  sourceFiles,
  toPosix,
  type Workspace,
  type WorkspacePackage,
  workspaceDirs,
} from './workspace.js';

export interface Specifier {
  specifier: string;
  line: number;
}

/**
 * Every module specifier of one file, from TypeScript's pre-processing scanner: static imports and re-exports,
 * `import x = require()`, dynamic `import()`, `import('x')` types and `require('x')` calls. The scanner reads tokens
 * (strings and comments cannot fool it) and is several times faster than a full parse.
 */
export function moduleSpecifiers(text: string): Specifier[] {
  const { importedFiles } = ts.preProcessFile(text, true, true);
  const newlines: number[] = [];
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) newlines.push(at);
  return importedFiles.map((reference) => ({ specifier: reference.fileName, line: lineOf(newlines, reference.pos) }));
}

/** 1-based line of a position, by binary search over the positions of the newlines. */
function lineOf(newlines: readonly number[], position: number): number {
  let low = 0;
  let high = newlines.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (newlines[middle]! < position) low = middle + 1;
    else high = middle;
  }
  return low + 1;
}

/**
 * Paths a file names relative to itself: `new URL('<path>', import.meta.url)`, the ESM way to reach a file next to
 * the module. A template literal counts by its static head (`../config/rbac/${file}` → `../config/rbac/`).
 */
export function fileReferences(fileName: string, text: string): Specifier[] {
  if (!text.includes('import.meta.url')) return [];
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false);
  const found: Specifier[] = [];
  const isImportMetaUrl = (node: ts.Node | undefined): boolean =>
    node !== undefined &&
    ts.isPropertyAccessExpression(node) &&
    ts.isMetaProperty(node.expression) &&
    node.expression.keywordToken === ts.SyntaxKind.ImportKeyword &&
    node.name.text === 'url';
  const visit = (node: ts.Node): void => {
    if (
      ts.isNewExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'URL' &&
      node.arguments?.length === 2 &&
      isImportMetaUrl(node.arguments[1])
    ) {
      const first = node.arguments[0]!;
      const path = ts.isStringLiteralLike(first)
        ? first.text
        : ts.isTemplateExpression(first)
          ? first.head.text
          : undefined;
      if (path !== undefined) {
        const line = source.getLineAndCharacterOfPosition(first.getStart(source)).line + 1;
        found.push({ specifier: path, line });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function exportedSubpaths(exportsField: string | Record<string, unknown> | undefined): Set<string> | undefined {
  if (exportsField === undefined) return undefined;
  if (typeof exportsField === 'string') return new Set(['.']);
  const keys = Object.keys(exportsField);
  // A conditions-only map (`{ "types": …, "default": … }`) describes `.` alone.
  return keys.every((key) => key.startsWith('.')) ? new Set(keys) : new Set(['.']);
}

function readPackage(root: string, dir: string): WorkspacePackage {
  const manifestPath = join(root, dir, 'package.json');
  const parsed = PackageJson.safeParse(readJson(manifestPath));
  if (!parsed.success)
    throw new Error(`${manifestPath}: not a package manifest this check understands: ${parsed.error.message}`);
  const manifest = parsed.data;
  const imports: ImportSite[] = [];
  const references: ImportSite[] = [];
  for (const path of sourceFiles(join(root, dir))) {
    const fileInPackage = toPosix(relative(join(root, dir), path));
    const context = fileContext(fileInPackage, dir);
    const text = readFileSync(path, 'utf8');
    const file = `${dir}/${fileInPackage}`;
    for (const { specifier, line } of moduleSpecifiers(text)) {
      imports.push({ file, fileInPackage, context, specifier, line });
    }
    for (const { specifier, line } of fileReferences(path, text)) {
      references.push({ file, fileInPackage, context, specifier, line });
    }
  }
  return {
    name: manifest.name,
    dir,
    private: manifest.private === true,
    description: manifest.description,
    declared: {
      dependencies: new Set(Object.keys(manifest.dependencies ?? {})),
      peerDependencies: new Set(Object.keys(manifest.peerDependencies ?? {})),
      devDependencies: new Set(Object.keys(manifest.devDependencies ?? {})),
    },
    hasTestScript: typeof manifest.scripts?.test === 'string',
    exportedSubpaths: exportedSubpaths(manifest.exports),
    imports,
    fileReferences: references,
  };
}

/** Reads the whole workspace under `root`. */
export function readWorkspace(root: string): Workspace {
  const rootManifest = PackageJson.safeParse(readJson(join(root, 'package.json')));
  if (!rootManifest.success) throw new Error(`${join(root, 'package.json')}: ${rootManifest.error.message}`);
  return {
    root,
    packages: workspaceDirs(root).map((dir) => readPackage(root, dir)),
    rootDevDependencies: new Set(Object.keys(rootManifest.data.devDependencies ?? {})),
  };
}
