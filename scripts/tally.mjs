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
  cpuBusyFraction,
  loadAverageSummary,
  REPORT,
  readCpuTimes,
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
/** The lane's container restarts and unwell-container Events (e2e/kind/lane/lane.ts, LANE_HEALTH_FILE). */
const KIND_LANE_HEALTH = 'e2e/kind/lane-health.json';
/** At most this many of its lines in the summary (the file has them all). */
const KIND_LANE_HEALTH_LINES = 12;
/** The summary's line for the e2e project when its files ran on the lane instead of locally. */
const E2E_ON_LANE_LINE = `${KIND_LANE_PACKAGE_DIR}: its files ran on the kind lane (${KIND_LANE_DIR}), not locally as well`;

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
/**
 * Test stages whose command exited non-zero. One whose reports hold no failure still failed (a global teardown that
 * threw, e.g. a kind cluster whose delete left something behind): then it counts as one failed check.
 */
const failedTestStages = [];
/** The 1-minute load average at the start, at every stage's start and end, and at the end: for the summary. */
const loadSamples = [loadavg()[0]];
/** The CPU hog of a stress run (scripts/stress.mjs) while the test stages run; undefined otherwise. */
let cpuHog;

function elapsed(since) {
  return ((Date.now() - since) / 1000).toFixed(1);
}

function runStage(name, cmd, args, env = process.env) {
  const stage = beginStage(name, cmd, args);
  const res = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env });
  const detail = res.error ? `could not run ${cmd}: ${res.error.message}` : `exit ${res.status ?? res.signal}`;
  return endStage(stage, !res.error && res.status === 0, detail);
}

/**
 * The same stage, run beside others (the test phase's streams): its output goes through line by line, each line
 * prefixed with `[prefix] ` so that the interleaved log still says whose line it is. Resolves with whether it passed.
 */
function runStageBeside(name, prefix, cmd, args, env = process.env) {
  const stage = beginStage(name, cmd, args);
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env });
    for (const [from, to] of [
      [child.stdout, process.stdout],
      [child.stderr, process.stderr],
    ]) {
      let partial = '';
      from.setEncoding('utf8');
      from.on('data', (chunk) => {
        const lines = (partial + chunk).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) to.write(`[${prefix}] ${line}\n`);
      });
      from.on('end', () => {
        if (partial) to.write(`[${prefix}] ${partial}\n`);
      });
    }
    child.on('error', (error) => resolve(endStage(stage, false, `could not run ${cmd}: ${error.message}`)));
    child.on('close', (code, signal) => resolve(endStage(stage, code === 0, `exit ${code ?? signal}`)));
  });
}

function beginStage(name, cmd, args) {
  const stressed = cpuHog !== undefined;
  loadSamples.push(loadavg()[0]);
  console.error(`\n▶ [${elapsed(started)}s] ${name}${stressed ? ' (under stress)' : ''}: ${cmd} ${args.join(' ')}`);
  return { name, stressed, started: Date.now(), cpu: readCpuTimes() };
}

