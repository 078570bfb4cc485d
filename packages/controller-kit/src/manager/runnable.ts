/**
 * Something the manager runs (controller-runtime's `Runnable`): `start` runs until `signal` aborts, then stops its
 * work and resolves. Rejecting means it failed, which stops the manager.
 */
export interface Runnable {
  start(signal: AbortSignal): Promise<void>;
  /** True for work that must only run on the leader (controllers); false for caches and servers. */
  readonly needLeaderElection: boolean;
}

/** A runnable the manager waits for before starting controllers, and whose sync is the readiness signal. */
export interface SyncingRunnable extends Runnable {
  /** Resolves true once synced, false if `signal` aborted first. */
  waitForCacheSync(signal: AbortSignal): Promise<boolean>;
  hasSynced(): boolean;
}

export function isSyncingRunnable(runnable: Runnable): runnable is SyncingRunnable {
  const candidate = runnable as Partial<SyncingRunnable>;
  return typeof candidate.waitForCacheSync === 'function' && typeof candidate.hasSynced === 'function';
}

/**
 * A server reached through a Service that keeps serving for a while once a stop is requested (the webhook server with
 * a shutdown delay, as kube-apiserver's `--shutdown-delay-duration`). The manager tells it of the stop at once, while
 * controllers stop and the Lease is released without waiting for it, and stops the caches only after it has finished,
 * since its handlers read them.
 */
export interface DelayedStopRunnable extends Runnable {
  /** How long it serves after the stop request before it stops accepting connections. */
  readonly shutdownDelayMs: number;
}

/** True for a runnable with a shutdown delay above 0; one without is stopped with the caches, as any other. */
export function hasShutdownDelay(runnable: Runnable): runnable is DelayedStopRunnable {
  const candidate = runnable as Partial<DelayedStopRunnable>;
  return typeof candidate.shutdownDelayMs === 'number' && candidate.shutdownDelayMs > 0;
}
