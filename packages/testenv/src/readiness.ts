import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage, formatDuration } from './format.js';
import type { ManagedProcess } from './processes.js';

/** A control plane process died or never became ready; says which one and where its log is. */
export class ControlPlaneStartError extends Error {
  constructor(
    message: string,
    readonly processName: string,
    readonly logPath: string,
    /** True when the process could not bind its port, so a retry with new ports may succeed. */
    readonly portConflict: boolean,
  ) {
    super(message);
    this.name = 'ControlPlaneStartError';
  }
}

/** Default budget for one process to become ready; `TALLY_TESTENV_START_TIMEOUT_MS` overrides it. */
export function startTimeoutMs(): number {
  const fromEnv = Number(process.env.TALLY_TESTENV_START_TIMEOUT_MS);
  return Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : 120_000;
}

function diedError(process: ManagedProcess, what: string): ControlPlaneStartError {
  const exit = process.exit;
  const how = exit?.signal ? `was killed by ${exit.signal}` : `exited with code ${exit?.code}`;
  return new ControlPlaneStartError(
    `${process.name} ${how} while waiting for ${what}; its log is ${process.logPath}. Last lines:\n${process.logTail()}`,
    process.name,
    process.logPath,
    process.portWasTaken(),
  );
}

/**
 * Polls `probe` until it returns true. Fails fast, naming the process and its log, when one of `watched` exits;
 * fails with the last probe error when the timeout passes.
 */
export async function waitUntil(
  what: string,
  probe: () => Promise<boolean>,
  watched: readonly ManagedProcess[],
  timeoutMs = startTimeoutMs(),
): Promise<void> {
  const started = Date.now();
  let lastProblem = 'not ready yet';
  for (let delay = 25; ; delay = Math.min(delay * 2, 250)) {
    const dead = watched.find((p) => p.exit !== undefined);
    if (dead) throw diedError(dead, what);
    try {
      if (await probe()) return;
    } catch (error) {
      lastProblem = errorMessage(error);
    }
    const deadAfterProbe = watched.find((p) => p.exit !== undefined);
    if (deadAfterProbe) throw diedError(deadAfterProbe, what);
    if (Date.now() - started > timeoutMs) {
      const main = watched.at(-1);
      throw new ControlPlaneStartError(
        `timed out after ${formatDuration(timeoutMs)} waiting for ${what} (last: ${lastProblem})` +
          (main ? `; ${main.name}'s log is ${main.logPath}. Last lines:\n${main.logTail()}` : ''),
        main?.name ?? what,
        main?.logPath ?? '',
        false,
      );
    }
    await sleep(delay);
  }
}
