import type { Logger } from 'pino';
import type { ObjectKey } from '../client/resource.js';

/** What to reconcile: the namespace and name of one object of the controller's primary type. */
export type Request = ObjectKey;

/**
 * What the reconciler wants next. `{}` means done until something changes. `requeueAfterMs` runs it again after that
 * delay (and resets the failure backoff); `requeue` runs it again soon through the rate limiter. Throwing means
 * failure: the request is retried with per-item exponential backoff.
 */
export interface Result {
  readonly requeue?: boolean | undefined;
  readonly requeueAfterMs?: number | undefined;
}

export interface ReconcileContext {
  /** Carries `controller`, `namespace`, `name` and `reconcileID`. */
  readonly logger: Logger;
  /** Aborted when the controller stops (shutdown or lost leadership): pass it to API calls. */
  readonly signal: AbortSignal;
  readonly reconcileID: string;
}

/**
 * Drives the object named by the request towards its desired state. Level-triggered: it must read the current state
 * and act on it, not on which event caused the call, and running it twice must change nothing the second time.
 */
export interface Reconciler {
  reconcile(request: Request, context: ReconcileContext): Promise<Result>;
}

/** Adapts a function to a `Reconciler`. */
export function reconcilerFunc(
  reconcile: (request: Request, context: ReconcileContext) => Promise<Result>,
): Reconciler {
  return { reconcile };
}
