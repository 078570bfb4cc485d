import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { type LocalRegistry, startLocalRegistry } from '../src/local-registry.js';
import { listWorkspaces, REPOSITORY_ROOT, run } from '../src/workspace.js';
import { copyTree } from './copy-tree.js';

const CHANGESET_BIN = join(REPOSITORY_ROOT, 'node_modules/@changesets/cli/bin.js');
const TSC = join(REPOSITORY_ROOT, 'node_modules/typescript/bin/tsc');
/** A client-node 1.x other than the workspace's (1.4.0): the lowest the peer range allows. */
const CONSUMER_CLIENT_NODE = '1.1.0';

const publishable = listWorkspaces(REPOSITORY_ROOT).filter((workspace) => !workspace.private);
const work = mkdtempSync(join(tmpdir(), 'tally-registry-test-'));
let registry: LocalRegistry;
let publishEnv: NodeJS.ProcessEnv;
let publishOutput = '';
const temporary: string[] = [];

const PublishedVersion = z.object({
  version: z.string(),
  dist: z.object({ tarball: z.string() }),
  dependencies: z.record(z.string(), z.string()).optional(),
  peerDependencies: z.record(z.string(), z.string()).optional(),
});

/** The environment of every npm/pnpm command that talks to the local registry: no inherited npm settings. */
function registryEnv(npmrc: string, url: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^npm_config_/i.test(key)) env[key] = value;
  }
  return { ...env, npm_config_userconfig: npmrc, npm_config_registry: url, 'npm_config_@tally-ipam:registry': url };
}

beforeAll(async () => {
  registry = await startLocalRegistry();
  const npmrc = join(work, 'publish.npmrc');
  writeFileSync(npmrc, `${registry.npmrcLines().join('\n')}\n`);
  publishEnv = registryEnv(npmrc, registry.url);
  // The guard before anything is published: both clients resolve the registry to the local one.
  for (const client of ['npm', 'pnpm']) {
    const configured = run(client, ['config', 'get', 'registry'], REPOSITORY_ROOT, publishEnv).trim();
    if (configured !== registry.url) throw new Error(`${client} would publish to ${configured}, not ${registry.url}`);
  }
  // changeset publish tags private packages in git even with --no-git-tag: it runs in a copy that is its own repository.
  const copy = copyTree(REPOSITORY_ROOT, 'tally-publish-');
  temporary.push(copy);
  for (const { dir } of publishable) {
    cpSync(join(REPOSITORY_ROOT, dir, 'dist'), join(copy, dir, 'dist'), { recursive: true });
    // pnpm publish reads the versions behind workspace: ranges from the package's node_modules.
    symlinkSync(join(REPOSITORY_ROOT, dir, 'node_modules'), join(copy, dir, 'node_modules'));
  }
  run('git', ['init', '-q'], copy);
  run('git', ['add', '-A'], copy);
  run(
    'git',
    ['-c', 'user.name=release-test', '-c', 'user.email=release-test@localhost', 'commit', '-qm', 'copy'],
    copy,
  );
  publishOutput = run(process.execPath, [CHANGESET_BIN, 'publish', '--no-git-tag'], copy, publishEnv);
}, 900_000);

afterAll(async () => {
  await registry?.stop();
  for (const dir of [work, ...temporary]) rmSync(dir, { recursive: true, force: true });
});

it('changeset publish puts every publishable package, at its workspace version, into the local registry only', () => {
  // Every library under packages/ is published (apps, e2e and tools are private): the list read must be exactly those.
  const libraries = readdirSync(join(REPOSITORY_ROOT, 'packages')).map(
    (dir) =>
      z
        .object({ name: z.string() })
        .parse(JSON.parse(readFileSync(join(REPOSITORY_ROOT, 'packages', dir, 'package.json'), 'utf8'))).name,
  );
  expect(publishable.map(({ name }) => name).sort()).toEqual(libraries.sort());
  for (const { name, version } of publishable) {
    const view = run('npm', ['view', `${name}@${version}`, '--json'], work, publishEnv);
    const published = PublishedVersion.parse(JSON.parse(view));
    expect(published.version, `${name}\n${publishOutput}`).toBe(version);
    expect(published.dist.tarball.startsWith(registry.url), published.dist.tarball).toBe(true);
    const ranges = { ...published.dependencies, ...published.peerDependencies };
    expect(Object.values(ranges).filter((range) => range.startsWith('workspace:'))).toEqual([]);
  }
});

it('installs them by name and version into an empty project on another client-node 1.x, which type-checks and runs an allocation and a Manager construction', () => {
  const consumer = join(work, 'consumer');
  mkdirSync(consumer);
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  // Only @tally-ipam comes from the local registry; the third-party packages from the user's usual registry.
  writeFileSync(join(consumer, '.npmrc'), `${registry.npmrcLines('@tally-ipam').join('\n')}\n`);
  run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      '--prefer-offline',
      '--loglevel=error',
      ...publishable.map(({ name, version }) => `${name}@${version}`),
      `@kubernetes/client-node@${CONSUMER_CLIENT_NODE}`,
      '@types/node@20.19.43',
    ],
    consumer,
  );
  // One client-node for the kit and the consumer (a peer dependency), so their KubeConfig types are the same.
  const copies = z
    .array(z.object({ version: z.string(), location: z.string() }))
    .parse(JSON.parse(run('npm', ['query', '[name="@kubernetes/client-node"]'], consumer)));
  expect(copies).toEqual([{ version: CONSUMER_CLIENT_NODE, location: 'node_modules/@kubernetes/client-node' }]);

  writeFileSync(
    join(consumer, 'index.ts'),
    [
      "import { KubeConfig } from '@kubernetes/client-node';",
      "import { AddressAllocator, buildAddressPool, formatIP } from '@tally-ipam/allocator';",
      "import { Manager } from '@tally-ipam/controller-kit';",
      '',
      "const pool = buildAddressPool({ addresses: ['10.0.0.0/24'], prefix: 24, gateway: '10.0.0.1' });",
      "const allocator = new AddressAllocator(pool, { strategy: 'LowestFree', reuseGracePeriodMs: 0, clock: () => 0 });",
      'const first: string = formatIP(allocator.allocate());',
      'const kubeConfig = new KubeConfig();',
      'kubeConfig.loadFromOptions({',
      "  clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: false }],",
      "  users: [{ name: 'u', token: 't' }],",
      "  contexts: [{ name: 'x', cluster: 'c', user: 'u' }],",
      "  currentContext: 'x',",
      '});',
      "const manager = new Manager({ kubeConfig, name: 'consumer' });",
      'console.log(JSON.stringify({ first, manager: manager.constructor.name, sameConfig: manager.kubeConfig === kubeConfig }));',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(consumer, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2023',
        strict: true,
        skipLibCheck: true,
        types: ['node'],
        outDir: 'out',
      },
      files: ['index.ts'],
    }),
  );
  expect(run(process.execPath, [TSC, '-p', 'tsconfig.json'], consumer)).toBe('');
  const printed = JSON.parse(run(process.execPath, ['out/index.js'], consumer)) as unknown;
  expect(printed).toEqual({ first: '10.0.0.2', manager: 'Manager', sameConfig: true });
  const installed = JSON.parse(
    readFileSync(join(consumer, 'node_modules/@tally-ipam/controller-kit/package.json'), 'utf8'),
  ) as { version: string };
  expect(installed.version).toBe(publishable.find((p) => p.name === '@tally-ipam/controller-kit')?.version);
});
