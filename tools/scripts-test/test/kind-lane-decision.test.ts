// `npm test`'s kind-lane decision (scripts/tally.mjs): the lane runs only when `docker info` answers; without an engine
// one loud line says it did not run. The real script runs in a fixture tree (fixture-tree.ts) whose `pnpm` and
// `docker` stubs answer every stage, so only the decision is exercised.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { repositoryRoot as root, runTestJob as runInTree, type TestJobRun } from './fixture-tree.js';

const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'tally-kind-lane-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const NOT_RUN_LINE = 'kind lane: NOT RUN — no Docker engine answers (docker info failed)';

/** Runs `node scripts/tally.mjs test` in a fresh fixture tree whose `docker info` exits `dockerStatus`. */
function runTestJob(name: string, dockerStatus: number): Promise<TestJobRun> {
  return runInTree({ work, name, dockerStatus });
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

describe('npm test runs the e2e suite beside the packages', () => {
  it('as a stream of its own: turbo runs only the test tasks (no rebuild) of every package but e2e, and e2e runs once', async () => {
    const lane = await runTestJob('streams', 1);
    const turboTests = lane.pnpmCalls.filter((call) => call.startsWith('exec turbo run test '));
    expect(turboTests).toHaveLength(1);
    expect(turboTests[0]).toContain('--only');
    expect(turboTests[0]).toContain('--filter=!@tally-ipam/e2e');
    expect(lane.pnpmCalls.filter((call) => call === '--filter @tally-ipam/e2e run test')).toHaveLength(1);
    // Each stream's output is marked with whose it is, and both are in the stage table.
    const table = lane.stdout.slice(lane.stdout.indexOf('\nstages ('));
    expect(table).toMatch(/^ {2}ok {5}tests +[\d.]+s/m);
    expect(table).toMatch(/^ {2}ok {5}tests: e2e +[\d.]+s/m);
  });
});

describe('the e2e files run once at the current Cluster API release', () => {
  const localE2e = (run: TestJobRun): string[] =>
    run.pnpmCalls.filter((call) => call === '--filter @tally-ipam/e2e run test');

  it('on the kind lane when it runs: not locally as well, and the summary says where they ran', async () => {
    const lane = await runTestJob('e2e-on-lane', 0);
    expect(lane.pnpmCalls).toContain(laneCall('test:kind'));
    expect(localE2e(lane)).toEqual([]);
    const lines = lane.stdout.split('\n');
    expect(lines).toContain('  e2e: its files ran on the kind lane (e2e/kind), not locally as well');
    // No report is expected of a run that did not happen: the e2e project is not counted as missing one.
    expect(lines.filter((line) => line.startsWith('  e2e: ') && line.includes('failed'))).toEqual([]);
    expect(lane.stdout).not.toMatch(/^ {2}ok {5}tests: e2e /m);
  });

  it('locally when the lane prepare fails (the lane then runs no test)', async () => {
    const lane = await runInTree({
      work,
      name: 'lane-prepare-failed',
      dockerStatus: 0,
      failing: { call: 'run prepare:kind', report: { path: 'prepare-kind.json', json: {} } },
    });
    expect(lane.pnpmCalls).not.toContain(laneCall('test:kind'));
    expect(localE2e(lane)).toHaveLength(1);
    expect(lane.stdout.split('\n')).toContain('kind lane: prepare: failed (output above): counted as 1 failed');
  });
});

describe("the lane's health record", () => {
  it('is printed under the lane results, restarts first, at most 12 lines and a count of the rest', async () => {
    const restarts = ['tally-ipam-system/tally-ipam-controller-1 manager: 2 restart(s), last OOMKilled (exit 137)'];
    const events = Array.from({ length: 14 }, (_, i) => `tally-ipam-system/pod-${i} Unhealthy ×${i + 1}: probe failed`);
    const lane = await runInTree({
      work,
      name: 'lane-health',
      dockerStatus: 0,
      writes: { call: 'run test:kind', path: 'e2e/kind/lane-health.json', json: { restarts, events } },
    });
    const lines = lane.stdout.split('\n');
    const at = lines.findIndex((line) => line.startsWith('  e2e/kind: '));
    expect(at).toBeGreaterThan(-1);
    // Under the lane's line, after its problems (the fixture's lane wrote no report): the health lines.
    const after = lines.slice(at + 1);
    const first = after.findIndex((line) => line.startsWith('    restarted: '));
    expect(after.slice(0, first).every((line) => line.startsWith('    no test-results.json'))).toBe(true);
    expect(after.slice(first, first + 14)).toEqual([
      `    restarted: ${restarts[0]}`,
      ...events.slice(0, 11).map((line) => `    event: ${line}`),
      '    … and 3 more in e2e/kind/lane-health.json',
      expect.not.stringMatching(/^ {4}/),
    ]);
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

describe('a test stage that exits non-zero with every test passed', () => {
  it('counts as one failed check (a global teardown that threw: the kind cluster left something behind)', async () => {
    const passing = {
      success: true,
      testResults: [
        {
          name: 'kind/test/node-image.test.ts',
          status: 'passed',
          startTime: 1,
          endTime: 2,
          assertionResults: [{ status: 'passed', fullName: 'the node image' }],
        },
      ],
    };
    const lane = await runInTree({
      work,
      name: 'teardown-threw',
      dockerStatus: 0,
      failing: { call: 'run test:kind', report: { path: 'e2e/kind/test-results.json', json: passing } },
    });
    const lines = lane.stdout.split('\n');
    expect(lines).toContain('  e2e/kind: 1 passed, 0 failed');
    expect(lines).toContain(
      'kind lane: tests (exited non-zero with no failed test): failed (output above): counted as 1 failed',
    );
    // The summary line counts it with the other failed checks (the fixture's kind prepare, which has no tools/kind).
    const checks = lines.filter((line) => line.endsWith(': counted as 1 failed')).length;
    expect(lines.filter((line) => /^\d+ passed, \d+ failed$/.test(line)).at(-1)).toBe(`1 passed, ${checks} failed`);
  });
});
