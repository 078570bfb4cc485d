import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

interface PackageJson {
  name: string;
  version: string;
  private?: boolean;
  exports?: Record<string, string | Record<string, string>>;
  files?: string[];
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  engines?: { node?: string };
  license?: string;
  repository?: unknown;
  homepage?: string;
  bugs?: unknown;
}

interface Publishable {
  dir: string;
  manifest: PackageJson;
}

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

const publishable: Publishable[] = readdirSync(join(ROOT, 'packages'))
  .map((name) => join(ROOT, 'packages', name))
  .filter((dir) => existsSync(join(dir, 'package.json')))
  .map((dir) => ({ dir, manifest: readJson<PackageJson>(join(dir, 'package.json')) }))
  .filter(({ manifest }) => manifest.private !== true);

function run(command: string, args: readonly string[], cwd: string): string {
  try {
    return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const detail = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${command} ${args.join(' ')} (in ${cwd}) failed: ${detail.message}\n${detail.stdout ?? ''}${detail.stderr ?? ''}`,
      {
        cause: error,
      },
    );
  }
}

/** Every file an `exports` entry points at, with the condition it is reached through. */
function exportTargets(manifest: PackageJson): { subpath: string; condition: string; file: string }[] {
  return Object.entries(manifest.exports ?? {}).flatMap(([subpath, target]) =>
    typeof target === 'string'
      ? [{ subpath, condition: 'default', file: target }]
      : Object.entries(target).map(([condition, file]) => ({ subpath, condition, file })),
  );
}

const work = mkdtempSync(join(tmpdir(), 'tally-pack-'));
const tarballs = new Map<string, string>();
const contents = new Map<string, string[]>();
const packed = new Map<string, PackageJson>();
const consumer = join(work, 'consumer');

beforeAll(() => {
  const destination = join(work, 'tarballs');
  mkdirSync(destination);
  for (const { dir, manifest } of publishable) {
    const before = new Set(readdirSync(destination));
    run('pnpm', ['pack', '--pack-destination', destination], dir);
    const tarball = readdirSync(destination).find((file) => !before.has(file));
    if (!tarball) throw new Error(`pnpm pack wrote no tarball for ${manifest.name}`);
    const path = join(destination, tarball);
    tarballs.set(manifest.name, path);
    contents.set(manifest.name, run('tar', ['-tzf', path], work).split('\n').filter(Boolean));
    packed.set(manifest.name, JSON.parse(run('tar', ['-xzOf', path, 'package/package.json'], work)) as PackageJson);
  }
  // An empty project that installs the tarballs with npm, as a user of the published packages would.
  mkdirSync(consumer);
  writeFileSync(
    join(consumer, 'package.json'),
    JSON.stringify({ name: 'tally-consumer', version: '1.0.0', private: true, type: 'module' }, null, 2),
  );
  run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      '--prefer-offline',
      '--loglevel=error',
      ...tarballs.values(),
    ],
    consumer,
  );
});

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

describe.each(publishable.map(({ dir, manifest }) => ({ name: manifest.name, dir, manifest })))(
  '$name',
  ({ name, dir, manifest }) => {
    it('declares ESM exports with types, a files list, a Node >= 20 engine and a README', () => {
      expect(manifest.exports?.['.'], 'exports["."]').toBeTypeOf('object');
      const root = manifest.exports?.['.'] as Record<string, string>;
      expect(Object.keys(root)[0], 'types must come first').toBe('types');
      expect(root.types).toMatch(/\.d\.ts$/);
      expect(manifest.files).toContain('dist');
      expect(manifest.engines?.node).toMatch(/^>=20/);
      expect(existsSync(join(dir, 'README.md')), `${name} README.md`).toBe(true);
    });

    it('packs every exported file, README and LICENSE, and no tests, benchmarks or build metadata', () => {
      const files = contents.get(name) ?? [];
      expect(files).toContain('package/package.json');
      expect(files).toContain('package/README.md');
      expect(files).toContain('package/LICENSE');
      for (const target of exportTargets(manifest)) {
        expect(files, `${target.subpath} (${target.condition}) → ${target.file}`).toContain(
          `package/${target.file.replace(/^\.\//, '')}`,
        );
      }
      expect(
        files.filter(
          (file) =>
            /^package\/(test|bench)\//.test(file) || /\.test\.(js|ts)$/.test(file) || file.endsWith('.tsbuildinfo'),
        ),
      ).toEqual([]);
    });

    it('ships the sources every source map and declaration map points at', () => {
      const files = new Set(contents.get(name) ?? []);
      const maps = [...files].filter((file) => file.endsWith('.map'));
      expect(maps.length, 'source maps').toBeGreaterThan(0);
      const missing: string[] = [];
      for (const map of maps) {
        const { sources } = JSON.parse(run('tar', ['-xzOf', tarballs.get(name) ?? '', map], work)) as {
          sources: string[];
        };
        for (const source of sources) {
          const target = posix.normalize(posix.join(posix.dirname(map), source));
          if (!files.has(target)) missing.push(`${map} → ${source}`);
        }
      }
      expect(missing).toEqual([]);
    });

    it('carries the repository LICENSE (Apache-2.0, as declared) and repository, homepage and bugs', () => {
      expect(manifest.license).toBe('Apache-2.0');
      expect(readFileSync(join(dir, 'LICENSE'), 'utf8')).toBe(readFileSync(join(ROOT, 'LICENSE'), 'utf8'));
      expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toContain(
        'Apache License\n                           Version 2.0',
      );
      expect(manifest.repository).toEqual({
        type: 'git',
        url: 'git+https://github.com/tally-ipam/tally.git',
        directory: relative(ROOT, dir),
      });
      expect(manifest.homepage).toBe(`https://github.com/tally-ipam/tally/tree/main/${relative(ROOT, dir)}#readme`);
      expect(manifest.bugs).toEqual({ url: 'https://github.com/tally-ipam/tally/issues' });
    });

    it('replaces workspace: ranges with the real versions in the packed package.json', () => {
      const published = packed.get(name);
      const ranges = { ...published?.dependencies, ...published?.peerDependencies };
      expect(Object.entries(ranges).filter(([, range]) => range.startsWith('workspace:'))).toEqual([]);
      for (const [dependency, range] of Object.entries(ranges)) {
        const local = publishable.find((p) => p.manifest.name === dependency);
        if (local) expect(range, dependency).toBe(local.manifest.version);
      }
    });

    it('imports from the npm-installed tarball under Node 20 with the same API as the workspace build', () => {
      const script = `const m = await import(${JSON.stringify(name)}); console.log(JSON.stringify(Object.keys(m).sort()));`;
      const installed = JSON.parse(run(process.execPath, ['--input-type=module', '-e', script], consumer)) as string[];
      const workspace = JSON.parse(run(process.execPath, ['--input-type=module', '-e', script], dir)) as string[];
      expect(process.versions.node.split('.')[0]).toBe('20');
      expect(installed.length).toBeGreaterThan(0);
      expect(installed).toEqual(workspace);
    });
  },
);

