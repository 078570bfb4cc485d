// The summary line of `npm test` (scripts/test-summary.mjs) on real vitest JSON reports: vitest runs on tiny fixture
// projects laid out like the workspace, each failing in its own way, and no failure may vanish from the count.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cpuBusyFraction,
  type FileDuration,
  loadAverageSummary,
  type ProjectCount,
  parseCpuTimes,
  readCpuTimes,
  slowestFiles,
  summarizeTestResults,
} from '../../../scripts/test-summary.mjs';

const run = promisify(execFile);
const vitestCli = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');

/** Fixture projects: files (test files use vitest's globals, so they import nothing). */
const FIXTURES: Record<string, Record<string, string>> = {
  passing: {
    // The pause gives the file a duration it cannot go below, however idle or busy the machine.
    'a.test.mjs':
      "it('one', () => new Promise((resolve) => setTimeout(resolve, 300)));\nit('two', () => { expect(1 + 1).toBe(2); });\n",
  },
  'failing-test': {
    'a.test.mjs': "it('passes', () => {});\nit('fails', () => { expect(1).toBe(2); });\n",
  },
  'syntax-error': {
    'a.test.mjs': "it('never loads', () => { const = 1; });\n",
    'b.test.mjs': "it('passes', () => {});\n",
  },
  'before-all-throws': {
    'a.test.mjs':
      "beforeAll(() => { throw new Error('no control plane'); });\nit('one', () => {});\nit('two', () => {});\n",
    'b.test.mjs': "it('passes', () => {});\n",
  },
  'after-all-throws': {
    'a.test.mjs': "afterAll(() => { throw new Error('cleanup failed'); });\nit('passes', () => {});\n",
  },
  'global-setup-throws': {
    'a.test.mjs': "it('never runs', () => {});\n",
    'vitest.config.mjs': "export default { test: { globalSetup: ['./setup.mjs'] } };\n",
    'setup.mjs': "export default function setup() { throw new Error('Go is not installed'); }\n",
  },
};

const root = mkdtempSync(join(tmpdir(), 'tally-summary-'));
let byName: Map<string, ProjectCount>;
let total: { passed: number; failed: number; files: number };
let durations: readonly FileDuration[];

function writeProject(name: string, files: Record<string, string>): string {
  const dir = join(root, 'packages', name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true, scripts: { test: 'vitest run' } }));
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}

