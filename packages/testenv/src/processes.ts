import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startWatchdog } from './watchdog.js';

export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** One control plane process (etcd, kube-apiserver, kube-controller-manager) with its output in a log file. */
export class ManagedProcess {
  #exit: ProcessExit | undefined;
  readonly exited: Promise<ProcessExit>;

  constructor(
    readonly name: string,
    readonly pid: number,
    readonly logPath: string,
    child: ChildProcess,
  ) {
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.#exit = { code, signal };
        resolve(this.#exit);
      });
    });
  }

  get exit(): ProcessExit | undefined {
    return this.#exit;
  }

  /** SIGKILL to the process group (each process leads its own), then wait until it is gone. */
  async kill(): Promise<void> {
    if (this.#exit) return;
    killGroup(this.pid);
    await this.exited;
  }

  /** The last lines of the log, for error messages. */
  logTail(lines = 15): string {
    try {
      return readFileSync(this.logPath, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** Whether the log says the process could not bind its port (another process took it after we picked it). */
  portWasTaken(): boolean {
    try {
      return /address already in use/i.test(readFileSync(this.logPath, 'utf8'));
    } catch {
      return false;
    }
  }
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

/** Every live registry, so an exiting process can clean up synchronously. */
const liveRegistries = new Set<ProcessRegistry>();
let exitHookInstalled = false;

function cleanUpAllSync(): void {
  for (const registry of liveRegistries) registry.destroySync();
}

/**
 * `exit` covers process.exit() and uncaught errors. Signals are deliberately not handled here: a listener would
 * change what SIGINT/SIGTERM do to the host process (and can deadlock with libraries such as signal-exit that only
 * re-raise when they are alone). A process killed by a signal is cleaned up by the watchdog instead.
 */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', cleanUpAllSync);
}

/**
 * The processes of one control plane and its state directory. Keeps `pids.json` current for the watchdog, which
 * kills them if this Node process dies without cleaning up.
 */
export class ProcessRegistry {
  readonly #processes = new Set<ManagedProcess>();
  readonly #pidsFile: string;
  #watchdogPid: number | undefined;
  #destroyed = false;

  constructor(
    readonly stateDir: string,
    readonly logDir: string,
  ) {
    this.#pidsFile = join(stateDir, 'pids.json');
    this.#writePids();
    this.#watchdogPid = startWatchdog(stateDir);
    liveRegistries.add(this);
    installExitHook();
  }

  get processes(): readonly ManagedProcess[] {
    return [...this.#processes];
  }

  /**
   * Spawns `binary` in its own process group with stdout and stderr appended to `<logDir>/<logName>.log`, with
   * `env` as its environment (this process's by default).
   */
  spawn(
    name: string,
    binary: string,
    args: readonly string[],
    logName = name,
    env: NodeJS.ProcessEnv = process.env,
  ): ManagedProcess {
    if (this.#destroyed) throw new Error(`cannot start ${name}: the control plane was stopped`);
    const logPath = join(this.logDir, `${logName}.log`);
    const logFd = openSync(logPath, 'a');
    let child: ChildProcess;
    try {
      writeFileSync(logFd, `$ ${binary} ${args.join(' ')}\n`);
      child = spawn(binary, args, { detached: true, stdio: ['ignore', logFd, logFd], env });
    } finally {
      closeSync(logFd);
    }
    let spawnError: Error | undefined;
    // Spawn errors (ENOENT, EACCES) arrive as an event; without a listener they would crash the process.
    child.once('error', (error) => {
      spawnError = error;
    });
    if (child.pid === undefined) {
      throw new Error(`could not start ${name} (${binary}): ${spawnError?.message ?? 'no process id'}; see ${logPath}`);
    }
    const managed = new ManagedProcess(name, child.pid, logPath, child);
    this.#processes.add(managed);
    this.#writePids();
    void managed.exited.then(() => {
      this.#processes.delete(managed);
      if (!this.#destroyed) this.#writePids();
    });
    return managed;
  }

  #writePids(): void {
    const pids = [...this.#processes].map((p) => ({ pid: p.pid, name: p.name }));
    writeFileSync(this.#pidsFile, JSON.stringify(pids));
  }

  /** Kills every process (concurrently) and waits for them to exit. */
  async killAll(): Promise<void> {
    await Promise.all([...this.#processes].map((p) => p.kill()));
  }

  /** Kills every process, stops the watchdog and removes the state directory (or all but the logs, or nothing). */
  async destroy(options: { keepLogs?: boolean; keepAll?: boolean } = {}): Promise<void> {
    if (this.#destroyed) return;
    await this.killAll();
    this.#destroyed = true;
    liveRegistries.delete(this);
    this.#stopWatchdog();
    rmSync(this.#pidsFile, { force: true });
    if (options.keepAll) return;
    if (options.keepLogs) {
      removeAllExcept(this.stateDir, this.logDir);
    } else {
      rmSync(this.stateDir, { recursive: true, force: true, maxRetries: 5 });
    }
  }

  /** For the `exit` hook, which cannot wait: SIGKILL everything, delete the state directory. */
  destroySync(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    for (const p of this.#processes) killGroup(p.pid);
    this.#stopWatchdog();
    try {
      rmSync(this.stateDir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // Best effort: a process may still be writing; the OS's temp cleaning takes the rest.
    }
    liveRegistries.delete(this);
  }

  #stopWatchdog(): void {
    if (this.#watchdogPid === undefined) return;
    try {
      process.kill(this.#watchdogPid, 'SIGTERM');
    } catch {
      // It already exited.
    }
    this.#watchdogPid = undefined;
  }
}

function removeAllExcept(dir: string, keep: string): void {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (path === keep) continue;
    rmSync(path, { recursive: true, force: true, maxRetries: 3 });
  }
}
