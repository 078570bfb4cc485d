import * as z from 'zod';
import {
  DEFAULT_ALLOCATION_PREFIX_LENGTH,
  GLOBAL_TALLY_PREFIX_POOL_KIND,
  MAX_POOL_ENTRIES,
  TALLY_PREFIX_POOL_KIND,
} from './constants.js';
import { AddressEntry, IPText, NetworkCIDR } from './fields.js';
import { immutableLengthRule, poolObjectSchema } from './pool-parts.js';
import { PREFIX_POOL_SPEC_RULES, refinePrefixPoolSpec } from './prefix-pool-rules.js';
import { TallyPrefixPoolStatus } from './status.js';
import { POOL_TENANCY_FIELDS } from './tenancy.js';

const TallyPrefixPoolSpecFields = z.object({
  prefixes: z
    .array(NetworkCIDR)
    .min(1)
    .max(MAX_POOL_ENTRIES)
    .describe('Network-aligned CIDRs of one family that allocations are carved from.'),
  allocationPrefixLength: z
    .int()
    .min(1)
    .max(128)
    .default(DEFAULT_ALLOCATION_PREFIX_LENGTH)
    .describe('Prefix length of every allocation (64: one /64 per claim). At least every pool prefix. Immutable.')
    .meta({
      format: 'int32',
      'x-kubernetes-validations': [immutableLengthRule('allocationPrefixLength', 'allocated prefixes have this size')],
    }),
  gateway: IPText.describe('Gateway written to every IPAddress. Same family as the prefixes.').optional(),
  excludedPrefixes: z
    .array(AddressEntry)
    .max(MAX_POOL_ENTRIES)
    .describe('Addresses, CIDRs and ranges; any allocation overlapping one is skipped.')
    .optional(),
});

/** Spec of TallyPrefixPool and GlobalTallyPrefixPool: sub-prefix delegation (e.g. a /64 per node from a /48). */
export const TallyPrefixPoolSpec = TallyPrefixPoolSpecFields.superRefine(refinePrefixPoolSpec).meta({
  description:
    'Which prefixes the pool carves allocations from, the length of each allocation and what is never handed out.',
  'x-kubernetes-validations': PREFIX_POOL_SPEC_RULES,
});
export type TallyPrefixPoolSpec = z.infer<typeof TallyPrefixPoolSpec>;

/** Spec of GlobalTallyPrefixPool: the prefix pool spec plus which namespaces may claim and how much each may hold. */
export const GlobalTallyPrefixPoolSpec = TallyPrefixPoolSpecFields.extend(POOL_TENANCY_FIELDS)
  .superRefine(refinePrefixPoolSpec)
  .meta({
    description:
      'Which prefixes the pool carves allocations from, the length of each allocation, what is never handed out, ' +
      'and which namespaces may claim how many.',
    'x-kubernetes-validations': PREFIX_POOL_SPEC_RULES,
  });
export type GlobalTallyPrefixPoolSpec = z.infer<typeof GlobalTallyPrefixPoolSpec>;

export const TallyPrefixPool = poolObjectSchema(
  TALLY_PREFIX_POOL_KIND,
  TallyPrefixPoolSpec,
  TallyPrefixPoolStatus,
).describe('TallyPrefixPool hands out whole prefixes (e.g. one /64 each) to IPAddressClaims in its namespace.');
export type TallyPrefixPool = z.infer<typeof TallyPrefixPool>;

export const GlobalTallyPrefixPool = poolObjectSchema(
  GLOBAL_TALLY_PREFIX_POOL_KIND,
  GlobalTallyPrefixPoolSpec,
  TallyPrefixPoolStatus,
).describe('GlobalTallyPrefixPool hands out whole prefixes to IPAddressClaims in any namespace.');
export type GlobalTallyPrefixPool = z.infer<typeof GlobalTallyPrefixPool>;
