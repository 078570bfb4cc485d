#!/usr/bin/env node
// The README's entry points, runnable on a machine that has only Node, npm and Go: it obtains the pinned pnpm,
// installs with the frozen lockfile, builds, and then runs the requested job.
//   node scripts/tally.mjs test   — lint, typecheck, prepare (control plane, Cluster API manager, images), every test
//                                   project, the kind lane when a Docker engine answers; ends with "N passed, N failed"
//                                   (`--stress` or TALLY_TEST_STRESS=1: a CPU hog beside the tests, scripts/stress.mjs)
//   node scripts/tally.mjs start  — the IPAM controller (with no KUBECONFIG: an embedded control plane and a demo)
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCpuHog, stressMaxSeconds, stressRequested } from './stress.mjs';
import {
  adoptMisplacedReport,
  loadAverageSummary,
  REPORT,
  removeTestResults,
  slowestFiles,
  summarizeTestResults,
} from './test-summary.mjs';

// The kind lane (e2e on a kind cluster, e2e/README.md "The kind lane"): run after every other test project, alone,
// only when `docker info` answers; without an engine, one line says it did not run (never a silent pass).
const KIND_LANE_DIR = 'e2e/kind';
const KIND_LANE_PACKAGE_DIR = 'e2e';
const KIND_LANE_PACKAGE = '@tally-ipam/e2e';
const KIND_LANE_PREPARE_SCRIPT = 'prepare:kind';
const KIND_LANE_TEST_SCRIPT = 'test:kind';
/** Where the summary looks for the lane's vitest report. */
const KIND_LANE_REPORT = 'e2e/kind/test-results.json';
// The offline kind node image's own test (a cluster from it: kube-system Ready, DNS, Service routing, no pull), run
// first in the lane: it needs the engine too, so it is not a `test` project of the main run.
const KIND_NODE_DIR = 'tools/kind';
const KIND_NODE_PACKAGE = '@tally-ipam/kind';
const KIND_NODE_REPORT = 'tools/kind/test-results.json';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pinnedPnpm = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager.split('@')[1];
// At most two turbo tasks at a time (each vitest run uses cores − 1 workers, so 2 cores run 2 test files at once, and
// type checks and Biome stay at two processes): a 2-core machine stays responsive.
const concurrency = String(Math.max(1, Math.min(2, availableParallelism())));
const started = Date.now();
/** [{ name, seconds, ok }] of every stage run, for the closing table. */
const stages = [];
/** Checks that failed outside the test reports (lint, typecheck, prepare): one failed each in the summary line. */
const failedChecks = [];
/** The 1-minute load average at the start, at every stage's start and end, and at the end: for the summary. */
const loadSamples = [loadavg()[0]];
/** The CPU hog of a stress run (scripts/stress.mjs) while the test stages run; undefined otherwise. */
let cpuHog;

function elapsed(since) {
  return ((Date.now() - since) / 1000).toFixed(1);
}

function runStage(name, cmd, args, env = process.env) {
  const stageStarted = Date.now();
  const stressed = cpuHog !== undefined;
  loadSamples.push(loadavg()[0]);
  console.error(`\n▶ [${elapsed(started)}s] ${name}${stressed ? ' (under stress)' : ''}: ${cmd} ${args.join(' ')}`);
  const res = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env });
  loadSamples.push(loadavg()[0]);
  const seconds = elapsed(stageStarted);
  const ok = !res.error && res.status === 0;
  const detail = res.error ? `could not run ${cmd}: ${res.error.message}` : `exit ${res.status ?? res.signal}`;
  console.error(`◀ [${elapsed(started)}s] ${name} ${ok ? 'done' : 'FAILED'} in ${seconds}s (${detail})`);
  stages.push({ name, seconds, ok, stressed });
  return ok;
}

/** A stage whose failure counts as one failed check and lets the run go on (its output is shown above). */
function check(name, cmd, args, env) {
  const ok = runStage(name, cmd, args, env);
  if (!ok) failedChecks.push(name);
  return ok;
}

/** A stage without which nothing else can run: its failure ends the run with "0 passed, 1 failed". */
function required(name, cmd, args) {
  if (runStage(name, cmd, args)) return;
  printStages();
  console.log(`\n${name} failed (output above): nothing else can run`);
  console.log('0 passed, 1 failed');
  process.exit(1);
}

