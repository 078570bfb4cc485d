// Sums vitest's JSON reports (test-results.json, one per test project) into one "N passed, N failed" line.
// Nothing that failed may vanish from the count:
//   - a test that failed counts as failed;
//   - in a test file that failed (a beforeAll or afterAll threw, the file did not load), every test that did not pass
//     counts as failed — vitest reports them as skipped — and a failed file with no such test counts as one;
//   - a project whose report says it did not succeed but shows no failure (global setup threw, an unhandled error)
//     counts as one;
//   - a project that wrote no report (its run did not finish) or an unreadable one counts as one.
// A test project is every workspace package with a `test` script.
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const workspaceDirs = ['packages', 'apps', 'tools'];
export const REPORT = 'test-results.json';

export function testProjects(root) {
  const candidates = [join(root, 'e2e')];
  for (const dir of workspaceDirs) {
    const base = join(root, dir);
    if (!existsSync(base)) continue;
    for (const name of readdirSync(base).sort()) candidates.push(join(base, name));
  }
  return candidates.filter((dir) => {
    const manifest = join(dir, 'package.json');
    return existsSync(manifest) && typeof JSON.parse(readFileSync(manifest, 'utf8')).scripts?.test === 'string';
  });
}

/** Removes every project's report, so the summary after a run can only count what that run wrote. */
export function removeTestResults(root, extraReports = []) {
  for (const dir of testProjects(root)) rmSync(join(dir, REPORT), { force: true });
  for (const file of extraReports) rmSync(file, { force: true });
}

function firstLine(text) {
  const line = String(text ?? '')
    .split('\n')
    .find((l) => l.trim());
  if (!line) return '';
  return line.length > 160 ? `${line.slice(0, 159)}…` : line;
}

/** The last two segments of a test file's path (`test/foo.test.ts`), enough to find it within its project. */
function shortPath(path) {
  if (typeof path !== 'string') return 'a test file';
  return path.split(/[\\/]/).slice(-2).join('/');
}

/**
 * Counts one vitest JSON report. Returns { passed, failed, problems }, where problems are one-line reasons for every
 * failure: each failed test by name, files that failed to load or set up, a run that did not succeed.
 */
export function countReport(report) {
  let passed = 0;
  let failed = 0;
  const problems = [];
  const files = Array.isArray(report?.testResults) ? report.testResults : [];
  for (const file of files) {
    const results = Array.isArray(file.assertionResults) ? file.assertionResults : [];
    const filePassed = results.filter((r) => r.status === 'passed').length;
    const fileFailedTests = results.filter((r) => r.status === 'failed').length;
    passed += filePassed;
    failed += fileFailedTests;
    // Each failed test is named, so a log that keeps only its tail still says which test failed and why.
    for (const result of results) {
      if (result.status !== 'failed') continue;
      const name = result.fullName ?? result.title ?? 'a test';
      const why = firstLine((result.failureMessages ?? [])[0]) || 'no message';
      problems.push(`failed: ${shortPath(file.name)} > ${name}: ${why}`);
    }
    if (file.status !== 'failed') continue;
    const notRun = results.length - filePassed - fileFailedTests;
    const extra = notRun > 0 ? notRun : fileFailedTests === 0 ? 1 : 0;
    if (extra > 0) {
      failed += extra;
      const what = notRun > 0 ? `its ${notRun} test(s) that did not run` : 'the file';
      problems.push(
        `${file.name ?? 'a test file'} failed (${firstLine(file.message) || 'no message'}): ${what} counted as failed`,
      );
    }
  }
  if (report?.success !== true && failed === 0) {
    failed += 1;
    problems.push(
      files.length === 0
        ? 'the run failed before any test file ran (global setup, configuration or collection): counted as 1 failed'
        : 'the run did not succeed although no test failed (an unhandled error?): counted as 1 failed',
    );
  }
  return { passed, failed, problems };
}

/**
 * How long each test file of one vitest JSON report took, from its `startTime` and `endTime` (epoch ms): returns
 * [{ file, seconds }], files without both times left out (a file that did not load has none to give).
 */
export function fileDurations(report) {
  const files = Array.isArray(report?.testResults) ? report.testResults : [];
  return files
    .filter((file) => Number.isFinite(file.startTime) && Number.isFinite(file.endTime))
    .map((file) => ({ file: shortPath(file.name), seconds: Math.max(0, file.endTime - file.startTime) / 1000 }));
}

/** The `count` slowest of `durations` ([{ project, file, seconds }]), slowest first. */
export function slowestFiles(durations, count = 3) {
  return [...durations].sort((a, b) => b.seconds - a.seconds).slice(0, count);
}

