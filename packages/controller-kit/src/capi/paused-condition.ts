import { Conditions } from '@tally-ipam/api-types';
import * as z from 'zod';
import type { KubeObject } from '../cache/object.js';
import type { Client } from '../client/client.js';
import { isNotFound } from '../client/errors.js';
import type { ObjectOf } from '../client/object-schema.js';
import type { ResourceKind } from '../client/resource.js';
import { type Condition, type ConditionInput, getCondition, setCondition } from './conditions.js';
import { PAUSED_CONDITION } from './constants.js';
import { type PauseOptions, pausedCondition } from './pause.js';

const WithConditions = z.looseObject({
  status: z.looseObject({ conditions: Conditions.optional() }).optional(),
});

/**
 * The `status.conditions` of any object, parsed with metav1.Condition's schema. An object whose conditions do not
 * parse is reported as an error naming it, rather than treated as having none (which would rewrite them).
 */
export function conditionsOf(object: KubeObject): Condition[] {
  const parsed = WithConditions.safeParse(object);
  if (!parsed.success) {
    throw new Error(
      `${object.kind ?? 'object'} ${object.metadata.namespace ?? ''}/${object.metadata.name}: status.conditions are not valid metav1.Conditions (${z.prettifyError(parsed.error)}); fix or remove them`,
    );
  }
  return parsed.data.status?.conditions ?? [];
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

export interface EnsurePausedConditionInput<R extends ResourceKind> extends PauseOptions {
  readonly client: Client;
  /** The resource of `object`; its `/status` is patched. */
  readonly resource: R;
  /** The object's Cluster; undefined when it has none (not found). */
  readonly cluster: KubeObject | undefined;
  readonly object: ObjectOf<R>;
  /** The conditions to set `Paused` in; default: the object's `status.conditions` (`conditionsOf`). */
  readonly conditions?: readonly Condition[] | undefined;
  /**
   * `'always'` (default, CAPI's `paused.EnsurePausedCondition`): write `Paused` whenever it changed. `'when paused'`:
   * write only when the reconcile stops here; otherwise the caller writes the returned conditions with the rest of
   * its status, one status write per reconcile.
   */
  readonly write?: 'always' | 'when paused' | undefined;
  readonly now?: Date | undefined;
  readonly signal?: AbortSignal | undefined;
}

export interface EnsurePausedConditionResult<T> {
  /** Reconciling must stop here: the Cluster is paused or the object has the paused annotation. */
  readonly paused: boolean;
  /** The object after the write, or the input when nothing was written. */
  readonly object: T;
  /** A status patch was sent. */
  readonly updated: boolean;
  /** The conditions with `Paused` set: what was written, or what the caller still has to write. */
  readonly conditions: Condition[];
}

/**
 * The pause step of a provider's reconcile (CAPI's `paused.EnsurePausedCondition`): computes `Paused` (True/`Paused`
 * saying why, or False/`NotPaused`; `observedGeneration` = the object's generation), writes it through `/status`
 * with the object's resourceVersion as precondition when it changed, and says whether the reconcile must stop. An
 * object deleted meanwhile is not an error: there is nothing left to report on.
 */
export async function ensurePausedCondition<R extends ResourceKind>(
  input: EnsurePausedConditionInput<R>,
): Promise<EnsurePausedConditionResult<ObjectOf<R>>> {
  const desired = pausedCondition(input.cluster, input.object, input);
  const paused = desired.status === 'True';
  const current = input.conditions ?? conditionsOf(input.object);
  const changed = pausedConditionChanged(getCondition(current, PAUSED_CONDITION), desired);
  const conditions = setCondition(current, desired, input.now ?? new Date());
  if (!changed || (input.write === 'when paused' && !paused)) {
    return { paused, object: input.object, updated: false, conditions };
  }
  try {
    const written = await input.client.patchStatus(
      input.resource,
      input.object,
      { conditions },
      { signal: input.signal },
    );
    return { paused, object: written, updated: true, conditions };
  } catch (error) {
    if (!isNotFound(error)) throw error;
    return { paused, object: input.object, updated: false, conditions };
  }
}
