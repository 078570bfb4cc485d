// `npm test -- --stress` (scripts/stress.mjs and its use in scripts/tally.mjs): the CPU hog starts for the test
// stages only, is bounded by its own limit and by its parent's life, and is stopped when the run ends. Nothing here
// is timed: a loop's limit is seen by the loop ending, a hog's work by its CPU time growing.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@tally-ipam/testenv';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_STRESS_MAX_SECONDS,
  startCpuHog,
  stressMaxSeconds,
  stressRequested,
} from '../../../scripts/stress.mjs';
import { repositoryRoot, runTestJob } from './fixture-tree.js';

const work = mkdtempSync(join(tmpdir(), 'tally-stress-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Whether a process runs: it exists and is no zombie (an orphan that ended waits for its new parent to reap it). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** User plus system CPU time of a process so far, in clock ticks (Linux /proc/<pid>/stat, fields 14 and 15). */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

describe('stress mode is asked for', () => {
  it('by --stress or TALLY_TEST_STRESS=1 (or true), and by nothing else', () => {
    expect(stressRequested(['--stress'], {})).toBe(true);
    expect(stressRequested([], { TALLY_TEST_STRESS: '1' })).toBe(true);
    expect(stressRequested([], { TALLY_TEST_STRESS: 'TRUE' })).toBe(true);
    expect(stressRequested([], {})).toBe(false);
    expect(stressRequested(['--stressed'], { TALLY_TEST_STRESS: '0' })).toBe(false);
    expect(stressRequested([], { TALLY_TEST_STRESS: '' })).toBe(false);
  });

  it('with a limit from TALLY_TEST_STRESS_MAX_SECONDS when that is a positive number', () => {
    expect(stressMaxSeconds({ TALLY_TEST_STRESS_MAX_SECONDS: '90' })).toBe(90);
    expect(stressMaxSeconds({})).toBe(DEFAULT_STRESS_MAX_SECONDS);
    expect(stressMaxSeconds({ TALLY_TEST_STRESS_MAX_SECONDS: '-1' })).toBe(DEFAULT_STRESS_MAX_SECONDS);
    expect(stressMaxSeconds({ TALLY_TEST_STRESS_MAX_SECONDS: 'soon' })).toBe(DEFAULT_STRESS_MAX_SECONDS);
  });
});

describe('the CPU hog', () => {
  it('runs one spin loop per worker, each using CPU, until stop() kills them', async () => {
    const hog = startCpuHog({ maxSeconds: 600, workers: 2 });
    try {
      expect(hog.pids).toHaveLength(2);
      expect(hog.running()).toBe(2);
      const first = hog.pids.map(cpuTicks);
      await waitFor('both spin loops to use CPU time', () =>
        hog.pids.every((pid, index) => cpuTicks(pid) > (first[index] as number)),
      );
    } finally {
      await hog.stop();
    }
    expect(hog.running()).toBe(0);
    expect(hog.pids.filter(alive)).toEqual([]);
    await hog.stop(); // a second stop is a no-op
  });

  it('ends by itself at its limit', async () => {
    const hog = startCpuHog({ maxSeconds: 1, workers: 1 });
    try {
      await waitFor('the spin loop to end at its 1 s limit', () => hog.running() === 0, { intervalMs: 50 });
      expect(hog.pids.filter(alive)).toEqual([]);
    } finally {
      await hog.stop();
    }
  });

  it('ends by itself when the process that started it is gone (a runner killed with SIGKILL)', async () => {
    const stressModule = join(repositoryRoot, 'scripts', 'stress.mjs');
    const runner = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { startCpuHog } = await import(${JSON.stringify(stressModule)});
         const hog = startCpuHog({ maxSeconds: 600, workers: 2 });
         console.log(JSON.stringify(hog.pids));
         setInterval(() => undefined, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const pids = await new Promise<number[]>((resolve, reject) => {
      runner.stdout.once('data', (chunk: Buffer) => resolve(JSON.parse(String(chunk)) as number[]));
      runner.once('exit', (code) => reject(new Error(`the runner exited (${code}) before starting the hog`)));
    });
    expect(pids).toHaveLength(2);
    expect(pids.filter(alive)).toEqual(pids);
    runner.kill('SIGKILL');
    try {
      await waitFor('the orphaned spin loops to end', () => pids.every((pid) => !alive(pid)), { intervalMs: 50 });
    } finally {
      for (const pid of pids.filter(alive)) process.kill(pid, 'SIGKILL');
    }
  });
});

describe('npm test -- --stress (scripts/tally.mjs in a fixture tree)', () => {
  const testsCall = (call: string): boolean => call.startsWith('exec turbo run test ');
  const lintCall = (call: string): boolean => call === 'run lint';
  const buildCall = (call: string): boolean => call.startsWith('exec turbo run build ');

  it('runs the hog beside the test stages only, says so in its output and stage table, and stops it', async () => {
    const run = await runTestJob({ work, name: 'stress', dockerStatus: 0, args: ['--stress'] });
    const siblingsAt = (which: (call: string) => boolean): number[] =>
      run.pnpmCalls.flatMap((call, index) => (which(call) ? [run.nodeSiblings[index] as number] : []));
    // Two spin loops while the tests, the kind lane and the checks beside them ran; none during the build (or any
    // stage before the tests).
    expect(siblingsAt(testsCall)).toEqual([2]);
    expect(siblingsAt((call) => call.includes('run test:kind'))).toEqual([2]);
    expect(siblingsAt(lintCall)).toEqual([2]);
    expect(siblingsAt(buildCall)).toEqual([0]);
    const announced = /stress mode: 2 CPU spin loops \(pids (\d+), (\d+)\) run beside the test stages/.exec(run.stdout);
    expect(announced, run.stdout).not.toBeNull();
    const pids = [Number(announced?.[1]), Number(announced?.[2])];
    expect(pids.filter(alive)).toEqual([]);
    expect(run.stdout).toContain('stress mode: the 2 CPU spin loops stopped');
    const table = run.stdout.slice(run.stdout.indexOf('\nstages ('));
    expect(table).toMatch(/^ {2}ok {5}tests .*\(under stress: CPU hog running\)$/m);
    expect(table).toMatch(
      /^ {2}ok {5}lint \(Biome\) +[\d.]+s( {2}CPU \d+% busy)? {2}\(under stress: CPU hog running\)$/m,
    );
    expect(table).toMatch(/^ {2}ok {5}build +[\d.]+s( {2}CPU \d+% busy)?$/m);
  });

  it('without --stress runs no hog and marks no stage (TALLY_TEST_STRESS=1 asks for it too)', async () => {
    const plain = await runTestJob({ work, name: 'plain', dockerStatus: 1 });
    expect(plain.nodeSiblings.every((count) => count === 0)).toBe(true);
    expect(plain.stdout).not.toContain('stress mode');
    expect(plain.stdout).not.toContain('under stress');
    const byEnv = await runTestJob({ work, name: 'by-env', dockerStatus: 1, env: { TALLY_TEST_STRESS: '1' } });
    expect(byEnv.pnpmCalls.flatMap((call, index) => (testsCall(call) ? [byEnv.nodeSiblings[index]] : []))).toEqual([2]);
  });

  it('closes with the slowest test files (none in this tree) and the load average during the run', async () => {
    const run = await runTestJob({ work, name: 'summary', dockerStatus: 1 });
    expect(run.stdout).toContain('\nslowest test files:\n');
    expect(run.stdout).toMatch(
      /^load average \(1 min\) during the run: min [\d.]+, max [\d.]+, mean [\d.]+ \(\d+ samples, \d+ cores\)$/m,
    );
  });
});