/**
 * The machine's CPU time so far from /proc/stat's first line, in clock ticks: { busy, total } (idle and iowait are
 * not busy); undefined where there is no /proc/stat or it does not parse.
 */
export function readCpuTimes(path = '/proc/stat') {
  let text;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  return parseCpuTimes(text);
}

/** /proc/stat's text → { busy, total } of its `cpu` line (all cores), or undefined when it has none. */
export function parseCpuTimes(text) {
  const line = String(text).split('\n', 1)[0] ?? '';
  const fields = /^cpu\s+(.*)$/.exec(line)?.[1]?.trim().split(/\s+/).map(Number);
  if (!fields || fields.length < 4 || fields.some((value) => !Number.isFinite(value) || value < 0)) return undefined;
  // user nice system idle iowait irq softirq steal [guest guest_nice, already inside user and nice]
  const counted = fields.slice(0, 8);
  const total = counted.reduce((sum, value) => sum + value, 0);
  const idle = counted[3] + (counted[4] ?? 0);
  return { busy: total - idle, total };
}

/** The share of the machine's CPU time that was busy between two readings (0..1); undefined without both or no time. */
export function cpuBusyFraction(before, after) {
  if (!before || !after) return undefined;
  const total = after.total - before.total;
  if (!(total > 0)) return undefined;
  return Math.min(1, Math.max(0, (after.busy - before.busy) / total));
}

/** The 1-minute load averages sampled during a run (`os.loadavg()[0]`) as { samples, min, max, mean }; none: undefined. */
export function loadAverageSummary(samples) {
  const values = samples.filter((value) => Number.isFinite(value));
  if (values.length === 0) return undefined;
  const sum = values.reduce((total, value) => total + value, 0);
  return { samples: values.length, min: Math.min(...values), max: Math.max(...values), mean: sum / values.length };
}

/**
 * Sums the reports of every test project under `root` (and of `extraProjects`: [{ name, report }] with a report path,
 * e.g. the kind lane), but for the projects named in `ranElsewhere` (relative paths, e.g. `e2e` when the kind lane
 * ran its files), whose own report no run wrote. Returns { passed, failed, files, projects, durations }, projects being
 * [{ name, passed, failed, problems }] and durations [{ project, file, seconds }], one per test file that ran.
 */
export function summarizeTestResults(root, extraProjects = [], ranElsewhere = []) {
  const projects = [
    ...testProjects(root)
      .map((dir) => ({ name: relative(root, dir), report: join(dir, REPORT) }))
      .filter((project) => !ranElsewhere.includes(project.name)),
    ...extraProjects,
  ];
  let passed = 0;
  let failed = 0;
  let files = 0;
  const counted = [];
  const durations = [];
  for (const project of projects) {
    let result;
    if (!existsSync(project.report)) {
      result = {
        passed: 0,
        failed: 1,
        problems: [`no ${REPORT} (its test run did not finish): counted as 1 failed`],
      };
    } else {
      try {
        const report = JSON.parse(readFileSync(project.report, 'utf8'));
        result = countReport(report);
        for (const each of fileDurations(report)) durations.push({ project: project.name, ...each });
        files += 1;
      } catch (error) {
        result = { passed: 0, failed: 1, problems: [`unreadable ${REPORT} (${error.message}): counted as 1 failed`] };
      }
    }
    passed += result.passed;
    failed += result.failed;
    counted.push({ name: project.name, ...result });
  }
  return { passed, failed, files, projects: counted, durations };
}

/**
 * A second vitest run in a project's directory (the kind lane in e2e) may write its report where the project's own
 * report lives. If `laneReport` was not written and `sharedReport` changed since `sharedBefore` (its bytes, or
 * undefined when it did not exist), the new report is moved to `laneReport` and the project's own put back, so that
 * neither hides the other. Returns whether it moved one.
 */
export function adoptMisplacedReport({ sharedReport, laneReport, sharedBefore }) {
  if (existsSync(laneReport) || !existsSync(sharedReport)) return false;
  const sharedNow = readFileSync(sharedReport);
  if (sharedBefore && sharedNow.equals(sharedBefore)) return false;
  renameSync(sharedReport, laneReport);
  if (sharedBefore) writeFileSync(sharedReport, sharedBefore);
  return true;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { passed, failed, projects } = summarizeTestResults(process.argv[2] ?? process.cwd());
  for (const project of projects) for (const problem of project.problems) console.log(`${project.name}: ${problem}`);
  console.log(`${passed} passed, ${failed} failed`);
}
