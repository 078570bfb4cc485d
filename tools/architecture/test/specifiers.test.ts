// The two readers of a file: module specifiers (TypeScript's pre-processing scanner) and paths named relative to
// the module (`new URL(…, import.meta.url)`).
import { describe, expect, test } from 'vitest';
import { fileReferences, moduleSpecifiers } from '../src/scan.js';
import { fileContext, packageNameOf } from '../src/workspace.js';

const SAMPLE = [
  "import { a } from '@tally-ipam/allocator';",
  "import type { B } from '@tally-ipam/api-types';",
  "export * from './local.js';",
  "export { c } from '@tally-ipam/controller-kit/capi';",
  '// import { fake } from "@tally-ipam/in-a-comment";',
  'const text = "import { x } from \'@tally-ipam/in-a-string\'";',
  "const lazy = await import('@tally-ipam/testenv');",
  "type T = import('@tally-ipam/machinepool').Pool;",
  "const cjs = require('yaml');",
  "import side from 'node:fs';",
].join('\n');

describe('moduleSpecifiers', () => {
  test('finds imports, re-exports, dynamic imports, import types and require, with their lines', () => {
    expect(moduleSpecifiers(SAMPLE)).toEqual(
      expect.arrayContaining([
        { specifier: '@tally-ipam/allocator', line: 1 },
        { specifier: '@tally-ipam/api-types', line: 2 },
        { specifier: './local.js', line: 3 },
        { specifier: '@tally-ipam/controller-kit/capi', line: 4 },
        { specifier: '@tally-ipam/testenv', line: 7 },
        { specifier: '@tally-ipam/machinepool', line: 8 },
        { specifier: 'yaml', line: 9 },
        { specifier: 'node:fs', line: 10 },
      ]),
    );
  });

  test('is not fooled by comments and strings', () => {
    const specifiers = moduleSpecifiers(SAMPLE).map((entry) => entry.specifier);
    expect(specifiers).not.toContain('@tally-ipam/in-a-comment');
    expect(specifiers).not.toContain('@tally-ipam/in-a-string');
    expect(specifiers).toHaveLength(8);
  });
});

describe('fileReferences', () => {
  test('finds new URL(path, import.meta.url), a template by its static head', () => {
    const text = [
      "const a = new URL('../../apps/x/dist/main.js', import.meta.url);",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template literal is the input here
      'const b = new URL(`../config/rbac/${file}`, import.meta.url);',
      "const c = new URL('https://example.invalid/');",
      "const d = new URL('../elsewhere', base);",
    ].join('\n');
    expect(fileReferences('x.ts', text)).toEqual([
      { specifier: '../../apps/x/dist/main.js', line: 1 },
      { specifier: '../config/rbac/', line: 2 },
    ]);
  });
});

describe('packageNameOf and fileContext', () => {
  test('package names from specifiers; none for relative paths and Node built-ins', () => {
    expect(packageNameOf('@tally-ipam/testenv/vitest')).toBe('@tally-ipam/testenv');
    expect(packageNameOf('yaml/util')).toBe('yaml');
    expect(packageNameOf('./x.js')).toBeUndefined();
    expect(packageNameOf('node:fs')).toBeUndefined();
    expect(packageNameOf('fs')).toBeUndefined();
  });

  test('only src/ ships; bench/ and scripts/ are named; everything else, and all of e2e, is test', () => {
    expect(fileContext('src/demo/run-demo.ts', 'apps/ipam-controller')).toBe('src');
    expect(fileContext('bench/claims.bench.ts', 'apps/ipam-controller')).toBe('bench');
    expect(fileContext('vitest.config.ts', 'packages/allocator')).toBe('test');
    expect(fileContext('test/apps.ts', 'e2e')).toBe('test');
    expect(fileContext('image/thing.ts', 'tools/ship')).toBe('test');
  });
});
