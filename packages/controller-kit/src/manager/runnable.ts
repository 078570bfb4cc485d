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
