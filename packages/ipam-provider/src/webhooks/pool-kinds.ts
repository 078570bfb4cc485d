import {
  GLOBAL_TALLY_IP_POOL_KIND,
  GLOBAL_TALLY_PREFIX_POOL_KIND,
  GlobalTallyIPPool,
  GlobalTallyPrefixPool,
  TALLY_IP_POOL_KIND,
  TALLY_PREFIX_POOL_KIND,
  TallyIPPool,
  type TallyPoolKind,
  TallyPrefixPool,
} from '@tally-ipam/api-types';
import { z } from 'zod';

type Named<T extends { metadata: { name?: string | undefined } }> = T & { metadata: { name: string } };

/** Any of Tally's four pool objects as stored (named); `kind` tells which. */
export type TallyPool =
  | Named<TallyIPPool>
  | Named<GlobalTallyIPPool>
  | Named<TallyPrefixPool>
  | Named<GlobalTallyPrefixPool>;

/**
 * The API types allow a missing name (a create may carry only `generateName`); objects read back from the server
 * and objects in admission requests (named by then) always have one, which the cache's object type requires.
 */
function stored<T extends { metadata: { name?: string | undefined } }>(schema: z.ZodType<T>): z.ZodType<Named<T>> {
  return z.unknown().transform((raw, context): Named<T> => {
    const result = schema.safeParse(raw);
    if (!result.success) {
      for (const issue of result.error.issues) context.addIssue({ ...issue, code: 'custom', message: issue.message });
      return z.NEVER;
    }
    const name = result.data.metadata.name;
    if (name === undefined) {
      context.addIssue({ code: 'custom', path: ['metadata', 'name'], message: 'a stored object has a name' });
      return z.NEVER;
    }
    return { ...result.data, metadata: { ...result.data.metadata, name } };
  }) as unknown as z.ZodType<Named<T>>;
}

/** One pool kind as the webhooks see it: the schema admission requests are parsed with, and its resource names. */
export interface PoolKindInfo {
  readonly kind: TallyPoolKind;
  readonly plural: string;
  readonly namespaced: boolean;
  readonly schema: z.ZodType<TallyPool>;
}

function poolKind(kind: TallyPoolKind, namespaced: boolean, schema: z.ZodType<TallyPool>): PoolKindInfo {
  return { kind, plural: `${kind.toLowerCase()}s`, namespaced, schema };
}

/** The four pool kinds, in the order the README lists them. */
export const POOL_KINDS: readonly PoolKindInfo[] = [
  poolKind(TALLY_IP_POOL_KIND, true, stored(TallyIPPool)),
  poolKind(GLOBAL_TALLY_IP_POOL_KIND, false, stored(GlobalTallyIPPool)),
  poolKind(TALLY_PREFIX_POOL_KIND, true, stored(TallyPrefixPool)),
  poolKind(GLOBAL_TALLY_PREFIX_POOL_KIND, false, stored(GlobalTallyPrefixPool)),
];

/** `Kind namespace/name` (or `Kind name` for a cluster-scoped pool), as messages name a pool. */
export function describePool(pool: TallyPool): string {
  const { namespace, name } = pool.metadata;
  return namespace ? `${pool.kind} ${namespace}/${name}` : `${pool.kind} ${name}`;
}
