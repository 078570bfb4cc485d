import * as z from 'zod';
import { ObjectName } from '../../meta/v1/types.js';
import {
  ALLOCATION_STRATEGIES,
  DEFAULT_ALLOCATION_STRATEGY,
  GLOBAL_TALLY_IP_POOL_KIND,
  MAX_POOL_ENTRIES,
  MAX_RESERVATIONS,
  TALLY_IP_POOL_KIND,
} from './constants.js';
import { AddressEntry, IPText } from './fields.js';
import { IP_POOL_SPEC_RULES, refineIPPoolSpec } from './ip-pool-rules.js';
import { immutableLengthRule, poolObjectSchema } from './pool-parts.js';
import { TallyIPPoolStatus } from './status.js';
import { POOL_TENANCY_FIELDS } from './tenancy.js';

/** A static address for the claim of this name (metal3's `preAllocations`, as a list-map keyed by claimName). */
export const Reservation = z.object({
  claimName: ObjectName.describe('Name of the IPAddressClaim (in the namespace of the claim) that gets the address.'),
  address: IPText.describe('The address that claim always receives. Same family as the pool.'),
});
export type Reservation = z.infer<typeof Reservation>;

const TallyIPPoolSpecFields = z.object({
  addresses: z
    .array(AddressEntry)
    .min(1)
    .max(MAX_POOL_ENTRIES)
    .describe(
      'Addresses the pool hands out: single IPs, CIDRs (host bits are ignored: 10.0.0.1/24 is the whole /24) ' +
        'and first-last ranges, all of one family and inside the prefix network of the first entry.',
    ),
  prefix: z
    .int()
    .min(0)
    .max(128)
    .describe('Prefix length of the network the addresses belong to, written to every IPAddress. Immutable.')
    .meta({
      format: 'int32',
      'x-kubernetes-validations': [immutableLengthRule('prefix', 'allocated addresses carry it')],
    }),
  gateway: IPText.describe('Gateway written to every IPAddress; never allocated. Same family as the pool.').optional(),
  excludedAddresses: z
    .array(AddressEntry)
    .max(MAX_POOL_ENTRIES)
    .describe('Addresses, CIDRs and ranges never handed out.')
    .optional(),
  allocateReservedIPAddresses: z
    .boolean()
    .describe(
      'Also hand out the network and broadcast addresses of IPv4 networks and the first (anycast) address of ' +
        'IPv6 networks. Default false.',
    )
    .optional(),
  addressReuseGracePeriodSeconds: z
    .int()
    .min(0)
    .max(2147483647)
    .describe('Seconds a released address stays unallocatable (ARP caches, rolling upgrades). Default 0.')
    .meta({ format: 'int32' })
    .optional(),
  allocationStrategy: z
    .enum(ALLOCATION_STRATEGIES)
    .default(DEFAULT_ALLOCATION_STRATEGY)
    .describe(
      'LowestFree: the lowest free address. Random: a uniformly random free address. ' +
        'LeastRecentlyReleased: never-used addresses first, then the one released longest ago.',
    ),
  reservations: z
    .array(Reservation)
    .max(MAX_RESERVATIONS)
    .describe('Static addresses by claim name. The address must be in the pool and not excluded.')
    .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['claimName'] })
    .optional(),
});

/** Spec of TallyIPPool and GlobalTallyIPPool: the reference provider's pool spec plus strategy and reservations. */
export const TallyIPPoolSpec = TallyIPPoolSpecFields.superRefine(refineIPPoolSpec).meta({
  description:
    'Which addresses the pool hands out (addresses minus excludedAddresses and the gateway), the network they ' +
    'belong to, how one is chosen and which claims get a fixed one.',
  'x-kubernetes-validations': IP_POOL_SPEC_RULES,
});
export type TallyIPPoolSpec = z.infer<typeof TallyIPPoolSpec>;

/** Spec of GlobalTallyIPPool: the IP pool spec plus which namespaces may claim and how much each may hold. */
export const GlobalTallyIPPoolSpec = TallyIPPoolSpecFields.extend(POOL_TENANCY_FIELDS)
  .superRefine(refineIPPoolSpec)
  .meta({
    description:
      'Which addresses the pool hands out (addresses minus excludedAddresses and the gateway), the network they ' +
      'belong to, how one is chosen, which claims get a fixed one, and which namespaces may claim how many.',
    'x-kubernetes-validations': IP_POOL_SPEC_RULES,
  });
export type GlobalTallyIPPoolSpec = z.infer<typeof GlobalTallyIPPoolSpec>;

/** A namespaced pool of single addresses; serves claims in its own namespace. */
export const TallyIPPool = poolObjectSchema(TALLY_IP_POOL_KIND, TallyIPPoolSpec, TallyIPPoolStatus).describe(
  'TallyIPPool hands out single IP addresses to IPAddressClaims in its namespace.',
);
export type TallyIPPool = z.infer<typeof TallyIPPool>;

/** A cluster-scoped pool of single addresses; serves claims in every namespace. */
export const GlobalTallyIPPool = poolObjectSchema(
  GLOBAL_TALLY_IP_POOL_KIND,
  GlobalTallyIPPoolSpec,
  TallyIPPoolStatus,
).describe('GlobalTallyIPPool hands out single IP addresses to IPAddressClaims in any namespace.');
export type GlobalTallyIPPool = z.infer<typeof GlobalTallyIPPool>;
