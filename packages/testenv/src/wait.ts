import { setTimeout as delay } from 'node:timers/promises';

export interface WaitOptions {
  /** How long to keep trying (default 30 s). */
  readonly timeoutMs?: number;
  /** Pause between attempts (default 100 ms). */
  readonly intervalMs?: number;
  /** Called once on timeout; its JSON goes into the message, to show the last state seen. */
  readonly describe?: () => unknown;
}

type Awaitable<T> = T | Promise<T>;

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_INTERVAL_MS = 100;

/**
 * Polls `attempt` until it returns a value other than `undefined` or `false`, and resolves with it. A throw counts as
 * "not yet"; on timeout the error says what was awaited, for how long, and the last error or state seen (the last
 * error is also its `cause`). Tests wait on conditions this way, never on fixed sleeps.
 */
export async function waitFor<T>(
  what: string,
  attempt: () => Awaitable<T | undefined | false>,
  options: WaitOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
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
      const detail =
        lastError !== undefined
          ? lastError instanceof Error
            ? lastError.message
            : String(lastError)
          : options.describe
            ? `last state: ${JSON.stringify(options.describe())}`
            : 'condition not met';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}: ${detail}`, { cause: lastError });
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
