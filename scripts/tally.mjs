#!/usr/bin/env node
// The README's entry points, runnable on a machine that has only Node and npm: it obtains the pinned pnpm,
// installs with the frozen lockfile, builds, and then runs the requested job.
//   node scripts/tally.mjs test   — every package's tests, then one summary line "N passed, N failed"
//   node scripts/tally.mjs start  — the IPAM controller (with no KUBECONFIG: an embedded control plane and a demo)
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeTestResults, summarizeTestResults } from './test-summary.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pinnedPnpm = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager.split('@')[1];

function run(cmd, args, { allowFailure = false } = {}) {
  const started = Date.now();
  console.error(`\n▶ ${cmd} ${args.join(' ')}`);
  const res = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: process.env });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (res.error) throw new Error(`could not run ${cmd}: ${res.error.message}`);
  console.error(`◀ ${cmd} ${args[0] ?? ''} finished in ${seconds}s (exit ${res.status})`);
  if (res.status !== 0 && !allowFailure) process.exit(res.status ?? 1);
  return res.status ?? 1;
}

function pnpmCommand() {
  const probe = spawnSync('pnpm', ['--version'], { encoding: 'utf8' });
  if (probe.status === 0 && probe.stdout.trim() === pinnedPnpm) return ['pnpm', []];
  console.error(
    `pnpm ${pinnedPnpm} not on PATH (found: ${probe.status === 0 ? probe.stdout.trim() : 'none'}); using npx pnpm@${pinnedPnpm}`,
  );
  return ['npx', ['--yes', `pnpm@${pinnedPnpm}`]];
}

const job = process.argv[2];
const [pnpm, pnpmPrefix] = pnpmCommand();
const p = (...args) => [pnpm, [...pnpmPrefix, ...args]];

switch (job) {
  case 'test': {
    run(...p('install', '--frozen-lockfile'));
    run(...p('run', 'build'));
    removeTestResults(root);
    // --force: "run all tests" means run them, not replay turbo's cached logs of an earlier run.
    const status = run(...p('exec', 'turbo', 'run', 'test', '--continue', '--concurrency=2', '--force'), {
      allowFailure: true,
    });
    const { passed, failed, files, missing } = summarizeTestResults(root);
    for (const dir of missing)
      console.log(`${dir}: no test-results.json (its test run did not finish): counted as 1 failed`);
    console.log(`\ntest results from ${files} test projects`);
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(status !== 0 || failed > 0 ? 1 : 0);
    break;
  }
  case 'start': {
    run(...p('install', '--frozen-lockfile'));
    run(...p('run', 'build'));
    run(...p('--filter', '@tally-ipam/ipam-controller', 'start', ...process.argv.slice(3)));
    break;
  }
  default:
    console.error('usage: node scripts/tally.mjs test|start');
    process.exit(2);
}