beforeAll(async () => {
  for (const [name, files] of Object.entries(FIXTURES)) {
    const dir = writeProject(name, files);
    // Exit codes are not what is tested: only the report vitest leaves behind.
    await run(
      process.execPath,
      [vitestCli, 'run', '--root', dir, '--globals', '--reporter=json', '--outputFile=test-results.json'],
      { cwd: dir, env: { ...process.env, CI: '1' } },
    ).catch(() => undefined);
  }
  // A project whose run never finished (killed, crashed before vitest wrote a report).
  writeProject('no-report', { 'a.test.mjs': "it('would pass', () => {});\n" });
  // A workspace package without tests is not a test project.
  mkdirSync(join(root, 'packages', 'no-tests'), { recursive: true });
  writeFileSync(join(root, 'packages', 'no-tests', 'package.json'), JSON.stringify({ name: 'no-tests' }));

  const summary = summarizeTestResults(root);
  byName = new Map(summary.projects.map((project) => [project.name, project]));
  total = { passed: summary.passed, failed: summary.failed, files: summary.files };
  durations = summary.durations;
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

function counts(name: string): { passed: number; failed: number } {
  const project = byName.get(join('packages', name));
  if (!project) throw new Error(`no project packages/${name} in the summary`);
  return { passed: project.passed, failed: project.failed };
}

describe('npm test summary', () => {
  it('counts passing and failing tests as vitest reports them', () => {
    expect(counts('passing')).toEqual({ passed: 2, failed: 0 });
    expect(counts('failing-test')).toEqual({ passed: 1, failed: 1 });
  });

  it('names each failed test with its file and first failure line, so a log tail says what failed', () => {
    const problems = byName.get(join('packages', 'failing-test'))?.problems ?? [];
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^failed: failing-test\/a\.test\.mjs > fails: AssertionError: expected 1 to be 2/);
    expect(byName.get(join('packages', 'passing'))?.problems).toEqual([]);
  });

  it('counts a test file that did not load as one failed, next to the files that ran', () => {
    expect(counts('syntax-error')).toEqual({ passed: 1, failed: 1 });
  });

  it('counts the tests of a file whose beforeAll threw as failed, not skipped', () => {
    expect(counts('before-all-throws')).toEqual({ passed: 1, failed: 2 });
  });

  it('counts a file whose afterAll threw as failed even though its tests passed', () => {
    expect(counts('after-all-throws').failed).toBe(1);
  });

  it('counts a project whose global setup threw as one failed', () => {
    expect(counts('global-setup-throws')).toEqual({ passed: 0, failed: 1 });
  });

  it('counts a project that wrote no report as one failed, and ignores packages without tests', () => {
    expect(counts('no-report')).toEqual({ passed: 0, failed: 1 });
    expect(byName.has(join('packages', 'no-tests'))).toBe(false);
    expect(byName.get(join('packages', 'no-report'))?.problems.join('\n')).toMatch(/did not finish/);
  });

  it('never says 0 failed when any project failed to set up, load or finish', () => {
    for (const project of byName.values()) {
      if (project.name !== join('packages', 'passing')) {
        expect({ project: project.name, failedAtLeastOne: project.failed >= 1 }).toEqual({
          project: project.name,
          failedAtLeastOne: true,
        });
      }
    }
    expect(total).toEqual({ passed: 6, failed: 7, files: 6 });
  });
});

describe('where the time went', () => {
  it("gives every test file that ran its duration from its report's start and end times", () => {
    const of = (project: string): FileDuration[] =>
      durations.filter((each) => each.project === join('packages', project));
    // The file that paused 300 ms took at least that long; a file that did not load has no times to give.
    expect(of('passing').map(({ file }) => file)).toEqual(['passing/a.test.mjs']);
    expect(of('passing')[0]?.seconds).toBeGreaterThanOrEqual(0.3);
    expect(
      of('before-all-throws')
        .map(({ file }) => file)
        .sort(),
    ).toEqual(['before-all-throws/a.test.mjs', 'before-all-throws/b.test.mjs']);
    expect(of('no-report')).toEqual([]);
    for (const each of durations) expect(each.seconds).toBeGreaterThanOrEqual(0);
  });

  it('names the slowest files, slowest first', () => {
    const files = [
      { project: 'a', file: 'test/1.test.ts', seconds: 2 },
      { project: 'b', file: 'test/2.test.ts', seconds: 9.5 },
      { project: 'a', file: 'test/3.test.ts', seconds: 0.1 },
      { project: 'c', file: 'test/4.test.ts', seconds: 4 },
    ];
    expect(slowestFiles(files, 3).map(({ seconds }) => seconds)).toEqual([9.5, 4, 2]);
    expect(slowestFiles(files.slice(0, 1))).toEqual([files[0]]);
    expect(slowestFiles([])).toEqual([]);
  });

  it("reads the machine's busy CPU share from /proc/stat: idle and iowait are not busy, guest time is not counted twice", () => {
    const before = parseCpuTimes('cpu  100 0 50 800 50 0 0 0 30 0\ncpu0 50 0 25 400 25 0 0 0 15 0\n');
    const after = parseCpuTimes('cpu  400 0 150 900 50 0 0 0 90 0\ncpu0 200 0 75 450 25 0 0 0 45 0\n');
    expect(before).toEqual({ busy: 150, total: 1000 });
    expect(after).toEqual({ busy: 550, total: 1500 });
    expect(cpuBusyFraction(before, after)).toBeCloseTo(0.8);
    expect(cpuBusyFraction(after, after)).toBeUndefined();
    expect(cpuBusyFraction(undefined, after)).toBeUndefined();
    expect(parseCpuTimes('intr 1 2 3\n')).toBeUndefined();
    expect(parseCpuTimes('cpu  1 two 3 4\n')).toBeUndefined();
    expect(readCpuTimes('/nonexistent/stat')).toBeUndefined();
    // This machine is Linux: its own reading parses, and time only goes forward.
    const now = readCpuTimes();
    expect(now?.total).toBeGreaterThan(0);
    expect(now?.busy).toBeLessThanOrEqual(now?.total ?? 0);
  });

  it('sums up the sampled load averages as min, max and mean', () => {
    expect(loadAverageSummary([1, 4, 2.5])).toEqual({ samples: 3, min: 1, max: 4, mean: 2.5 });
    expect(loadAverageSummary([])).toBeUndefined();
  });
});