it('runs the kubectl plugin from the npm-installed tarball as kubectl would: kubectl-tally on the bin path', () => {
  const bin = join(consumer, 'node_modules/.bin/kubectl-tally');
  expect(existsSync(bin), 'npm linked no kubectl-tally bin').toBe(true);
  expect(run(bin, ['--help'], consumer)).toContain('kubectl tally <command>');
  for (const command of ['pools', 'who', 'why', 'leaks']) {
    expect(run(bin, [command, '--help'], consumer)).toContain(`kubectl tally ${command}`);
  }
});

it('type-checks a consumer importing every package through its exported types', () => {
  const source = publishable
    .map(({ manifest }, index) => `import * as p${index} from '${manifest.name}';\nexport const x${index} = p${index};`)
    .join('\n');
  writeFileSync(join(consumer, 'index.ts'), `${source}\n`);
  writeFileSync(
    join(consumer, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2023',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: [],
      },
      files: ['index.ts'],
    }),
  );
  expect(run(process.execPath, [TSC, '-p', 'tsconfig.json'], consumer)).toBe('');
});

/** Every importable specifier of the publishable packages: the root and each code subpath (`./package.json` aside). */
const specifiers = publishable.flatMap(({ manifest }) =>
  Object.keys(manifest.exports ?? {})
    .filter((subpath) => subpath !== './package.json')
    .map((subpath) => (subpath === '.' ? manifest.name : `${manifest.name}${subpath.slice(1)}`)),
);

it('imports every subpath of controller-kit from the npm-installed tarball under Node 20 with the workspace build’s names', () => {
  const subpaths = specifiers.filter((specifier) => specifier.startsWith('@tally-ipam/controller-kit/'));
  expect(subpaths.length, 'subpath exports of controller-kit').toBeGreaterThan(0);
  const script = `const names = {}; for (const s of ${JSON.stringify(subpaths)}) names[s] = Object.keys(await import(s)).sort(); console.log(JSON.stringify(names));`;
  const installed = JSON.parse(run(process.execPath, ['--input-type=module', '-e', script], consumer)) as Record<
    string,
    string[]
  >;
  const workspace = JSON.parse(
    run(process.execPath, ['--input-type=module', '-e', script], join(ROOT, 'packages/controller-kit')),
  ) as Record<string, string[]>;
  for (const specifier of subpaths) expect(installed[specifier]?.length, specifier).toBeGreaterThan(0);
  expect(installed).toEqual(workspace);
});