function printStages() {
  console.log(`\nstages (${elapsed(started)}s in all):`);
  for (const stage of stages) {
    const mark = stage.stressed ? '  (under stress: CPU hog running)' : '';
    console.log(`  ${stage.ok ? 'ok    ' : 'FAILED'} ${stage.name.padEnd(34)} ${stage.seconds}s${mark}`);
  }
}

/**
 * With `--stress` or TALLY_TEST_STRESS=1: starts the CPU hog for the test stages, says so, and makes sure it is
 * killed however the run ends (its loops also end themselves at their limit, or when this process is gone).
 */
function startStressIfRequested() {
  if (!stressRequested(process.argv.slice(3), process.env)) return;
  cpuHog = startCpuHog({ maxSeconds: stressMaxSeconds(process.env) });
  process.on('exit', () => cpuHog?.stopNow());
  console.log(
    `\nstress mode: ${cpuHog.pids.length} CPU spin loops (pids ${cpuHog.pids.join(', ')}) run beside the test ` +
      `stages, each for at most ${cpuHog.maxSeconds} s`,
  );
}

async function stopStress() {
  if (!cpuHog) return;
  const left = cpuHog.running();
  await cpuHog.stop();
  const total = cpuHog.pids.length;
  console.log(
    left === total
      ? `stress mode: the ${total} CPU spin loops stopped`
      : `stress mode: only ${left} of ${total} CPU spin loops still ran at the end (their ${cpuHog.maxSeconds} s ` +
          'limit passed, or one was killed): the later tests ran with less load',
  );
  cpuHog = undefined;
}

/** The three slowest test files and the load average during the run: where the time went, and on what machine. */
function printTimeAndLoad(durations) {
  loadSamples.push(loadavg()[0]);
  console.log('\nslowest test files:');
  for (const { project, file, seconds } of slowestFiles(durations, 3))
    console.log(`  ${seconds.toFixed(1).padStart(7)}s  ${project}/${file}`);
  const load = loadAverageSummary(loadSamples);
  if (load) {
    console.log(
      `load average (1 min) during the run: min ${load.min.toFixed(2)}, max ${load.max.toFixed(2)}, ` +
        `mean ${load.mean.toFixed(2)} (${load.samples} samples, ${availableParallelism()} cores)`,
    );
  }
}

/** The stop request apps/ipam-controller/src/parent-stop.ts takes (it cannot be imported from there: TypeScript). */
const STOP_MESSAGE_TYPE = 'tally-ipam/stop';

/**
 * Runs the controller in this process group with the terminal's stdio and resolves with its exit status (1 when a
 * signal killed it or it could not start). A SIGINT or SIGTERM sent to this process alone, or to npm (which passes it
 * on), is passed on to the controller as a stop request over IPC, not as a signal: the controller counts signals, and
 * a Ctrl-C reaches it directly too (the terminal signals the whole group), so a signal passed on as well would be the
 * second one, which exits at once without a clean stop. A request is never counted: Ctrl-C stops as it always did,
 * and a second Ctrl-C still exits at once.
 */
function runController(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: root,
      stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
      env: process.env,
    });
    const passOn = (signal) => {
      if (!child.connected) return;
      // The callback takes the error of a controller that is already exiting: its exit is handled below.
      child.send({ type: STOP_MESSAGE_TYPE, signal }, () => {});
    };
    process.on('SIGINT', passOn);
    process.on('SIGTERM', passOn);
    child.on('error', (error) => {
      console.error(`could not run node ${args.join(' ')}: ${error.message}`);
      resolve(1);
    });
    child.once('exit', (code) => resolve(code ?? 1));
  });
}

function pnpmCommand() {
  const probe = spawnSync('pnpm', ['--version'], { encoding: 'utf8' });
  if (probe.status === 0 && probe.stdout.trim() === pinnedPnpm) return ['pnpm', []];
  console.error(
    `pnpm ${pinnedPnpm} not on PATH (found: ${probe.status === 0 ? probe.stdout.trim() : 'none'}); using npx pnpm@${pinnedPnpm}`,
  );
  return ['npx', ['--yes', `pnpm@${pinnedPnpm}`]];
}

