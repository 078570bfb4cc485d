import { type ProcessExit, type WaitOptions, waitFor } from '@tally-ipam/testenv';

/** A process we started and wait on: how it ended, if it did, and its last log lines. */
export interface Awaited {
  exit(): ProcessExit | undefined;
  logTail(lines?: number): string;
}

/**
 * testenv's `waitFor`, except that the process exiting ends the wait at once with its last log lines (a throw inside
 * `waitFor`'s attempt only counts as "not yet", so a dead process would otherwise be waited on until the deadline).
 */
export async function waitWhileRunning<T>(
  what: string,
  process: Awaited,
  name: string,
  probe: () => Promise<T | undefined | false>,
  options: WaitOptions,
): Promise<T> {
  const outcome = await waitFor(
    what,
    async () => {
      const exit = process.exit();
      if (exit) return { exit };
      const value = await probe();
      return value === undefined || value === false ? undefined : { value };
    },
    options,
  );
  if ('exit' in outcome) {
    throw new Error(
      `${name} exited (${JSON.stringify(outcome.exit)}) while waiting for ${what}:\n${process.logTail(30)}`,
    );
  }
  return outcome.value;
}
