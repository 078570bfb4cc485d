import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { freePort } from '@tally-ipam/testenv';

/** The built entry point: the tests run exactly what `npm start` and a container run. */
export const MAIN_JS = fileURLToPath(new URL('../dist/main.js', import.meta.url));

export interface ControllerProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Every stdout line so far. */
  readonly lines: readonly string[];
  /** stderr so far, for failure messages. */
  stderr(): string;
  /** Resolves with the first line (from the start) matching, or rejects after the deadline or on exit. */
  waitForLine(matches: (line: string) => boolean, what: string, timeoutMs?: number): Promise<string>;
  /** Sends `signal` and resolves with the exit code; rejects if the process has not exited by the deadline. */
  stop(signal: NodeJS.Signals, timeoutMs?: number): Promise<number | null>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts the controller: `entry` is `dist/main.js` unless a caller runs another build of it (the bench's bundle). */
export function startController(
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  entry: string = MAIN_JS,
): ControllerProcess {
  // TALLY_CONTROLLER_CPU_PROF_DIR: write each controller's V8 CPU profile there when it exits (for benchmarks).
  const profileDir = process.env.TALLY_CONTROLLER_CPU_PROF_DIR;
  const nodeArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const child = spawn(process.execPath, [...nodeArgs, entry, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`could not start ${entry}`);
  const lines: string[] = [];
  let pending = '';
  let errors = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    errors = `${errors}${chunk}`.slice(-20_000);
  });
  const exited = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
  });
  const tail = (): string =>
    `\n--- last stdout ---\n${lines.slice(-30).join('\n')}\n--- stderr ---\n${errors.slice(-4_000)}`;
  return {
    child,
    pid: child.pid,
    lines,
    stderr: () => errors,
    exited,
    async waitForLine(matches, what, timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = lines.find(matches);
        if (found !== undefined) return found;
        if (hasExited) throw new Error(`controller exited while waiting for ${what}${tail()}`);
        if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms${tail()}`);
        await delay(100);
      }
    },
    async stop(signal, timeoutMs = 60_000) {
      if (!hasExited) child.kill(signal);
      const outcome = await Promise.race([exited, delay(timeoutMs).then(() => undefined)]);
      if (!outcome) {
        child.kill('SIGKILL');
        throw new Error(`controller did not exit within ${timeoutMs} ms of ${signal}${tail()}`);
      }
      return outcome.code;
    },
  };
}

/** pino JSON log lines; other lines are skipped. */
export function logRecords(lines: readonly string[]): Record<string, unknown>[] {
  return lines.flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

/** The port from the manager's `serving <what>` log line (`{"address":"127.0.0.1:41234","msg":"serving metrics"}`). */
export async function servingPort(process: ControllerProcess, what: string): Promise<number> {
  const line = await process.waitForLine(
    (text) => text.includes(`"msg":"serving ${what}`),
    `"serving ${what}" log line`,
  );
  const address = JSON.parse(line) as { address?: string };
  const port = Number(address.address?.split(':').pop());
  if (!Number.isInteger(port) || port <= 0) throw new Error(`no port in ${line}`);
  return port;
}

/** Starts of the controller before a taken webhook port fails: each picks a new free port. */
const WEBHOOK_PORT_ATTEMPTS = 3;

/**
 * Starts the controller with its webhook server on a free port (`args` plus `--webhook-port` and `--webhook-cert-dir`)
 * and waits until it serves webhooks. The port must be given before the server starts (`--webhook-port=0` turns it
 * off), and a free port is free only until another socket on the machine takes it: when the process exits unable to
 * listen (EADDRINUSE), it is started again on a new one, as testenv's `freePort` asks of its callers.
 */
export async function startControllerWithWebhooks(
  args: readonly string[],
  certDir: string,
): Promise<{ controller: ControllerProcess; webhookPort: number }> {
  for (let attempt = 1; ; attempt += 1) {
    const webhookPort = await freePort();
    const controller = startController([...args, '--webhook-port', String(webhookPort), '--webhook-cert-dir', certDir]);
    try {
      await controller.waitForLine((line) => line.includes('"msg":"serving webhooks"'), 'the webhook server');
      return { controller, webhookPort };
    } catch (error) {
      const output = `${controller.lines.join('\n')}\n${controller.stderr()}`;
      const portTaken = controller.child.exitCode !== null && output.includes('EADDRINUSE');
      if (attempt >= WEBHOOK_PORT_ATTEMPTS || !portTaken) throw error;
    }
  }
}
