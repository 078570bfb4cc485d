/** A signal that aborts when `parent` does (or after a deadline); `dispose` detaches it from `parent`. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  dispose(): void;
}

/** The children of one parent signal, and the single listener that tells them all. */
interface Fanout {
  readonly children: Set<(reason: unknown) => void>;
  readonly onAbort: () => void;
}

const fanouts = new WeakMap<AbortSignal, Fanout>();

/**
 * Registers `child` to be called with `parent`'s reason when it aborts and returns its deregistration. However many children are alive at
 * once, `parent` carries one listener for all of them (removed with the last child): a long-lived signal shared by
 * every reconcile and watch of a manager would otherwise collect one listener per request in flight and trip Node's
 * MaxListenersExceededWarning under load, though nothing leaks.
 */
function attach(parent: AbortSignal, child: (reason: unknown) => void): () => void {
  let fanout = fanouts.get(parent);
  if (!fanout) {
    const children = new Set<(reason: unknown) => void>();
    const onAbort = (): void => {
      fanouts.delete(parent);
      for (const each of children) each(parent.reason);
      children.clear();
    };
    fanout = { children, onAbort };
    fanouts.set(parent, fanout);
    parent.addEventListener('abort', onAbort, { once: true });
  }
  const { children, onAbort } = fanout;
  children.add(child);
  return () => {
    if (!children.delete(child) || children.size > 0) return;
    parent.removeEventListener('abort', onAbort);
    if (fanouts.get(parent)?.children === children) fanouts.delete(parent);
  };
}

/**
 * Calls `onAbort` with `parent`'s reason when it aborts (now, if it already has); returns the deregistration. For a
 * request that needs no signal of its own: cheaper than an AbortController per request, with the same one listener
 * on `parent` however many requests share it.
 */
export function onParentAbort(parent: AbortSignal | undefined, onAbort: (reason: unknown) => void): () => void {
  if (!parent) return () => undefined;
  if (parent.aborted) {
    onAbort(parent.reason);
    return () => undefined;
  }
  return attach(parent, onAbort);
}

/** Aborts `controller` with `parent` (now, if it already is); returns the deregistration. */
function follow(parent: AbortSignal | undefined, controller: AbortController): () => void {
  return onParentAbort(parent, (reason) => controller.abort(reason));
}

/** A child of `parent` (or a free-standing signal without one) that is aborted with it, until disposed. */
export function linkedSignal(parent: AbortSignal | undefined): LinkedSignal {
  const controller = new AbortController();
  return { signal: controller.signal, dispose: follow(parent, controller) };
}

/**
 * Like `AbortSignal.any([parent, AbortSignal.timeout(ms)])`, but leaves nothing attached to `parent` once disposed —
 * `AbortSignal.any` keeps a listener on a long-lived parent per call until garbage collection, which adds up in a
 * loop that runs every retry period.
 */
export function linkedTimeoutSignal(parent: AbortSignal | undefined, ms: number): LinkedSignal {
  const controller = new AbortController();
  const detach = follow(parent, controller);
  const timer = setTimeout(
    () => controller.abort(new DOMException(`timed out after ${ms} ms`, 'TimeoutError')),
    Math.max(1, Math.ceil(ms)),
  );
  return {
    signal: controller.signal,
    dispose: () => {
      clearTimeout(timer);
      detach();
    },
  };
}
