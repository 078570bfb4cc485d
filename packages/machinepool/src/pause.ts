import { PAUSED_CONDITION } from '@tally-ipam/api-types';
import type { KubeObject } from '@tally-ipam/controller-kit/cache';
import {
  type Condition,
  type ConditionInput,
  getCondition,
  isPaused,
  pausedCondition,
  setCondition,
} from '@tally-ipam/controller-kit/capi';
import type { Client, ObjectOf, ResourceKind } from '@tally-ipam/controller-kit/client';
import { conditionsOf } from './object-conditions.js';

export interface EnsurePausedConditionInput<R extends ResourceKind> {
  readonly client: Client;
  /** The resource of `object`; its `/status` is patched. */
  readonly resource: R;
  /** The object's Cluster; undefined when it has none (not found). */
  readonly cluster: KubeObject | undefined;
  readonly object: ObjectOf<R>;
  readonly now?: Date | undefined;
  readonly signal?: AbortSignal | undefined;
}

export interface EnsurePausedConditionResult<T> {
  /** Reconciling must stop here: the Cluster is paused or the object has the paused annotation. */
  readonly paused: boolean;
  /** The object after the write, or the input when nothing had to change. */
  readonly object: T;
  /** A status patch was sent. */
  readonly updated: boolean;
}

/** True when the `Paused` condition would change in status, reason, message or observedGeneration. */
export function pausedConditionChanged(current: Condition | undefined, desired: ConditionInput): boolean {
  return (
    current === undefined ||
    current.status !== desired.status ||
    current.reason !== desired.reason ||
    current.message !== (desired.message ?? '') ||
    current.observedGeneration !== desired.observedGeneration
  );
}

/**
 * CAPI's `paused.EnsurePausedCondition` for a provider object: computes `Paused` (True/`Paused` saying why, or
 * False/`NotPaused`; `observedGeneration` = the object's generation), writes it through `/status` with the object's
 * resourceVersion as precondition when it changed, and says whether the reconcile must stop.
 */
export async function ensurePausedCondition<R extends ResourceKind>(
  input: EnsurePausedConditionInput<R>,
): Promise<EnsurePausedConditionResult<ObjectOf<R>>> {
  const desired = pausedCondition(input.cluster, input.object);
  const paused = isPaused(input.cluster, input.object);
  const conditions = conditionsOf(input.object);
  if (!pausedConditionChanged(getCondition(conditions, PAUSED_CONDITION), desired)) {
    return { paused, object: input.object, updated: false };
  }
  const next = setCondition(conditions, desired, input.now ?? new Date());
  const written = await input.client.patchStatus(
    input.resource,
    input.object,
    { conditions: next },
    { signal: input.signal },
  );
  return { paused, object: written, updated: true };
}