it.each([
  { module: 'node16', moduleResolution: 'node16' },
  { module: 'esnext', moduleResolution: 'bundler' },
])('resolves the types of every export, subpaths included, under moduleResolution $moduleResolution', (resolution) => {
  // Inside the consumer, so that resolution walks up to its node_modules and goes through the packed `exports`.
  const project = join(consumer, `resolution-${resolution.moduleResolution}`);
  mkdirSync(project, { recursive: true });
  const source = specifiers
    .map((specifier, index) => `import * as s${index} from '${specifier}';\nexport const x${index} = s${index};`)
    .join('\n');
  writeFileSync(join(project, 'index.ts'), `${source}\n`);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'resolution', private: true, type: 'module' }));
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        ...resolution,
        target: 'es2023',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: [],
      },
      files: ['index.ts'],
    }),
  );
  expect(run(process.execPath, [TSC, '-p', 'tsconfig.json'], project)).toBe('');
});

/** Libraries whose types the packages' declarations expose (and, for prom-client, whose global registry is shared). */
const SHARED_LIBRARIES = ['@kubernetes/client-node', 'zod', 'pino', 'prom-client'] as const;

function lowestOf(range: string, what: string): string {
  const match = /^\^(\d+\.\d+\.\d+)$/.exec(range);
  if (!match?.[1]) throw new Error(`${what}: peer range "${range}" is not of the form ^MAJOR.MINOR.PATCH`);
  return match[1];
}

it('takes every library its declarations expose as a peer dependency with a caret range, never as a dependency', () => {
  for (const { manifest } of publishable) {
    const declarations = (contents.get(manifest.name) ?? []).filter((file) => file.endsWith('.d.ts'));
    const text = declarations
      .map((file) => run('tar', ['-xzOf', tarballs.get(manifest.name) ?? '', file], work))
      .join('\n');
    for (const library of SHARED_LIBRARIES) {
      const exposed = text.includes(`from '${library}'`) || text.includes(`import('${library}')`);
      if (!exposed) continue;
      expect(manifest.dependencies?.[library], `${manifest.name} dependencies.${library}`).toBeUndefined();
      expect(manifest.peerDependencies?.[library], `${manifest.name} peerDependencies.${library}`).toMatch(
        /^\^\d+\.\d+\.\d+$/,
      );
    }
  }
});

it('type-checks the shipped sources against the lowest version of every peer range', () => {
  const lowest = new Map<string, string>();
  for (const { manifest } of publishable) {
    for (const [library, range] of Object.entries(manifest.peerDependencies ?? {})) {
      if (library === 'vitest') continue; // testenv's optional peer; its own range is checked by the install
      const version = lowestOf(range, `${manifest.name} → ${library}`);
      const other = lowest.get(library);
      expect(other === undefined || other === version, `${library}: one lower bound across packages`).toBe(true);
      lowest.set(library, version);
    }
  }
  expect([...lowest.keys()].sort()).toEqual([...SHARED_LIBRARIES].sort());
  const project = join(work, 'lowest-peers');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'lowest-peers', private: true, type: 'module' }));
  // No --legacy-peer-deps: npm refuses the install if a lowest version falls outside a range.
  run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      '--prefer-offline',
      '--loglevel=error',
      ...tarballs.values(),
      ...[...lowest].map(([library, version]) => `${library}@${version}`),
      '@types/node@20.19.43',
      '@types/proper-lockfile@4.1.4',
      'vitest@4.1.12',
    ],
    project,
  );
  const base = readJson<{ compilerOptions: Record<string, unknown> }>(join(ROOT, 'tsconfig.base.json'));
  // The repository's strictness, without its build settings.
  const compilerOptions: Record<string, unknown> = { ...base.compilerOptions, noEmit: true };
  for (const build of ['composite', 'incremental', 'declaration', 'declarationMap', 'sourceMap']) {
    delete compilerOptions[build];
  }
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions,
      include: ['node_modules/@tally-ipam/*/src/**/*.ts'],
    }),
  );
  expect(run(process.execPath, [TSC, '-p', 'tsconfig.json'], project)).toBe('');
});
