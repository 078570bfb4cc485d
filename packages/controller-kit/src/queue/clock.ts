/**
 * Time as the queue sees it. Production uses the monotonic clock and real timers; tests can drive a manual clock so
 * backoff and delay logic is checked without waiting.
 */
export interface Clock {
  /** Milliseconds on a monotonic scale (only differences are meaningful). */
  now(): number;
  /** Runs `callback` after `delayMs`; the returned function cancels it. */
  schedule(callback: () => void, delayMs: number): () => void;
}

export const realClock: Clock = {
  now: () => performance.now(),
  schedule: (callback, delayMs) => {
    const timer = setTimeout(callback, Math.max(0, delayMs));
    // A pending requeueAfter must not keep a process alive that is otherwise shutting down.
    timer.unref();
    return () => clearTimeout(timer);
  },
};
