import * as z from 'zod';
import type { ValidationRule } from '../../crd/structural-schema.js';
import { ObjectMeta } from '../../meta/v1/types.js';
import { smallIntText } from './cel.js';
import { TALLY_V1ALPHA1_API_VERSION } from './constants.js';

/** What the four pool kinds share: they differ only in kind, spec and status. */

/** The object schema of one pool kind. */
export function poolObjectSchema<K extends string, Spec extends z.ZodType, Status extends z.ZodType>(
  kind: K,
  spec: Spec,
  status: Status,
): z.ZodObject<{
  apiVersion: z.ZodLiteral<typeof TALLY_V1ALPHA1_API_VERSION>;
  kind: z.ZodLiteral<K>;
  metadata: typeof ObjectMeta;
  spec: Spec;
  status: z.ZodOptional<Status>;
}> {
  return z.object({
    apiVersion: z.literal(TALLY_V1ALPHA1_API_VERSION),
    kind: z.literal(kind),
    metadata: ObjectMeta,
    spec,
    status: status.optional(),
  });
}

/**
 * The transition rule that keeps a length field (`prefix`, `allocationPrefixLength`, 0..128) at its first value;
 * `why` says what depends on it. The message names both values.
 */
export function immutableLengthRule(field: string, why: string): ValidationRule {
  return {
    rule: 'self == oldSelf',
    // The fallback when the new value is out of range and the expression cannot look it up.
    message: `${field} is immutable (${why})`,
    messageExpression: `'${field} is immutable (${why}): was ' + ${smallIntText('oldSelf')} + ', now ' + ${smallIntText('self')}`,
    reason: 'FieldValueForbidden',
  };
}
