import { setTimeout as delay } from 'node:timers/promises';

export interface WaitOptions {
  /** How long to keep trying (default 120 s, `DEFAULT_WAIT_TIMEOUT_MS`: a bound for a hang, not a speed). */
  readonly timeoutMs?: number;
  /** Pause between attempts (default 100 ms). */
  readonly intervalMs?: number;
  /**
   * Called once on timeout (it may be async, e.g. read the object from the API server); its JSON goes into the message,
   * to show the last state seen. A failure to read it is reported in its place.
   */
  readonly describe?: () => unknown;
  /** Where to look when the wait times out (a log file, a component's logs); appended to the message as "see …". */
  readonly hint?: string;
}

type Awaitable<T> = T | Promise<T>;

/**
 * The deadline of a wait that names none. It only stops a hang, so it must not be a time a busy machine reaches: the
 * conditions tests await by default (an object reconciled, a watch event seen, a process listening) take a second or
 * two on a quiet machine and many times that when its two cores are shared (two test projects at once, other work, the
 * CPU hog of `npm test -- --stress`), where the former default of 30 s, inherited by every caller, was a wall-clock
 * deadline. 120 s is four times that and still fails a hang inside the test timeouts (180-1200 s) of the packages
 * that wait on a control plane; a wait that can legitimately take longer (a burst, a restart, a leader change) names
 * its own.
 */
export const DEFAULT_WAIT_TIMEOUT_MS = 120_000;
const DEFAULT_INTERVAL_MS = 100;

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function describedState(describe: () => unknown): Promise<string> {
  try {
    return JSON.stringify(await describe()) ?? 'undefined';
  } catch (error) {
    return `(could not read it: ${messageOf(error)})`;
  }
}

/**
 * Polls `attempt` until it returns a value other than `undefined` or `false`, and resolves with it. A throw counts as
 * "not yet"; on timeout the error says what was awaited, for how long, the last error seen (also its `cause`), the
 * `describe()` state and the `hint`. Tests wait on conditions this way, never on fixed sleeps.
 */
export async function waitFor<T>(
  what: string,
  attempt: () => Awaitable<T | undefined | false>,
  options: WaitOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await attempt();
      if (value !== undefined && value !== false) return value;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const details: string[] = [];
      if (lastError !== undefined) details.push(messageOf(lastError));
      if (options.describe) details.push(`last state: ${await describedState(options.describe)}`);
      const detail = details.length > 0 ? details.join('; ') : 'condition not met';
      const hint = options.hint ? `\nsee ${options.hint}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}: ${detail}${hint}`, { cause: lastError });
    }
    await delay(options.intervalMs ?? DEFAULT_INTERVAL_MS);
  }
}

/**
 * Retries `attempt` until it returns without throwing, and resolves with what it returned (which may be `undefined`).
 * For steps that fail until something takes effect: a webhook configuration, a certificate reload, a CRD.
 */
export async function eventually<T>(what: string, attempt: () => Awaitable<T>, options: WaitOptions = {}): Promise<T> {
  const settled = await waitFor(what, async () => ({ value: await attempt() }), options);
  return settled.value;
}

/**
 * Runs `work` for every item, in order, with at most `limit` in flight (bursts of creates against the API server).
 * After a failure no further item starts; the promise rejects with the first failure once the items in flight settle.
 */
export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<unknown>,
): Promise<void> {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(`forEachLimited: limit must be a positive integer, got ${String(limit).slice(0, 20)}`);
  }
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const item = items[next] as T;
      next += 1;
      try {
        await work(item);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, worker));
  const failure = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failure) throw failure.reason;
}
