// `npm start` with no cluster runs the demo: `scripts/tally.mjs start`, the controller (apps/ipam-controller) and the
// embedded control plane it starts (etcd, kube-apiserver, kube-controller-manager and their watchdog). A SIGTERM or a
// SIGINT sent to npm's pid or to the script's must stop all of it as Ctrl-C does: the control plane's processes gone,
// its state directory removed, npm's exit status 0. The script passes such a signal on to the controller as a stop
// request over IPC; a Ctrl-C, which the controller also receives directly, must not become a second signal (an exit 1
// at once). Everything here is real except `pnpm`: the script's install and build stages run a stand-in, since the
// tree is built already (the first stage of `npm test`) and a build run again here would rewrite `dist/` under the
// test projects running beside this one.
import { type ChildProcess, spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const controllerMain = join(root, 'apps', 'ipam-controller', 'dist', 'main.js');
const rootManifest: { packageManager?: unknown } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const pinnedPnpm = String(rootManifest.packageManager).split('@')[1] ?? '';

/**
 * Deadlines against hangs only, never timing claims: the first start on a machine builds the control plane (or waits
 * for another run building it), and a loaded 2-core machine is slow.
 */
const READY_DEADLINE_MS = 25 * 60_000;
const STOP_DEADLINE_MS = 5 * 60_000;
/** The watchdog is told to stop and not waited for (it exits on SIGTERM at once); how long to look for it. */
const WATCHDOG_DEADLINE_MS = 60_000;
const TEST_TIMEOUT_MS = READY_DEADLINE_MS + STOP_DEADLINE_MS + WATCHDOG_DEADLINE_MS + 60_000;

const work = mkdtempSync(join(tmpdir(), 'tally-npm-start-demo-'));
const stubBin = join(work, 'bin');
mkdirSync(stubBin);
// Answers the script's version probe with the pinned version (else it would fetch pnpm with npx) and does nothing else.
writeFileSync(
  join(stubBin, 'pnpm'),
  `#!/bin/sh\nif [ "$1" = "--version" ]; then echo ${pinnedPnpm}; exit 0; fi\necho "pnpm stand-in: $*" >&2\n`,
);
chmodSync(join(stubBin, 'pnpm'), 0o755);
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface ProcessInfo {
  readonly pid: number;
  readonly parent: number;
  /** Clock ticks after boot: with the pid, tells a process from a later one given the same pid. */
  readonly startTime: string;
  readonly state: string;
  readonly commandLine: readonly string[];
}

function readProcess(pid: number): ProcessInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name in parentheses may hold spaces: the fields start after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    return { pid, parent: Number(fields[1]), startTime: fields[19] ?? '', state: fields[0] ?? '', commandLine };
  } catch {
    return undefined; // exited while we looked
  }
}

function allProcesses(): ProcessInfo[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => readProcess(Number(entry)) ?? []);
}

/** Gone: no such process, a zombie (dead, not yet reaped), or another process that was given the same pid since. */
function isGone(known: ProcessInfo): boolean {
  const now = readProcess(known.pid);
  return now === undefined || now.state === 'Z' || now.startTime !== known.startTime;
}

function describeProcess(info: ProcessInfo): string {
  return `${info.pid} ${info.commandLine.join(' ').slice(0, 160)}`;
}

interface NpmExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** The demo's processes, found while it runs. */
interface DemoProcesses {
  readonly script: ProcessInfo;
  readonly controller: ProcessInfo;
  readonly etcd: ProcessInfo;
  readonly kubeAPIServer: ProcessInfo;
  readonly kubeControllerManager: ProcessInfo;
  readonly watchdog: ProcessInfo;
}

interface RunningDemo {
  readonly npm: ChildProcess;
  readonly npmPid: number;
  readonly lines: string[];
  readonly exited: Promise<NpmExit>;
  readonly stateDir: string;
  readonly logDir: string | undefined;
  readonly processes: DemoProcesses;
}

let current: { npm: ChildProcess; lines: string[] } | undefined;

function only(found: readonly ProcessInfo[], what: string): ProcessInfo {
  const [first, ...rest] = found;
  if (first === undefined || rest.length > 0) {
    throw new Error(`expected one ${what}, found ${found.length}: ${found.map(describeProcess).join('; ')}`);
  }
  return first;
}

function findProcesses(npmPid: number, stateDir: string): DemoProcesses {
  const processes = allProcesses();
  const script = only(
    processes.filter((p) => p.parent === npmPid && p.commandLine.some((arg) => arg.endsWith('scripts/tally.mjs'))),
    'scripts/tally.mjs start, child of npm',
  );
  const controller = only(
    processes.filter((p) => p.parent === script.pid && p.commandLine.includes(controllerMain)),
    'controller, child of the script',
  );
  const plane = processes.filter((p) => p.commandLine.some((arg) => arg.includes(stateDir)));
  const binary = (name: string): ProcessInfo =>
    only(
      plane.filter((p) => basename(p.commandLine[0] ?? '') === name),
      `${name} of ${stateDir}`,
    );
  return {
    script,
    controller,
    etcd: binary('etcd'),
    kubeAPIServer: binary('kube-apiserver'),
    kubeControllerManager: binary('kube-controller-manager'),
    watchdog: only(
      plane.filter((p) => p.commandLine.includes('-e')),
      `control plane watchdog of ${stateDir}`,
    ),
  };
}

