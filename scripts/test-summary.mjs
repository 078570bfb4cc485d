// Sums vitest's JSON reports (test-results.json, one per test project) into passed/failed counts.
// A test project is every workspace package with a `test` script; one that wrote no report (it crashed before
// vitest could write it) counts as one failure, so a broken project can never vanish from the summary.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';

const workspaceDirs = ['packages', 'apps', 'tools'];
const REPORT = 'test-results.json';

export function testProjects(root) {
  const candidates = [join(root, 'e2e')];
  for (const dir of workspaceDirs) {
    const base = join(root, dir);
    if (!existsSync(base)) continue;
    for (const name of readdirSync(base)) candidates.push(join(base, name));
  }
  return candidates.filter((dir) => {
    const manifest = join(dir, 'package.json');
    return existsSync(manifest) && typeof JSON.parse(readFileSync(manifest, 'utf8')).scripts?.test === 'string';
  });
}

/** Removes every project's report, so the summary after a run can only count what that run wrote. */
export function removeTestResults(root) {
  for (const dir of testProjects(root)) rmSync(join(dir, REPORT), { force: true });
}

export function summarizeTestResults(root) {
  let passed = 0;
  let failed = 0;
  let files = 0;
  const missing = [];
  for (const dir of testProjects(root)) {
    const file = join(dir, REPORT);
    if (!existsSync(file)) {
      missing.push(relative(root, dir));
      failed += 1;
      continue;
    }
    const report = JSON.parse(readFileSync(file, 'utf8'));
    files += 1;
    passed += report.numPassedTests ?? 0;
    // A suite that failed to load (syntax error, global setup failure) has no failed *tests*; count it as one.
    const failedSuites = (report.testResults ?? []).filter(
      (r) => r.status === 'failed' && r.assertionResults?.length === 0,
    ).length;
    failed +=
      (report.numFailedTests ?? 0) + failedSuites + (report.numTotalTests === 0 && report.success === false ? 1 : 0);
  }
  return { passed, failed, files, missing };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { passed, failed, missing } = summarizeTestResults(process.argv[2] ?? process.cwd());
  for (const dir of missing) console.log(`${dir}: no ${REPORT} (its test run did not finish)`);
  console.log(`${passed} passed, ${failed} failed`);
}
