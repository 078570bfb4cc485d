import type { KubeObject, SharedInformer } from '@tally-ipam/controller-kit';

/** An informer a start-up step reads, waited for until it has listed. */
export type StartUpInformer = Pick<SharedInformer<KubeObject>, 'hasSynced' | 'whenSynced'>;

export interface StartUpStepOptions<T> {
  /** Listed before `run` starts: the step walks their stores once and must see every object. */
  readonly informers: readonly StartUpInformer[];
  /** Awaited before the informers (a gate of the embedding process). */
  readonly after?: (() => Promise<unknown>) | undefined;
  readonly run: () => Promise<T>;
}

/**
 * A step that must finish before any allocation — an allocation barrier (`IPAMProvider.addAllocationBarrier`) — run
 * at most once per process: every caller shares the one run, and a failure is forgotten so that the next caller (the
 * next reconcile) runs it again. Once per process is once per leadership, since a process that loses its Lease exits.
 * Barriers are awaited in reconciles, which can start before every informer of the cache has listed (another
 * controller's), so the step first waits for its own informers. That wait is never aborted: without the resources the
 * manager stops the process on its cache-sync deadline.
 */
export function startUpStep<T>(options: StartUpStepOptions<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  const forever = new AbortController().signal;
  const runOnce = async (): Promise<T> => {
    await options.after?.();
    for (const informer of options.informers) {
      if (!informer.hasSynced()) await informer.whenSynced(forever);
    }
    return options.run();
  };
  return () => {
    running ??= runOnce().catch((error: unknown) => {
      running = undefined;
      throw error;
    });
    return running;
  };
}
