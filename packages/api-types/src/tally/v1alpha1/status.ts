import * as z from 'zod';
import { Conditions } from '../../meta/v1/types.js';

/**
 * Counts are capped at Number.MAX_SAFE_INTEGER (2^53 − 1): an IPv6 /64 holds 2^64 addresses, more than a JSON
 * number can carry exactly, and a JavaScript reader must get back what was written. The CRD enforces the cap.
 */
const Count = z.int().min(0).max(Number.MAX_SAFE_INTEGER).meta({ format: 'int64' });

/** Address (or prefix) counts of a pool, as in the reference provider's `status.ipAddresses`. */
export const PoolCounts = z.object({
  total: Count.describe('Addresses (prefixes) the pool can hand out: its entries minus exclusions.'),
  used: Count.describe('Addresses (prefixes) allocated to claims, including those outside the current spec.'),
  free: Count.describe('Addresses (prefixes) still available.'),
  outOfRange: Count.describe('Allocated addresses (prefixes) that are no longer inside the pool spec.'),
});
export type PoolCounts = z.infer<typeof PoolCounts>;

const observedGeneration = z.int().min(0).describe('The metadata.generation the status was computed from.').optional();

export const TallyIPPoolStatus = z
  .object({
    ipAddresses: PoolCounts.describe('How many addresses the pool holds, has handed out and has left.').optional(),
    conditions: Conditions.optional().describe('Ready is True while the pool can serve claims.'),
    observedGeneration,
  })
  .describe('What the controller last observed of the pool: its counts and whether it serves claims.');
export type TallyIPPoolStatus = z.infer<typeof TallyIPPoolStatus>;

export const TallyPrefixPoolStatus = z
  .object({
    prefixes: PoolCounts.describe('How many prefixes the pool holds, has handed out and has left.').optional(),
    conditions: Conditions.optional().describe('Ready is True while the pool can serve claims.'),
    observedGeneration,
  })
  .describe('What the controller last observed of the pool: its counts and whether it serves claims.');
export type TallyPrefixPoolStatus = z.infer<typeof TallyPrefixPoolStatus>;
