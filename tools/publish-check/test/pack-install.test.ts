import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}) failed: ${detail.message}\n${detail.stderr ?? ''}`, {
      cause: error,
    });
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

    it('packs every exported file and README, and no tests or sources', () => {
      const files = contents.get(name) ?? [];
      expect(files).toContain('package/package.json');
      expect(files).toContain('package/README.md');
      for (const target of exportTargets(manifest)) {
        expect(files, `${target.subpath} (${target.condition}) → ${target.file}`).toContain(
          `package/${target.file.replace(/^\.\//, '')}`,
        );
      }
      expect(files.filter((file) => /^package\/(test|src|bench)\//.test(file) || file.endsWith('.test.js'))).toEqual(
        [],
      );
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
