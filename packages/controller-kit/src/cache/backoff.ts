export interface BackoffOptions {
  /** First delay (client-go's reflector: 800 ms). */
  readonly initialMs?: number;
  /** Cap (client-go's reflector: 30 s). */
  readonly maxMs?: number;
  /** Each delay is stretched by up to this fraction at random, so many clients do not retry in lockstep. */
  readonly jitter?: number;
}

/** Capped exponential backoff with jitter for reconnecting list/watch after a failure. */
export class Backoff {
  private failures = 0;
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly jitter: number;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? 800;
    this.maxMs = options.maxMs ?? 30_000;
    this.jitter = options.jitter ?? 0.5;
  }

  /** Records a failure and returns how long to wait before the next attempt. */
  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * 2 ** this.failures);
    this.failures += 1;
    return Math.round(base * (1 + this.jitter * Math.random()));
  }

  /** Consecutive failures so far. */
  get attempts(): number {
    return this.failures;
  }

  reset(): void {
    this.failures = 0;
  }
}

/** Resolves after `ms`, or early (without rejecting) when the signal aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
