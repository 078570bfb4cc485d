/** A signal that aborts when `parent` does or after `ms`; `dispose` detaches it (no listener is left on `parent`). */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  dispose(): void;
}

/**
 * Like `AbortSignal.any([parent, AbortSignal.timeout(ms)])`, but leaves nothing attached to `parent` once disposed —
 * `AbortSignal.any` keeps a listener on a long-lived parent per call until garbage collection, which adds up in a
 * loop that runs every retry period.
 */
export function linkedTimeoutSignal(parent: AbortSignal | undefined, ms: number): LinkedSignal {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(parent?.reason);
  const timer = setTimeout(
    () => controller.abort(new DOMException(`timed out after ${ms} ms`, 'TimeoutError')),
    Math.max(1, Math.ceil(ms)),
  );
  if (parent?.aborted) onAbort();
  else parent?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    dispose: () => {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onAbort);
    },
  };
}