/** `npm start` in the repository root, in a process group of its own as a terminal's foreground job has. */
async function startDemo(): Promise<RunningDemo> {
  if (!existsSync(controllerMain)) throw new Error(`${controllerMain} is missing: build first (pnpm build)`);
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${stubBin}:${process.env.PATH ?? ''}` };
  // No cluster named: the demo, never a cluster the test machine happens to point at.
  delete env.KUBECONFIG;
  delete env.TALLY_TEST_KUBECONFIG;
  delete env.KUBERNETES_SERVICE_HOST;
  const npm = spawn('npm', ['start'], { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
  const lines: string[] = [];
  current = { npm, lines };
  const exited = new Promise<NpmExit>((resolve) => {
    // 'close': after the script and the controller, which hold npm's stdout and stderr, have exited too.
    npm.once('close', (code, signal) => resolve({ code, signal }));
  });
  let ready: () => void = () => {};
  const readyLine = new Promise<void>((resolve) => {
    ready = resolve;
  });
  for (const stream of [npm.stdout, npm.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      lines.push(line);
      if (line.startsWith('Press Ctrl-C')) ready();
    });
  }
  const outcome = await Promise.race([
    readyLine.then(() => 'ready' as const),
    exited.then((exit) => `npm exited before the demo was ready: ${JSON.stringify(exit)}` as const),
    delay(READY_DEADLINE_MS, undefined, { ref: false }).then(() => `no demo after ${READY_DEADLINE_MS} ms` as const),
  ]);
  if (outcome !== 'ready') throw new Error(`${outcome}\n${lines.join('\n')}`);
  if (npm.pid === undefined) throw new Error('npm has no pid');
  const kubeconfigPath = lines.map((line) => /export KUBECONFIG=(\S+)/.exec(line)?.[1]).find(Boolean);
  if (!kubeconfigPath) throw new Error(`no KUBECONFIG line in the output:\n${lines.join('\n')}`);
  const logPath = lines.map((line) => /^Controller log: (\S+)$/.exec(line)?.[1]).find(Boolean);
  const stateDir = dirname(kubeconfigPath);
  return {
    npm,
    npmPid: npm.pid,
    lines,
    exited,
    stateDir,
    logDir: logPath === undefined ? undefined : dirname(logPath),
    processes: findProcesses(npm.pid, stateDir),
  };
}

async function waitForExit(demo: RunningDemo): Promise<NpmExit> {
  const exit = await Promise.race([
    demo.exited,
    delay(STOP_DEADLINE_MS, undefined, { ref: false }).then(() => undefined),
  ]);
  if (exit === undefined) throw new Error(`npm still running ${STOP_DEADLINE_MS} ms after the signal`);
  return exit;
}

async function watchdogGone(watchdog: ProcessInfo): Promise<boolean> {
  const deadline = Date.now() + WATCHDOG_DEADLINE_MS;
  while (!isGone(watchdog)) {
    if (Date.now() >= deadline) return false;
    await delay(100);
  }
  return true;
}

afterEach(() => {
  const run = current;
  current = undefined;
  if (!run) return;
  // A failed test must not leave a demo behind: the controller's death sets its watchdog on the control plane.
  if (run.npm.pid !== undefined && run.npm.exitCode === null && run.npm.signalCode === null) {
    try {
      process.kill(-run.npm.pid, 'SIGKILL');
    } catch {
      // The group is gone already.
    }
  }
  // The demo keeps its controller log for a person to read; a test run leaves nothing behind.
  const logPath = run.lines.map((line) => /^Controller log: (\S+)$/.exec(line)?.[1]).find(Boolean);
  if (logPath) rmSync(dirname(logPath), { recursive: true, force: true });
});

type Target = 'npm' | 'script' | 'process group';

// Each case starts the whole demo (about a minute): each pid once, each signal once. The script handles SIGINT and
// SIGTERM with one handler, and npm passes either on to it, so the pairs left out take no other path.
const CASES: readonly (readonly [Target, NodeJS.Signals])[] = [
  ['npm', 'SIGTERM'],
  ['script', 'SIGINT'],
  // Ctrl-C in a terminal: the controller receives it directly, and from the script as a request (twice: npm passes
  // its own copy on to the script too).
  ['process group', 'SIGINT'],
];

describe('npm start (the demo) stopped by a signal', () => {
  it.each(CASES)(
    '%s sent %s: every process of the demo gone, its state directory removed, npm exits 0',
    async (target, signal) => {
      const demo = await startDemo();
      const { processes } = demo;
      if (target === 'npm') process.kill(demo.npmPid, signal);
      else if (target === 'script') process.kill(processes.script.pid, signal);
      else process.kill(-demo.npmPid, signal);

      const exit = await waitForExit(demo);
      const output = demo.lines.join('\n');
      expect({ code: exit.code, signal: exit.signal }, output).toEqual({ code: 0, signal: null });
      expect(demo.lines).toContain('Stopped the local control plane.');
      const { watchdog, ...waitedFor } = processes;
      // The controller waits for each of these before it exits, and npm for the script and the controller.
      expect(
        Object.values(waitedFor)
          .filter((info) => !isGone(info))
          .map(describeProcess),
      ).toEqual([]);
      expect(await watchdogGone(watchdog), describeProcess(watchdog)).toBe(true);
      expect(
        allProcesses()
          .filter((info) => info.state !== 'Z' && info.commandLine.some((arg) => arg.includes(demo.stateDir)))
          .map(describeProcess),
      ).toEqual([]);
      expect(existsSync(demo.stateDir)).toBe(false);
    },
    TEST_TIMEOUT_MS,
  );
});
