import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ProcessExit, ProcessRegistry } from './processes.js';

export interface WatchedProcessOptions {
  /** Names the log file (`<name>.log`) and the temporary directory. */
  readonly name: string;
  /** The executable, e.g. `process.execPath` for a Node program. */
  readonly command: string;
  /**
   * The arguments, given the run's temporary directory. At least one argument must contain it (e.g. a kubeconfig
   * copied there, or a `--cert-dir` in it): the watchdog only kills a process whose command line names its directory,
   * so a recycled PID of an unrelated process is never killed.
   */
  readonly args: (stateDir: string) => readonly string[];
  /** The environment; this process's by default. */
  readonly env?: NodeJS.ProcessEnv;
}

export interface WatchedProcess {
  readonly pid: number;
  /** Temporary directory of this run; removed by stop (kept when `TALLY_TESTENV_KEEP=1`). */
  readonly stateDir: string;
  /** stdout and stderr, appended. */
  readonly logPath: string;
  /** Resolves when the process exits. */
  readonly exited: Promise<ProcessExit>;
  /** The exit, once it happened. */
  exit(): ProcessExit | undefined;
  /** The last lines of the log. */
  logTail(lines?: number): string;
  /** SIGKILLs the process group and removes the directory. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts a helper process for a test (a controller under test, next to the control plane) in its own process group,
 * with its output in a log file and under the same watchdog as the control plane: if the test process dies without
 * calling `stop()`, the process is killed and its directory removed.
 */
export function startWatchedProcess(options: WatchedProcessOptions): WatchedProcess {
  const stateDir = mkdtempSync(join(tmpdir(), `tally-${options.name.replace(/[^a-z0-9-]/gi, '-')}-`));
  const logDir = join(stateDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const args = options.args(stateDir);
  if (!args.some((arg) => arg.includes(stateDir))) {
    rmSync(stateDir, { recursive: true, force: true });
    throw new Error(
      `startWatchedProcess(${options.name}): no argument mentions the state directory ${stateDir}, so the watchdog ` +
        'could not recognise the process; pass a file or directory inside it',
    );
  }
  const registry = new ProcessRegistry(stateDir, logDir);
  const managed = registry.spawn(options.name, options.command, args, options.name, options.env ?? process.env);
  const keep = process.env.TALLY_TESTENV_KEEP === '1' || process.env.TALLY_TESTENV_KEEP === 'true';
  return {
    pid: managed.pid,
    stateDir,
    logPath: managed.logPath,
    exited: managed.exited,
    exit: () => managed.exit,
    logTail: (lines) => managed.logTail(lines),
    stop: () => registry.destroy({ keepAll: keep }),
  };
}