function endStage(stage, ok, detail) {
  loadSamples.push(loadavg()[0]);
  const seconds = elapsed(stage.started);
  const busy = cpuBusyFraction(stage.cpu, readCpuTimes());
  console.error(`◀ [${elapsed(started)}s] ${stage.name} ${ok ? 'done' : 'FAILED'} in ${seconds}s (${detail})`);
  stages.push({ name: stage.name, seconds, ok, stressed: stage.stressed, busy });
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
    const busy = stage.busy === undefined ? '' : `  CPU ${Math.round(stage.busy * 100)}% busy`;
    console.log(`  ${stage.ok ? 'ok    ' : 'FAILED'} ${stage.name.padEnd(34)} ${stage.seconds}s${busy}${mark}`);
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
/** The e2e suite: a stream of the test phase of its own (it runs its files one at a time for ten minutes). */
const E2E_PACKAGE = '@tally-ipam/e2e';
const COMPAT_TEST_SCRIPT = 'test:compat';
const COMPAT_REPORT = 'e2e/compat/test-results.json';

/**
 * The compatibility job of this tree (its Cluster API release named in testenv's versions.ts), or undefined when the
 * tree has none. Its prepare and tests run in the test phase's compat stream (`runCompatibilityJob`).
 */
async function compatibilityJob() {
  if (!(COMPAT_TEST_SCRIPT in packageScripts(KIND_LANE_PACKAGE_DIR))) return undefined;
  // Read from testenv's build, so that the release is named in one place (its versions.ts).
  const { CLUSTER_API_VERSION_ENV, OLDEST_CLUSTER_API_VERSION } = await import(
    join(root, 'packages', 'testenv', 'dist', 'index.js')
  );
  const env = { ...process.env, [CLUSTER_API_VERSION_ENV]: OLDEST_CLUSTER_API_VERSION };
  const name = `compatibility (Cluster API ${OLDEST_CLUSTER_API_VERSION})`;
  const project = { name: `e2e/compat (${name})`, report: join(root, COMPAT_REPORT) };
  return { name, env, project };
}

/** A stage run beside the others whose failure counts as one failed check (the compat stream's prepare steps). */
async function checkBeside(name, prefix, cmd, args, env) {
  const ok = await runStageBeside(name, prefix, cmd, args, env);
  if (!ok) failedChecks.push(name);
  return ok;
}

/**
 * Prepares the compatibility job (its Cluster API release's manager, CRDs and clusterctl, and the CAPV release paired
 * with it: cached Go builds), then runs its tests, in the compat stream beside the other test stages: nothing else
 * needs those binaries, so on a cold cache their builds (about 15 minutes on two cores) no longer hold back the
 * start of every test. Without its binaries the tests would only build them inside their timeouts: the failed
 * prepare was counted, and the missing report counts once more.
 */
async function runCompatibilityJob(job, pnpm) {
  if (!job) return;
  const prepared =
    (await checkBeside(
      `${job.name}: prepare`,
      'compat',
      'node',
      ['packages/testenv/dist/cli.js', 'prepare', '--capi'],
      job.env,
    )) &&
    (await checkBeside(
      `${job.name}: prepare CAPV`,
      'compat',
      ...pnpm('--filter', '@tally-ipam/vsphere', 'run', 'prepare:vsphere'),
      job.env,
    ));
  if (!prepared) return;
  const name = `${job.name}: tests`;
  if (
    !(await runStageBeside(name, 'compat', ...pnpm('--filter', COMPAT_PACKAGE, 'run', COMPAT_TEST_SCRIPT), job.env))
  ) {
    failedTestStages.push(name);
  }
}

function packageScripts(dir) {
  const manifest = join(root, dir, 'package.json');
  return existsSync(manifest) ? (JSON.parse(readFileSync(manifest, 'utf8')).scripts ?? {}) : {};
}

/**
 * The lane's health record as summary lines: restarted containers and unwell-container Events, which explain a test
 * that failed because a Pod was down. None when the file is missing or says nothing.
 */
function laneHealthLines() {
  const file = join(root, KIND_LANE_HEALTH);
  if (!existsSync(file)) return [];
  let health;
  try {
    health = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    return [`lane health: unreadable ${KIND_LANE_HEALTH} (${String(error.message).slice(0, 100)})`];
  }
  const lines = [
    ...(Array.isArray(health.restarts) ? health.restarts.map((line) => `restarted: ${line}`) : []),
    ...(Array.isArray(health.events) ? health.events.map((line) => `event: ${line}`) : []),
  ].map((line) => String(line).slice(0, 200));
  if (lines.length <= KIND_LANE_HEALTH_LINES) return lines;
  return [
    ...lines.slice(0, KIND_LANE_HEALTH_LINES),
    `… and ${lines.length - KIND_LANE_HEALTH_LINES} more in ${KIND_LANE_HEALTH}`,
  ];
}

function kindLanePresent() {
  return existsSync(join(root, KIND_LANE_DIR)) && KIND_LANE_TEST_SCRIPT in packageScripts(KIND_LANE_PACKAGE_DIR);
}

function dockerAnswers() {
  const probe = spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 30_000 });
  return !probe.error && probe.status === 0;
}

/**
 * The kind lane's prepare (node image, images: cached). Returns whether it passed: without it the lane's tests do not
 * run, and the e2e files run locally instead.
 */
async function prepareKindLane(pnpm) {
  if (!(KIND_LANE_PREPARE_SCRIPT in packageScripts(KIND_LANE_PACKAGE_DIR))) return true;
  const prepared = await runStageBeside(
    'kind lane: prepare',
    'kind',
    ...pnpm('--filter', KIND_LANE_PACKAGE, 'run', KIND_LANE_PREPARE_SCRIPT),
  );
  if (!prepared) failedChecks.push('kind lane: prepare');
  return prepared;
}

/** The kind lane's tests (every e2e file and the lane's own, the node image's checks among them), on its cluster. */
async function runKindLaneTests(pnpm) {
  if (
    !(await runStageBeside(
      'kind lane: tests',
      'kind',
      ...pnpm('--filter', KIND_LANE_PACKAGE, 'run', KIND_LANE_TEST_SCRIPT),
    ))
  ) {
    failedTestStages.push('kind lane: tests');
  }
}

const job = process.argv[2];
const [pnpmBin, pnpmPrefix] = pnpmCommand();
const pnpm = (...args) => [pnpmBin, [...pnpmPrefix, ...args]];
const turbo = (...args) => pnpm('exec', 'turbo', 'run', ...args, `--concurrency=${concurrency}`);

