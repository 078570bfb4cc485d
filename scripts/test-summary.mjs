// Sums vitest's JSON reports (test-results.json, one per test project) into passed/failed counts.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const projectDirs = ['packages', 'apps'];

export function summarizeTestResults(root) {
  const reports = [];
  for (const dir of projectDirs) {
    const base = join(root, dir);
    if (!existsSync(base)) continue;
    for (const name of readdirSync(base)) reports.push(join(base, name, 'test-results.json'));
  }
  reports.push(join(root, 'e2e', 'test-results.json'));
  let passed = 0;
  let failed = 0;
  let files = 0;
  for (const file of reports) {
    if (!existsSync(file)) continue;
    const report = JSON.parse(readFileSync(file, 'utf8'));
    files += 1;
    passed += report.numPassedTests ?? 0;
    // A suite that failed to load (syntax error, global setup failure) has no failed *tests*; count it as one.
    const failedSuites = (report.testResults ?? []).filter((r) => r.status === 'failed' && r.assertionResults?.length === 0).length;
    failed += (report.numFailedTests ?? 0) + failedSuites + (report.numTotalTests === 0 && report.success === false ? 1 : 0);
  }
  return { passed, failed, files };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { passed, failed } = summarizeTestResults(process.argv[2] ?? process.cwd());
  console.log(`${passed} passed, ${failed} failed`);
}