// The compatibility job (README, "Compatibility"): after every test project has run on the default Cluster API
// release, the e2e suite's contract files and the CAPV scenario run again on the oldest supported one (with the CAPV
// release paired with it), on their own control plane; their own report.
const COMPAT_PACKAGE = '@tally-ipam/e2e';
const COMPAT_TEST_SCRIPT = 'test:compat';
const COMPAT_REPORT = 'e2e/compat/test-results.json';

/** Runs the compatibility job; returns the project for the summary, or undefined when the tree has none. */
async function runCompatibilityJob(pnpm) {
  if (!(COMPAT_TEST_SCRIPT in packageScripts(KIND_LANE_PACKAGE_DIR))) return undefined;
  // Read from testenv's build, so that the release is named in one place (its versions.ts).
  const { CLUSTER_API_VERSION_ENV, OLDEST_CLUSTER_API_VERSION } = await import(
    join(root, 'packages', 'testenv', 'dist', 'index.js')
  );
  const env = { ...process.env, [CLUSTER_API_VERSION_ENV]: OLDEST_CLUSTER_API_VERSION };
  const name = `compatibility (Cluster API ${OLDEST_CLUSTER_API_VERSION})`;
  const project = { name: `e2e/compat (${name})`, report: join(root, COMPAT_REPORT) };
  const prepared =
    check(`${name}: prepare`, 'node', ['packages/testenv/dist/cli.js', 'prepare', '--capi'], env) &&
    check(`${name}: prepare CAPV`, ...pnpm('--filter', '@tally-ipam/vsphere', 'run', 'prepare:vsphere'), env);
  // Without its binaries the tests would only build them inside their timeouts: the failed prepare is counted, and
  // the missing report counts once more.
  if (prepared) runStage(`${name}: tests`, ...pnpm('--filter', COMPAT_PACKAGE, 'run', COMPAT_TEST_SCRIPT), env);
  return project;
}

function packageScripts(dir) {
  const manifest = join(root, dir, 'package.json');
  return existsSync(manifest) ? (JSON.parse(readFileSync(manifest, 'utf8')).scripts ?? {}) : {};
}

function kindLanePresent() {
  return existsSync(join(root, KIND_LANE_DIR)) && KIND_LANE_TEST_SCRIPT in packageScripts(KIND_LANE_PACKAGE_DIR);
}

function dockerAnswers() {
  const probe = spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 30_000 });
  return !probe.error && probe.status === 0;
}

/**
 * Runs the kind lane alone. Its report belongs at KIND_LANE_REPORT; if the lane's vitest wrote it where the e2e
 * project's own report lives instead, it is moved there and the e2e report put back, so neither hides the other.
 */
function runKindLane(pnpm) {
  const sharedReport = join(root, KIND_LANE_PACKAGE_DIR, REPORT);
  const e2eReport = existsSync(sharedReport) ? readFileSync(sharedReport) : undefined;
  if (KIND_LANE_PREPARE_SCRIPT in packageScripts(KIND_LANE_PACKAGE_DIR)) {
    if (!check('kind lane: prepare', ...pnpm('--filter', KIND_LANE_PACKAGE, 'run', KIND_LANE_PREPARE_SCRIPT))) return;
  }
  if (KIND_LANE_TEST_SCRIPT in packageScripts(KIND_NODE_DIR)) {
    runStage('kind lane: node image', ...pnpm('--filter', KIND_NODE_PACKAGE, 'run', KIND_LANE_TEST_SCRIPT));
  }
  runStage('kind lane: tests', ...pnpm('--filter', KIND_LANE_PACKAGE, 'run', KIND_LANE_TEST_SCRIPT));
  adoptMisplacedReport({ sharedReport, laneReport: join(root, KIND_LANE_REPORT), sharedBefore: e2eReport });
}

const job = process.argv[2];
const [pnpmBin, pnpmPrefix] = pnpmCommand();
const pnpm = (...args) => [pnpmBin, [...pnpmPrefix, ...args]];
const turbo = (...args) => pnpm('exec', 'turbo', 'run', ...args, `--concurrency=${concurrency}`);

