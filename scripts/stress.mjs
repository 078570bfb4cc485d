// `npm test -- --stress` (or TALLY_TEST_STRESS=1): a bounded CPU hog beside the test stages, so that a run proves no
// assertion depends on the machine's load. One spin loop per core (at most two: the machines these runs share have
// two), each a `node -e` child that ends itself at its own deadline and when this process is gone, and that
// `stop()` kills at the end of the tests or of the run, whichever comes first.
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';

/** The hog's hard limit unless TALLY_TEST_STRESS_MAX_SECONDS says otherwise: longer than a cold run's test stages. */
export const DEFAULT_STRESS_MAX_SECONDS = 2 * 60 * 60;

// Spins until its deadline, or until the process that started it is gone (a SIGKILLed runner). That process's pid is
// passed in (process.ppid is read once, at a start the parent may not outlive) and asked directly (signal 0): a system
// call, made every few million turns (10–50 ms).
const SPIN = `
const deadline = Date.now() + Number(process.argv[1]) * 1000;
const parent = Number(process.argv[2]);
const parentAlive = () => { try { process.kill(parent, 0); return true; } catch { return false; } };
for (let turn = 0; ; turn += 1) {
  if (turn % 4_000_000 === 0 && (Date.now() >= deadline || !parentAlive())) process.exit(0);
}`;

/** Whether this run asked for stress: `--stress` among its arguments, or TALLY_TEST_STRESS set to 1 or true. */
export function stressRequested(argv, env) {
  return argv.includes('--stress') || /^(1|true)$/i.test(env.TALLY_TEST_STRESS ?? '');
}

/** The hog's limit in seconds: TALLY_TEST_STRESS_MAX_SECONDS when it is a positive number, else the default. */
export function stressMaxSeconds(env) {
  const value = Number(env.TALLY_TEST_STRESS_MAX_SECONDS);
  return Number.isFinite(value) && value > 0 ? value : DEFAULT_STRESS_MAX_SECONDS;
}

/**
 * Starts `workers` spin loops (default: one per core, at most two), each ending itself after `maxSeconds`. Returns
 * { pids, maxSeconds, running(), stop() }: `running()` counts the loops still alive, `stop()` kills them (again is a
 * no-op) and resolves once they are gone.
 */
export function startCpuHog({ maxSeconds, workers = Math.min(2, availableParallelism()) }) {
  const children = Array.from({ length: workers }, () =>
    spawn(process.execPath, ['-e', SPIN, String(maxSeconds), String(process.pid)], { stdio: 'ignore' }),
  );
  const exits = children.map(
    (child) =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve();
        else child.once('exit', () => resolve());
      }),
  );
  for (const child of children) child.on('error', () => undefined);
  const alive = (child) => child.exitCode === null && child.signalCode === null;
  return {
    pids: children.map((child) => child.pid),
    maxSeconds,
    running: () => children.filter(alive).length,
    stop: async () => {
      for (const child of children) if (alive(child)) child.kill('SIGKILL');
      await Promise.all(exits);
    },
    /** For an `exit` handler, where nothing can be awaited: the kill is sent, the loops end at once. */
    stopNow: () => {
      for (const child of children) if (alive(child)) child.kill('SIGKILL');
    },
  };
}
