import { Conditions } from '@tally-ipam/api-types';
import type { KubeObject } from '@tally-ipam/controller-kit/cache';
import type { Condition } from '@tally-ipam/controller-kit/capi';
import * as z from 'zod';

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