switch (job) {
  case 'test': {
    required('install (frozen lockfile)', ...pnpm('install', '--frozen-lockfile'));
    required('build', ...turbo('build'));
    check('lint (Biome)', ...turbo('lint', '--continue'));
    check('typecheck', ...turbo('typecheck', '--continue'));
    // Everything a test would otherwise build inside its timeout, built (or found in the cache) here, with progress.
    check('prepare: control plane and Cluster API manager (Go builds, cached)', 'node', [
      'packages/testenv/dist/cli.js',
      'prepare',
      '--capi',
    ]);
    check('prepare: controller images', ...pnpm('-r', '--workspace-concurrency=1', 'run', 'image'));
    check(
      'prepare: reference IPAM provider for the side-by-side benchmark (Go build, cached)',
      ...pnpm('--filter', '@tally-ipam/ipam-controller', 'run', 'prepare:reference'),
    );
    // CAPV's manager and the vCenter simulator for the e2e CAPV scenario: built after the Cluster API manager, whose
    // compiled packages CAPV's build reuses (tools/vsphere/README.md, "Build times").
    check(
      'prepare: CAPV and the vCenter simulator for the CAPV scenario (Go builds, cached)',
      ...pnpm('--filter', '@tally-ipam/vsphere', 'run', 'prepare:vsphere'),
    );

    // kind's binaries (kubectl among them): tools/docs checks the guide's kubectl lines against its --help, and the
    // kind lane runs them; built here, cached, so that a cold build is no test's business.
    check('prepare: kind and kubectl (Go builds, cached)', 'node', ['tools/kind/dist/cli.js', 'binaries']);

    const lane = kindLanePresent();
    removeTestResults(root, [
      join(root, COMPAT_REPORT),
      ...(lane ? [join(root, KIND_LANE_REPORT), join(root, KIND_NODE_REPORT)] : []),
    ]);
    startStressIfRequested();
    // --force: "run all tests" means run them, not replay turbo's cached logs of an earlier run.
    runStage('tests', ...turbo('test', '--continue', '--force'));
    const extraProjects = [];
    const compat = await runCompatibilityJob(pnpm);
    if (compat) extraProjects.push(compat);
    if (lane) {
      if (dockerAnswers()) {
        runKindLane(pnpm);
        if (KIND_LANE_TEST_SCRIPT in packageScripts(KIND_NODE_DIR)) {
          extraProjects.push({ name: `${KIND_NODE_DIR} (kind lane)`, report: join(root, KIND_NODE_REPORT) });
        }
        extraProjects.push({ name: KIND_LANE_DIR, report: join(root, KIND_LANE_REPORT) });
      } else {
        console.log('\nkind lane: NOT RUN — no Docker engine answers (docker info failed)');
      }
    } else {
      console.log(
        `\nkind lane: not in this tree (no ${KIND_LANE_DIR}/ with ${KIND_LANE_TEST_SCRIPT} in ${KIND_LANE_PACKAGE})`,
      );
    }

    await stopStress();
    const { passed, failed, files, projects, durations } = summarizeTestResults(root, extraProjects);
    printStages();
    printTimeAndLoad(durations);
    console.log(`\ntest results from ${files} of ${projects.length} test projects:`);
    for (const project of projects) {
      console.log(`  ${project.name}: ${project.passed} passed, ${project.failed} failed`);
      for (const problem of project.problems) console.log(`    ${problem}`);
    }
    for (const name of failedChecks) console.log(`${name}: failed (output above): counted as 1 failed`);
    const totalFailed = failed + failedChecks.length;
    console.log(`${passed} passed, ${totalFailed} failed`);
    process.exit(totalFailed > 0 ? 1 : 0);
    break;
  }
  case 'start': {
    required('install (frozen lockfile)', ...pnpm('install', '--frozen-lockfile'));
    required('build', ...turbo('build'));
    // The controller is run directly, not through `pnpm run`: Ctrl-C reaches the whole foreground process group, and
    // the shell pnpm puts in between dies of the signal, so pnpm reported a failure after a clean stop. This process
    // waits for the controller and exits with its status.
    const main = join(root, 'apps', 'ipam-controller', 'dist', 'main.js');
    const args = [main, ...process.argv.slice(3)];
    console.error(`\n▶ node ${args.join(' ')}`);
    process.exit(await runController(args));
    break;
  }
  default:
    console.error('usage: node scripts/tally.mjs test|start');
    process.exit(2);
}
