// The checks on a small made-up workspace: one planted violation per rule, so every rule is known to fail when
// it should (and to stay quiet on a workspace that keeps the rules).
import { describe, expect, test } from 'vitest';
import { checkWorkspace, type Rules, type Violation } from '../src/check.js';
import { renderImportTable } from '../src/doc.js';
import type { PackageRule } from '../src/rules.js';
import { fileContext, type Workspace, type WorkspacePackage } from '../src/workspace.js';

interface FakePackage {
  name: string;
  dir: string;
  dependencies?: string[];
  devDependencies?: string[];
  exports?: string[];
  /** [file inside the package, specifier] */
  imports?: [string, string][];
  fileReferences?: [string, string][];
}

function sites(dir: string, entries: [string, string][]): WorkspacePackage['imports'] {
  return entries.map(([fileInPackage, specifier]) => ({
    file: `${dir}/${fileInPackage}`,
    fileInPackage,
    context: fileContext(fileInPackage, dir),
    specifier,
    line: 1,
  }));
}

function fakeWorkspace(packages: FakePackage[]): Workspace {
  return {
    root: '/nowhere',
    rootDevDependencies: new Set(['vitest']),
    packages: packages.map((pkg) => ({
      name: pkg.name,
      dir: pkg.dir,
      private: false,
      description: undefined,
      declared: {
        dependencies: new Set(pkg.dependencies ?? []),
        peerDependencies: new Set<string>(),
        devDependencies: new Set(pkg.devDependencies ?? []),
      },
      hasTestScript: true,
      exportedSubpaths: new Set(pkg.exports ?? ['.']),
      imports: sites(pkg.dir, pkg.imports ?? []),
      fileReferences: sites(pkg.dir, pkg.fileReferences ?? []),
    })),
  };
}

const library = (shipped: string[], extra: Partial<PackageRule> = {}): PackageRule => ({
  role: 'library',
  purpose: 'a library',
  shipped,
  development: ['@x/testenv'],
  ...extra,
});

const rules: Rules = {
  packages: {
    '@x/allocator': library([], {
      development: [],
      forbiddenExternals: [{ prefix: '@kubernetes/', in: 'every file', why: 'pure' }],
    }),
    '@x/kit': library(['@x/allocator']),
    '@x/testenv': { role: 'test-support', purpose: 'control plane', shipped: [], development: [] },
    '@x/app': { role: 'app', purpose: 'an app', shipped: ['@x/kit'] },
    '@x/tool': { role: 'tool', purpose: 'a tool', shipped: [] },
  },
  exceptions: [],
};

/** A workspace that keeps every rule; each test below plants one violation into a copy of it. */
function cleanPackages(): FakePackage[] {
  return [
    { name: '@x/allocator', dir: 'packages/allocator', imports: [['src/index.ts', './ip.js']] },
    {
      name: '@x/kit',
      dir: 'packages/kit',
      dependencies: ['@x/allocator', '@kubernetes/client-node'],
      devDependencies: ['@x/testenv'],
      imports: [
        ['src/index.ts', '@x/allocator'],
        ['src/client.ts', '@kubernetes/client-node'],
        ['test/kit.test.ts', '@x/testenv'],
        ['test/kit.test.ts', 'vitest'],
        ['vitest.config.ts', '../../vitest.shared.ts'],
      ],
    },
    { name: '@x/testenv', dir: 'packages/testenv', exports: ['.', './vitest'] },
    {
      name: '@x/app',
      dir: 'apps/app',
      dependencies: ['@x/kit'],
      devDependencies: ['@x/testenv', '@x/tool'],
      imports: [
        ['src/main.ts', '@x/kit'],
        ['test/app.test.ts', '@x/testenv/vitest'],
        ['scripts/render.ts', '@x/tool'],
      ],
      fileReferences: [['src/main.ts', '../config/']],
    },
    { name: '@x/tool', dir: 'tools/tool', fileReferences: [['src/root.ts', '../../../']] },
  ];
}

function plant(change: (packages: FakePackage[]) => void): Violation[] {
  const packages = cleanPackages();
  change(packages);
  return checkWorkspace(fakeWorkspace(packages), rules);
}

