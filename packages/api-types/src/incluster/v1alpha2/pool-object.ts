import * as z from 'zod';
import { ObjectMeta } from '../../meta/v1/types.js';
import { IN_CLUSTER_V1ALPHA2_API_VERSION } from './constants.js';

/**
 * An in-cluster pool object around its spec and status. Both are optional, as in Go (`omitempty` on both): the CRD
 * does not require them, and an object without a spec is refused by the webhook rule on `spec.addresses` instead.
 */
export function inClusterPoolObject<K extends string, Spec extends z.ZodType, Status extends z.ZodType>(
  kind: K,
  spec: Spec,
  status: Status,
  description: string,
): z.ZodObject<{
  apiVersion: z.ZodLiteral<typeof IN_CLUSTER_V1ALPHA2_API_VERSION>;
  kind: z.ZodLiteral<K>;
  metadata: typeof ObjectMeta;
  spec: z.ZodOptional<Spec>;
  status: z.ZodOptional<Status>;
}> {
  return z
    .object({
      apiVersion: z.literal(IN_CLUSTER_V1ALPHA2_API_VERSION),
      kind: z.literal(kind),
      metadata: ObjectMeta,
      spec: spec.optional(),
      status: status.optional(),
    })
    .describe(description);
}
