// `npm test`'s kind-lane decision (scripts/tally.mjs): the lane runs only when `docker info` answers; without an engine
// one loud line says it did not run. The real script runs in a fixture tree laid out like the repository (its own
// copy of scripts/, an e2e package with the lane's scripts), with `pnpm` and `docker` stubs first on PATH that log
// their arguments: the stubs answer every install, build and test stage, so only the decision is exercised.
import { execFile } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../../', import.meta.url));
const pinnedPnpm = String(
  (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { packageManager: string }).packageManager.split(
    '@',
  )[1],
);
const work = mkdtempSync(join(tmpdir(), 'tally-kind-lane-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const NOT_RUN_LINE = 'kind lane: NOT RUN — no Docker engine answers (docker info failed)';

interface LaneRun {
  readonly stdout: string;
  readonly pnpmCalls: readonly string[];
  readonly dockerCalls: readonly string[];
}

function writeExecutable(path: string, text: string): void {
  writeFileSync(path, text);
  chmodSync(path, 0o755);
}

/** Runs `node scripts/tally.mjs test` in a fresh fixture tree whose `docker info` exits `dockerStatus`. */
async function runTestJob(name: string, dockerStatus: number): Promise<LaneRun> {
  const tree = join(work, name);
  const bin = join(tree, 'stub-bin');
  mkdirSync(bin, { recursive: true });
  cpSync(join(root, 'scripts'), join(tree, 'scripts'), { recursive: true });
  writeFileSync(
    join(tree, 'package.json'),
    JSON.stringify({ name: 'fixture', private: true, packageManager: `pnpm@${pinnedPnpm}` }),
  );
  writeFileSync(join(tree, 'pnpm-workspace.yaml'), 'packages:\n  - e2e\n');
  mkdirSync(join(tree, 'e2e', 'kind'), { recursive: true });
  writeFileSync(
    join(tree, 'e2e', 'package.json'),
    JSON.stringify({
      name: '@tally-ipam/e2e',
      private: true,
      scripts: { 'prepare:kind': 'exit 0', 'test:kind': 'exit 0' },
    }),
  );
  // `prepare --capi` is a plain node command, not a pnpm one: an answering stand-in.
  mkdirSync(join(tree, 'packages', 'testenv', 'dist'), { recursive: true });
  writeFileSync(join(tree, 'packages', 'testenv', 'dist', 'cli.js'), '');
  const pnpmLog = join(tree, 'pnpm.log');
  const dockerLog = join(tree, 'docker.log');
  writeExecutable(
    join(bin, 'pnpm'),
    `#!/bin/sh\necho "$*" >> '${pnpmLog}'\n[ "$1" = --version ] && echo '${pinnedPnpm}'\nexit 0\n`,
  );
  writeExecutable(join(bin, 'docker'), `#!/bin/sh\necho "$*" >> '${dockerLog}'\nexit ${dockerStatus}\n`);
  const { stdout } = await run(process.execPath, [join(tree, 'scripts', 'tally.mjs'), 'test'], {
    cwd: tree,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` },
  }).catch((error: { stdout?: string; stderr?: string; code?: number }) => {
    // A non-zero exit is the summary's business (a lane that ran here wrote no report); the output is what is tested.
    if (error.stdout === undefined) throw error;
    return { stdout: error.stdout };
  });
  const lines = (path: string): string[] =>
    existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
  return { stdout, pnpmCalls: lines(pnpmLog), dockerCalls: lines(dockerLog) };
}

const laneCall = (script: string): string => `--filter @tally-ipam/e2e run ${script}`;

describe('npm test without a Docker engine', () => {
  it('prints the loud NOT RUN line and runs neither the lane nor its prepare step', async () => {
    const lane = await runTestJob('no-engine', 1);
    expect(lane.dockerCalls).toEqual(['info']);
    expect(lane.stdout.split('\n')).toContain(NOT_RUN_LINE);
    expect(lane.pnpmCalls.filter((call) => call.includes('test:kind') || call.includes('prepare:kind'))).toEqual([]);
    // The run itself went on to the main tests: the decision, not an early failure, kept the lane out.
    expect(lane.pnpmCalls.some((call) => call.startsWith('exec turbo run test'))).toBe(true);
  });

  it('with an engine answering, the same tree runs the lane and prints no NOT RUN line (the stub decides)', async () => {
    const lane = await runTestJob('engine', 0);
    expect(lane.dockerCalls).toEqual(['info']);
    expect(lane.stdout).not.toContain('kind lane: NOT RUN');
    expect(lane.pnpmCalls).toContain(laneCall('prepare:kind'));
    expect(lane.pnpmCalls).toContain(laneCall('test:kind'));
  });
});

describe('the kind lane hack scripts', () => {
  const scripts = readdirSync(join(root, 'apps'))
    .filter((app) => existsSync(join(root, 'apps', app, 'hack')))
    .flatMap((app) =>
      readdirSync(join(root, 'apps', app, 'hack'))
        .filter((file) => file.endsWith('.sh'))
        .map((file) => join('apps', app, 'hack', file)),
    );

  it('apps/*/hack/*.sh exist (kind-e2e.sh among them) and parse (bash -n)', async () => {
    expect(scripts).toContain(join('apps', 'ipam-controller', 'hack', 'kind-e2e.sh'));
    for (const script of scripts) {
      await expect(run('bash', ['-n', join(root, script)]), script).resolves.toEqual({ stdout: '', stderr: '' });
    }
  });
});
