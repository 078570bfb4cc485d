import type { KubeObject } from '@tally-ipam/controller-kit/cache';
import { type Condition, conditionsOf, ensurePausedCondition, setCondition } from '@tally-ipam/controller-kit/capi';
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

/** What every Sim reconciler's dependencies hold: the client it writes with and its clock. */
export interface LifecycleDeps {
  readonly client: Client;
  readonly now: () => Date;
}

/** The object a reconcile is about: its resource, the object as the cache holds it, and its finalizer. */
export interface LifecycleTarget<R extends ResourceKind> {
  readonly resource: R;
  readonly object: ObjectOf<R>;
  readonly finalizer: string;
}

/** Where a reconcile that was not paused starts from. */
export interface ReconcileStart<R extends ResourceKind> {
  /** The object with its finalizer. */
  readonly object: ObjectOf<R>;
  /** Its conditions with `Paused` set, to build on and write with the rest of the status at the end. */
  readonly conditions: Condition[];
  readonly now: Date;
  readonly generation: number;
}

/**
 * The start every Sim reconcile shares once its Cluster is known: the `Paused` condition (written, and the reconcile
 * stops, when paused), then the finalizer. Undefined when paused.
 */
export async function pauseThenFinalizer<R extends ResourceKind>(
  deps: LifecycleDeps,
  target: LifecycleTarget<R> & { readonly cluster: KubeObject },
  context: ReconcileContext,
): Promise<ReconcileStart<R> | undefined> {
  const now = deps.now();
  const pause = await ensurePausedCondition({
    client: deps.client,
    resource: target.resource,
    cluster: target.cluster,
    object: target.object,
    conditions: conditionsOf(target.object),
    write: 'when paused',
    now,
    signal: context.signal,
  });
  if (pause.paused) return undefined;
  const object = await addFinalizer(deps.client, target.resource, target.object, target.finalizer, {
    signal: context.signal,
  });
  return { object, conditions: pause.conditions, now, generation: target.object.metadata.generation ?? 0 };
}

/**
 * The end every Sim deletion shares: while something is still going (`waitingFor` says what), `Ready` is False with
 * reason `Deleting` and the object is looked at again; once nothing is, the finalizer goes.
 */
export async function finishDeletion<R extends ResourceKind>(
  deps: LifecycleDeps,
  target: LifecycleTarget<R>,
  context: ReconcileContext,
  deletion: {
    readonly waitingFor: string | undefined;
    /** Writes the conditions into the object's status, as its reconciler writes status. */
    readonly writeConditions: (conditions: Condition[]) => Promise<void>;
  },
): Promise<Result> {
  if (deletion.waitingFor !== undefined) {
    const conditions = setCondition(
      conditionsOf(target.object),
      {
        type: READY_CONDITION,
        status: 'False',
        reason: DELETING_REASON,
        message: deletion.waitingFor,
        observedGeneration: target.object.metadata.generation ?? 0,
      },
      deps.now(),
    );
    await deletion.writeConditions(conditions);
    return { requeueAfterMs: DELETION_POLL_MS };
  }
  await removeFinalizer(deps.client, target.resource, target.object, target.finalizer, { signal: context.signal });
  return {};
}
