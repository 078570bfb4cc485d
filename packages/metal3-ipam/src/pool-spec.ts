import { echo, METAL3_MAX_ERROR_MESSAGE_LENGTH } from '@tally-ipam/api-types';
import * as z from 'zod';
import { type Metal3PoolPlan, translateIPPoolSpec } from './ranges.js';
import type { StoredMetal3Pool } from './resources.js';

/**
 * What the controllers read of an IPPool's spec, as loosely as Metal3's own CRD admits it (its schema has no minimum
 * on prefixes, no family checks): the translation checks the rest and names every problem.
 */
export const LoosePoolSpec = z.looseObject({
  clusterName: z.string().optional(),
  namePrefix: z.string(),
  pools: z
    .array(
      z.looseObject({
        start: z.string().optional(),
        end: z.string().optional(),
        subnet: z.string().optional(),
        prefix: z.number().optional(),
        gateway: z.string().optional(),
        dnsServers: z.array(z.string()).optional(),
      }),
    )
    .optional(),
  preAllocations: z.record(z.string(), z.string()).optional(),
  prefix: z.number().optional(),
  gateway: z.string().optional(),
  dnsServers: z.array(z.string()).optional(),
});

export type PoolPlanResult =
  | { readonly ok: true; readonly plan: Metal3PoolPlan }
  | { readonly ok: false; readonly message: string };

/** `spec.clusterName` of a pool, when it is a non-empty string. */
export function poolClusterName(pool: StoredMetal3Pool): string | undefined {
  const spec = pool.spec as { clusterName?: unknown } | undefined;
  return typeof spec?.clusterName === 'string' && spec.clusterName !== '' ? spec.clusterName : undefined;
}

/** The pool's plan, or a message naming the pool, each field and its value. */
export function planOfPool(pool: StoredMetal3Pool): PoolPlanResult {
  const where = `IPPool ${pool.metadata.namespace ?? ''}/${pool.metadata.name}`;
  const parsed = LoosePoolSpec.safeParse(pool.spec);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .slice(0, 5)
      .map((issue) => `spec.${issue.path.map(String).join('.')}: ${issue.message}`);
    return { ok: false, message: clipMessage(`${where} cannot be served: ${problems.join('; ')}`) };
  }
  const translation = translateIPPoolSpec(parsed.data);
  if (translation.ok) return { ok: true, plan: translation.plan };
  const problems = translation.issues.slice(0, 10).map((issue) => {
    // Most messages carry the value already (`192.168.0.9 is outside every range of spec.pools`); the others get it.
    const value = typeof issue.value === 'string' || typeof issue.value === 'number' ? String(issue.value) : undefined;
    const shown = value === undefined || issue.message.includes(value) ? '' : ` (${echo(value)})`;
    return `${issue.field}: ${issue.message}${shown}`;
  });
  if (translation.issues.length > 10) problems.push(`and ${translation.issues.length - 10} more`);
  return { ok: false, message: clipMessage(`${where} cannot be served: ${problems.join('; ')}`) };
}

/** A message cut to what a claim's `status.errorMessage` holds. */
export function clipMessage(message: string): string {
  return message.length <= METAL3_MAX_ERROR_MESSAGE_LENGTH
    ? message
    : `${message.slice(0, METAL3_MAX_ERROR_MESSAGE_LENGTH - 1)}…`;
}
