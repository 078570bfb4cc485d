import type { KubeObject } from '@tally-ipam/controller-kit/cache';
import { type Condition, ensurePausedCondition, setCondition } from '@tally-ipam/controller-kit/capi';
import {
  addFinalizer,
  type Client,
  type ObjectOf,
  type ResourceKind,
  removeFinalizer,
} from '@tally-ipam/controller-kit/client';
import type { ReconcileContext, Result } from '@tally-ipam/controller-kit/controller';
import { DELETING_REASON, READY_CONDITION } from './api/v1alpha1/constants.js';

/** A safety net while what an object waits for is being deleted; delete events normally re-queue it first. */
export const DELETION_POLL_MS = 5_000;

export interface LifecycleInput<R extends ResourceKind> {
  readonly client: Client;
  readonly resource: R;
  readonly object: ObjectOf<R>;
  /** The object's `status.conditions` as typed by its kind. */
  readonly conditions: readonly Condition[] | undefined;
  readonly finalizer: string;
  readonly now: Date;
  readonly context: ReconcileContext;
}

/**
 * The start every Sim reconcile shares once its Cluster is known: the `Paused` condition (written, and the reconcile
 * stops, when paused), then the finalizer. Undefined when paused; otherwise the object with its finalizer and the
 * conditions to build on (with `Paused` set), written with the rest of the status at the end of the reconcile.
 */
export async function pauseThenFinalizer<R extends ResourceKind>(
  input: LifecycleInput<R> & { readonly cluster: KubeObject },
): Promise<{ object: ObjectOf<R>; conditions: Condition[] } | undefined> {
  const pause = await ensurePausedCondition({
    client: input.client,
    resource: input.resource,
    cluster: input.cluster,
    object: input.object,
    conditions: input.conditions,
    write: 'when paused',
    now: input.now,
    signal: input.context.signal,
  });
  if (pause.paused) return undefined;
  const object = await addFinalizer(input.client, input.resource, input.object, input.finalizer, {
    signal: input.context.signal,
  });
  return { object, conditions: pause.conditions };
}

/**
 * The end every Sim deletion shares: while something is still going (`waitingFor` says what), `Ready` is False with
 * reason `Deleting` and the object is looked at again; once nothing is, the finalizer goes.
 */
export async function finishDeletion<R extends ResourceKind>(
  input: LifecycleInput<R> & {
    readonly waitingFor: string | undefined;
    /** Writes the conditions into the object's status, as its reconciler writes status. */
    readonly writeConditions: (conditions: Condition[]) => Promise<void>;
  },
): Promise<Result> {
  if (input.waitingFor !== undefined) {
    const conditions = setCondition(
      input.conditions,
      {
        type: READY_CONDITION,
        status: 'False',
        reason: DELETING_REASON,
        message: input.waitingFor,
        observedGeneration: input.object.metadata.generation ?? 0,
      },
      input.now,
    );
    await input.writeConditions(conditions);
    return { requeueAfterMs: DELETION_POLL_MS };
  }
  await removeFinalizer(input.client, input.resource, input.object, input.finalizer, { signal: input.context.signal });
  return {};
}