function find(packages: FakePackage[], name: string): FakePackage {
  const pkg = packages.find((candidate) => candidate.name === name);
  if (pkg === undefined) throw new Error(`no fake package ${name}`);
  return pkg;
}

describe('checkWorkspace', () => {
  test('finds nothing in a workspace that keeps the rules', () => {
    expect(checkWorkspace(fakeWorkspace(cleanPackages()), rules)).toEqual([]);
  });

  test('an undeclared workspace import', () => {
    const violations = plant((packages) => {
      find(packages, '@x/kit').dependencies = ['@kubernetes/client-node'];
    });
    expect(violations.map((violation) => violation.rule)).toEqual(['declared-dependencies']);
    expect(violations[0]?.message).toContain('packages/kit/src/index.ts:1 (src) imports @x/allocator');
  });

  test('shipped code importing a package declared only in devDependencies', () => {
    const violations = plant((packages) => {
      const kit = find(packages, '@x/kit');
      kit.dependencies = ['@kubernetes/client-node'];
      kit.devDependencies = ['@x/testenv', '@x/allocator'];
    });
    expect(violations.map((violation) => violation.message)).toEqual([
      expect.stringContaining('declares @x/allocator only in devDependencies: add it to dependencies'),
    ]);
  });

  test('shipped code importing an external package that only the root declares', () => {
    const violations = plant((packages) => {
      find(packages, '@x/kit').imports?.push(['src/check.ts', 'vitest']);
    });
    expect(violations.map((violation) => violation.rule)).toEqual(['declared-dependencies']);
  });

  test("a tool's src/ may use what it declares in devDependencies (nobody installs a tool); an app's may not", () => {
    const violations = plant((packages) => {
      const tool = find(packages, '@x/tool');
      tool.devDependencies = ['yaml'];
      tool.imports?.push(['src/read.ts', 'yaml']);
      const app = find(packages, '@x/app');
      app.devDependencies?.push('yaml');
      app.imports?.push(['src/read.ts', 'yaml']);
    });
    expect(violations.map((violation) => violation.message)).toEqual([
      expect.stringContaining(
        'apps/app/src/read.ts:1 (src) imports yaml, but apps/app/package.json declares yaml only in devDependencies',
      ),
    ]);
  });

  test('a library shipping an import of testenv', () => {
    const violations = plant((packages) => {
      const kit = find(packages, '@x/kit');
      kit.dependencies?.push('@x/testenv');
      kit.imports?.push(['src/wait.ts', '@x/testenv']);
    });
    expect(violations.map((violation) => violation.rule)).toEqual(['allowed-imports']);
    expect(violations[0]?.message).toContain('@x/kit may import there only @x/allocator');
  });

  test('a library importing an app, even from a test', () => {
    const violations = plant((packages) => {
      const kit = find(packages, '@x/kit');
      kit.devDependencies?.push('@x/app');
      kit.imports?.push(['test/app.test.ts', '@x/app']);
    });
    expect(violations.map((violation) => violation.rule)).toContain('allowed-imports');
  });

  test('the allocator importing Kubernetes, even from a test', () => {
    const violations = plant((packages) => {
      const allocator = find(packages, '@x/allocator');
      allocator.devDependencies = ['@kubernetes/client-node'];
      allocator.imports?.push(['test/k8s.test.ts', '@kubernetes/client-node']);
    });
    expect(violations.map((violation) => violation.rule)).toEqual(['forbidden-externals']);
  });

  test("a relative import into another package's src/", () => {
    const violations = plant((packages) => {
      find(packages, '@x/app').imports?.push(['src/main.ts', '../../../packages/kit/src/index.js']);
    });
    expect(violations.map((violation) => violation.message)).toEqual([
      expect.stringContaining('leaves apps/app/ into packages/kit/: import @x/kit through its exports'),
    ]);
  });

  test('an import of a path the other package does not export (its dist/)', () => {
    const violations = plant((packages) => {
      find(packages, '@x/app').imports?.push(['src/main.ts', '@x/kit/dist/client.js']);
    });
    expect(violations.map((violation) => violation.rule)).toEqual(['no-reach-into-packages']);
  });

  test("a file path into a library's dist/, even from a test", () => {
    const violations = plant((packages) => {
      find(packages, '@x/tool').fileReferences?.push(['test/run.test.ts', '../../../packages/kit/dist/client.js']);
    });
    expect(violations.map((violation) => violation.message)).toEqual([
      expect.stringContaining(
        'names the path ../../../packages/kit/dist/client.js (packages/kit/dist/client.js), outside tools/tool/',
      ),
    ]);
  });

  test("a file path out of its package from shipped code, even into an app's folder", () => {
    const violations = plant((packages) => {
      find(packages, '@x/app').fileReferences?.push(['src/main.ts', '../../other/config/']);
    });
    expect(violations.map((violation) => violation.message)).toEqual([
      expect.stringContaining('outside apps/app/ from shipped code'),
    ]);
  });

  test("tests and tools may name an app's files (apps are run, not imported) and the workspace root", () => {
    const violations = plant((packages) => {
      find(packages, '@x/tool').fileReferences?.push(
        ['test/run.test.ts', '../../../apps/app/dist/main.js'],
        ['test/run.test.ts', '../../../'],
      );
      find(packages, '@x/tool').imports?.push(['test/summary.test.ts', '../../../scripts/summary.mjs']);
    });
    expect(violations).toEqual([]);
  });

  test('a relative import of a root file by anything but a tool, and any path out of the repository', () => {
    const violations = plant((packages) => {
      find(packages, '@x/kit').imports?.push(['test/summary.test.ts', '../../../scripts/summary.mjs']);
      find(packages, '@x/tool').fileReferences?.push(['test/run.test.ts', '../../../../elsewhere/']);
    });
    expect(violations.map((violation) => violation.message)).toEqual([
      expect.stringContaining('for a file of the workspace root (only tools read those)'),
      expect.stringContaining('(../elsewhere), outside tools/tool/'),
    ]);
  });

  test('a new package under tools/ without a rule is a tool; elsewhere it needs one', () => {
    const violations = plant((packages) => {
      packages.push(
        { name: '@x/new-tool', dir: 'tools/new-tool', dependencies: ['@x/kit'], imports: [['src/x.ts', '@x/kit']] },
        { name: '@x/new-lib', dir: 'packages/new-lib' },
      );
    });
    expect(violations.map((violation) => violation.message)).toEqual([
      expect.stringContaining('@x/new-lib has no rule'),
    ]);
  });

  test('a cycle through devDependencies', () => {
    const violations = plant((packages) => {
      find(packages, '@x/allocator').devDependencies = ['@x/kit'];
    });
    expect(violations.map((violation) => violation.message)).toEqual([
      expect.stringContaining('in a cycle (imports or package.json): @x/allocator, @x/kit'),
    ]);
  });

  test('a circle of imports between files of one src/, through a third file and a type-only import', () => {
    const violations = plant((packages) => {
      find(packages, '@x/allocator').imports?.push(
        ['src/ip.ts', './parse.js'],
        ['src/parse.ts', './format/index.js'],
        ['src/format/index.ts', '../ip.js'],
      );
    });
    expect(violations.map((violation) => violation.message)).toEqual([
      expect.stringContaining(
        'these files of packages/allocator/ import each other in a circle: src/format/index.ts, src/ip.ts, src/parse.ts ' +
          '(src/format/index.ts:1 imports ../ip.js; src/ip.ts:1 imports ./parse.js; src/parse.ts:1 imports ./format/index.js)',
      ),
    ]);
  });

  test('imports that only look circular: a file of another package, a test importing src/, a folder import', () => {
    const violations = plant((packages) => {
      find(packages, '@x/allocator').imports?.push(
        ['src/ip.ts', './format'],
        ['src/format/index.ts', './digits.js'],
        ['test/ip.test.ts', '../src/ip.js'],
        ['src/ip.ts', '../test/ip.test.js'],
      );
      find(packages, '@x/kit').imports?.push(['src/client.ts', './index.js']);
    });
    expect(violations.filter((violation) => violation.rule === 'no-file-cycles')).toEqual([]);
  });

  test('a known file circle is allowed as named; grown, it is reported; gone, its exception is', () => {
    const exception = {
      kind: 'file cycle' as const,
      from: '@x/allocator',
      to: '@x/allocator',
      files: ['src/a.ts', 'src/b.ts'],
      reason: 'planted',
      wayOut: 'none',
    };
    const excepted: Rules = { ...rules, exceptions: [exception] };
    const run = (imports: [string, string][]): string[] => {
      const packages = cleanPackages();
      find(packages, '@x/allocator').imports?.push(...imports);
      return checkWorkspace(fakeWorkspace(packages), excepted).map((violation) => violation.rule);
    };
    expect(
      run([
        ['src/a.ts', './b.js'],
        ['src/b.ts', './a.js'],
      ]),
    ).toEqual([]);
    expect(
      run([
        ['src/a.ts', './b.js'],
        ['src/b.ts', './c.js'],
        ['src/c.ts', './a.js'],
      ]),
    ).toEqual(['no-file-cycles', 'exceptions-in-use']);
    expect(run([['src/a.ts', './b.js']])).toEqual(['exceptions-in-use']);
  });

  test('a package without a rule, and a rule without a package', () => {
    const violations = plant((packages) => {
      find(packages, '@x/allocator').name = '@x/renamed-allocator';
    });
    expect(violations.filter((violation) => violation.rule === 'rules-cover-workspace')).toHaveLength(2);
  });

  test('a rule that breaks the layering, and an exception that does not', () => {
    const broken: Rules = {
      packages: { ...rules.packages, '@x/kit': library(['@x/allocator', '@x/app']) },
      exceptions: [{ kind: 'import', from: '@x/app', to: '@x/kit', files: ['src/'], reason: 'none', wayOut: 'none' }],
    };
    const violations = checkWorkspace(fakeWorkspace(cleanPackages()), broken).filter(
      (violation) => violation.rule === 'rules-fit-layers',
    );
    expect(violations.map((violation) => violation.message)).toEqual([
      expect.stringContaining('@x/kit (library) may not ship an import of @x/app (app)'),
      expect.stringContaining('the known exception @x/app → @x/kit fits the layering'),
    ]);
  });

  test('an exception allows its files only, and one no file needs any more is reported', () => {
    const excepted: Rules = {
      ...rules,
      exceptions: [
        { kind: 'import', from: '@x/app', to: '@x/testenv', files: ['src/demo/'], reason: 'demo', wayOut: 'none' },
      ],
    };
    const packages = cleanPackages();
    const app = find(packages, '@x/app');
    app.dependencies?.push('@x/testenv');
    app.imports?.push(['src/demo/run.ts', '@x/testenv'], ['src/main.ts', '@x/testenv']);
    const violations = checkWorkspace(fakeWorkspace(packages), excepted);
    expect(violations.map((violation) => violation.message)).toEqual([
      expect.stringContaining('apps/app/src/main.ts:1 (src) imports @x/testenv'),
    ]);
    expect(checkWorkspace(fakeWorkspace(cleanPackages()), excepted).map((violation) => violation.rule)).toEqual([
      'exceptions-in-use',
    ]);
  });
});

describe('the generated graph as it is (docs/ARCHITECTURE.md, imports)', () => {
  test('lists what each package imports, its src/ apart from its tests, from the sources, not the manifests', () => {
    const workspace = fakeWorkspace([
      ...cleanPackages().filter((pkg) => pkg.name !== '@x/app'),
      // Declared but never imported: not an edge of the graph as it is.
      {
        name: '@x/app',
        dir: 'apps/app',
        dependencies: ['@x/kit', '@x/allocator'],
        imports: [['src/main.ts', '@x/kit/client']],
      },
    ]);
    const table = renderImportTable(rules, workspace).split('\n');
    expect(table.slice(0, 2)).toEqual([
      '| package | its `src/` imports | its tests, benches, scripts also import |',
      '|---|---|---|',
    ]);
    expect(table).toContain('| `@x/kit` | `@x/allocator` | `@x/testenv` |');
    expect(table).toContain('| `@x/allocator` | nothing | — |');
    expect(table).toContain('| `@x/app` | `@x/kit` | — |');
  });
});
