import { spawn } from 'node:child_process';

/**
 * A tiny detached Node process that outlives its parent: when the parent process disappears (SIGKILL, a crash, an
 * exit that skipped cleanup), it kills every process listed in `pids.json` and removes the state directory. It exits
 * on its own once `pids.json` is gone (a normal stop). Passed to `node -e` so it needs no file of its own, which keeps
 * it working both from `dist/` and from TypeScript sources under vitest.
 *
 * A listed PID is only killed while its command line still mentions the state directory, so a recycled PID of an
 * unrelated process is left alone.
 */
const WATCHDOG_SOURCE = `
const fs = require('node:fs');
const path = require('node:path');
const parentPid = Number(process.env.TALLY_WATCHDOG_PARENT_PID);
const stateDir = process.env.TALLY_WATCHDOG_STATE_DIR;
const pidsFile = path.join(stateDir, 'pids.json');
const linux = fs.existsSync('/proc/self/stat');
function procStat(pid) {
  try {
    const text = fs.readFileSync('/proc/' + pid + '/stat', 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0], startTime: fields[19] };
  } catch { return undefined; }
}
const parentStart = linux ? procStat(parentPid)?.startTime : undefined;
function parentAlive() {
  if (linux) {
    const stat = procStat(parentPid);
    return stat !== undefined && stat.state !== 'Z' && stat.startTime === parentStart;
  }
  try { process.kill(parentPid, 0); return true; } catch (e) { return e.code === 'EPERM'; }
}
function ours(pid) {
  if (!linux) return true;
  try { return fs.readFileSync('/proc/' + pid + '/cmdline', 'utf8').includes(stateDir); } catch { return false; }
}
function readPids() {
  try { return JSON.parse(fs.readFileSync(pidsFile, 'utf8')).map((p) => p.pid).filter(Number.isInteger); }
  catch { return undefined; }
}
function running(pid) {
  if (linux) return ours(pid);
  try { process.kill(pid, 0); return true; } catch (e) { return e.code === 'EPERM'; }
}
function killAll(pids) {
  for (const pid of pids) {
    if (!ours(pid)) continue;
    try { process.kill(-pid, 'SIGKILL'); } catch { try { process.kill(pid, 'SIGKILL'); } catch {} }
  }
}
// The state directory goes only once no listed process runs any more: a process in uninterruptible disk I/O (etcd's
// fsync on a loaded machine) dies only when that I/O ends and could still create files, which made a single removal
// attempt fail and left the directory. Gives up after 10 minutes (an unkillable process).
function cleanUp(pids) {
  const started = Date.now();
  const retry = setInterval(() => {
    killAll(pids);
    if (pids.some(running) && Date.now() - started < 600000) return;
    try {
      fs.rmSync(stateDir, { recursive: true, force: true, maxRetries: 5 });
      clearInterval(retry);
    } catch {
      if (Date.now() - started >= 600000) clearInterval(retry);
    }
  }, 250);
}
const timer = setInterval(() => {
  if (!fs.existsSync(pidsFile)) { clearInterval(timer); return; }
  if (parentAlive()) return;
  clearInterval(timer);
  const pids = readPids() ?? [];
  killAll(pids);
  cleanUp(pids);
}, 250);
process.on('SIGTERM', () => process.exit(0));
`;

/** Starts the watchdog for `stateDir`; returns its PID (the caller stops it on a normal stop). */
export function startWatchdog(stateDir: string): number {
  // The state directory is also an argument, only so that the watchdog shows up when looking for a run's processes.
  const child = spawn(process.execPath, ['-e', WATCHDOG_SOURCE, stateDir], {
    detached: true,
    stdio: 'ignore',
    env: {
      PATH: process.env.PATH ?? '',
      TALLY_WATCHDOG_PARENT_PID: String(process.pid),
      TALLY_WATCHDOG_STATE_DIR: stateDir,
    },
  });
  child.unref();
  if (child.pid === undefined) throw new Error('could not start the control plane watchdog process');
  return child.pid;
}