switch (job) {
  case 'test': {
    required('install (frozen lockfile)', ...pnpm('install', '--frozen-lockfile'));
    required('build', ...turbo('build'));
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

    const compatJob = await compatibilityJob();

    const lane = kindLanePresent();
    removeTestResults(root, [
      join(root, COMPAT_REPORT),
      ...(lane ? [join(root, KIND_LANE_REPORT), join(root, KIND_LANE_HEALTH)] : []),
    ]);
    // The kind lane runs when its tree is here and an engine answers; without one, one line says it did not run.
    const laneRuns = lane && dockerAnswers();
    startStressIfRequested();
    // The test phase: four streams at once, each mostly waiting on controllers (or, the checks, needing little), so that
    // the slowest, not the sum, sets the phase's time:
    //   - every package's tests (turbo, two at a time);
    //   - the compatibility job (its prepare: Go builds on a cold cache, then its tests), then, when the kind lane does
    //     not run, the e2e suite (each one file at a time, on its own control plane and manager);
    //   - the kind lane (its own cluster in Docker);
    //   - the checks: lint (Biome), then typecheck, each one process over the workspace (nothing waits for them; each
    //     counts as one failed check when it fails).
    // --only: the builds ran above; as dependencies they would run again (--force bypasses their cache too).
    // --force: "run all tests" means run them, not replay turbo's cached logs of an earlier run.
    // The e2e files run once at Cluster API's current release: on the lane when it runs (in Pods, from the shipped
    // manifests: everything a local run of them proves and the Deployment besides), else locally. The compatibility
    // job runs them locally at the oldest release either way, so the local harness is exercised in every run.
    const sharedReport = join(root, KIND_LANE_PACKAGE_DIR, REPORT);
    const lanePrepared = laneRuns ? prepareKindLane(pnpm) : Promise.resolve(false);
    let e2eReport;
    let e2eOnLane = false;
    await Promise.all([
      (async () => {
        const ok = await runStageBeside(
          'tests',
          'packages',
          ...turbo('test', '--only', '--continue', '--force', `--filter=!${E2E_PACKAGE}`),
        );
        if (!ok) failedTestStages.push('tests');
      })(),
      (async () => {
        await runCompatibilityJob(compatJob, pnpm);
        if (await lanePrepared) {
          e2eOnLane = true;
          return;
        }
        if (!(await runStageBeside('tests: e2e', 'e2e', ...pnpm('--filter', E2E_PACKAGE, 'run', 'test')))) {
          failedTestStages.push('tests: e2e');
        }
        e2eReport = existsSync(sharedReport) ? readFileSync(sharedReport) : undefined;
      })(),
      (async () => {
        if (await lanePrepared) await runKindLaneTests(pnpm);
      })(),
      (async () => {
        // Each one process over the whole workspace (the root package.json's scripts): Biome and TypeScript read the
        // shared libraries once, not once per package (21 runs of each took 600–840 s of the run on two cores).
        for (const [name, script] of [
          ['lint (Biome)', 'lint'],
          ['typecheck', 'typecheck'],
        ]) {
          if (!(await runStageBeside(name, script, ...pnpm('run', script)))) failedChecks.push(name);
        }
      })(),
    ]);
    const extraProjects = compatJob ? [compatJob.project] : [];
    if (laneRuns) {
      // The lane's report belongs at KIND_LANE_REPORT; if its vitest wrote it where the e2e suite's own report lives
      // instead, it is moved there and the e2e suite's report (as that suite left it) put back, so neither hides the
      // other.
      adoptMisplacedReport({ sharedReport, laneReport: join(root, KIND_LANE_REPORT), sharedBefore: e2eReport });
      extraProjects.push({ name: KIND_LANE_DIR, report: join(root, KIND_LANE_REPORT) });
    } else if (lane) {
      console.log('\nkind lane: NOT RUN — no Docker engine answers (docker info failed)');
    } else {
      console.log(
        `\nkind lane: not in this tree (no ${KIND_LANE_DIR}/ with ${KIND_LANE_TEST_SCRIPT} in ${KIND_LANE_PACKAGE})`,
      );
    }

    await stopStress();
    const { passed, failed, files, projects, durations } = summarizeTestResults(
      root,
      extraProjects,
      e2eOnLane ? [KIND_LANE_PACKAGE_DIR] : [],
    );
    printStages();
    printTimeAndLoad(durations);
    console.log(`\ntest results from ${files} of ${projects.length} test projects:`);
    if (e2eOnLane) console.log(`  ${E2E_ON_LANE_LINE}`);
    for (const project of projects) {
      console.log(`  ${project.name}: ${project.passed} passed, ${project.failed} failed`);
      for (const problem of project.problems) console.log(`    ${problem}`);
      if (project.name === KIND_LANE_DIR) for (const line of laneHealthLines()) console.log(`    ${line}`);
    }
    if (failed === 0) {
      for (const name of failedTestStages) failedChecks.push(`${name} (exited non-zero with no failed test)`);
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
