import * as z from 'zod';
import { DNS1123_SUBDOMAIN_PATTERN } from '../../meta/v1/patterns.js';
import { ObjectMeta, Time } from '../../meta/v1/types.js';
import { MAX_IP_LENGTH } from '../../tally/v1alpha1/constants.js';
import { IPText } from '../../tally/v1alpha1/fields.js';
import {
  METAL3_IP_POOL_KIND,
  METAL3_IPAM_V1ALPHA1_API_VERSION,
  METAL3_MAX_CLAIM_NAME_LENGTH,
  METAL3_MAX_DNS_SERVERS,
  METAL3_MAX_NAME_PREFIX_LENGTH,
  METAL3_MAX_POOLS,
  METAL3_MAX_PRE_ALLOCATIONS,
} from './constants.js';
import { Metal3Prefix, Metal3Subnet } from './fields.js';
import {
  IP_POOL_SPEC_RULES,
  POOL_RANGE_RULES,
  refineMetal3IPPoolSpec,
  refineMetal3PoolRange,
} from './ip-pool-rules.js';

/**
 * `ipam.metal3.io/v1alpha1` IPPool as github.com/metal3-io/ip-address-manager/api v1.10.1 defines it
 * (`ippool_types.go`), field for field and with the same JSON names; the bounds and cross-field rules Metal3 leaves to
 * its controller are checked at admission here (see ip-pool-rules.ts).
 */

export const Metal3DNSServers = z
  .array(IPText)
  .max(METAL3_MAX_DNS_SERVERS)
  .describe('DNSServers is the list of dns servers.');

const Gateway = IPText.describe('Gateway is the gateway ip address.');

/** Go `Pool`: one range of an IPPool. Its prefix, gateway and DNS servers override the IPPool's. */
export const Metal3PoolRange = z
  .object({
    start: IPText.describe('Start is the first ip address that can be rendered.').optional(),
    end: IPText.describe(
      'End is the last IP address that can be rendered. It is used as a validation that the rendered IP is in bound.',
    ).optional(),
    subnet: Metal3Subnet.describe(
      'Subnet is used to validate that the rendered IP is in bounds. In case the Start value is not given, it is ' +
        'derived from the subnet ip incremented by 1 (`192.168.0.1` for `192.168.0.0/24`).',
    ).optional(),
    prefix: Metal3Prefix.optional(),
    gateway: Gateway.optional(),
    dnsServers: Metal3DNSServers.optional(),
  })
  .superRefine(refineMetal3PoolRange)
  .meta({ 'x-kubernetes-validations': POOL_RANGE_RULES })
  .describe('A range of addresses: start to end, or the subnet without start.');
export type Metal3PoolRange = z.infer<typeof Metal3PoolRange>;

/** `namePrefix`: with '-' and the address it names every IPAddress, so it must start a valid object name. */
export const Metal3NamePrefix = z
  .string()
  .min(1)
  .max(METAL3_MAX_NAME_PREFIX_LENGTH)
  .regex(new RegExp(DNS1123_SUBDOMAIN_PATTERN))
  .describe('namePrefix is the prefix used to generate the IPAddress object names. Immutable.')
  .meta({
    'x-kubernetes-validations': [
      {
        rule: 'self == oldSelf',
        message: 'namePrefix is immutable (the names of the allocated IPAddresses derive from it)',
        messageExpression:
          `'namePrefix is immutable (the names of the allocated IPAddresses derive from it): was ' + oldSelf + ` +
          `', now ' + self`,
        reason: 'FieldValueForbidden',
      },
    ],
  });

const Metal3IPPoolSpecFields = z.object({
  clusterName: z
    .string()
    .min(1)
    .max(63)
    .describe('ClusterName is the name of the Cluster this object belongs to.')
    .optional(),
  pools: z
    .array(Metal3PoolRange)
    .max(METAL3_MAX_POOLS)
    .describe('Pools contains the list of IP addresses pools.')
    .optional(),
  preAllocations: z
    .record(z.string().max(METAL3_MAX_CLAIM_NAME_LENGTH), IPText)
    .meta({ maxProperties: METAL3_MAX_PRE_ALLOCATIONS })
    .describe('PreAllocations contains the preallocated IP addresses: claim name to the address it always gets.')
    .optional(),
  prefix: Metal3Prefix.optional(),
  gateway: Gateway.optional(),
  dnsServers: Metal3DNSServers.optional(),
  namePrefix: Metal3NamePrefix,
});

/** Go `IPPoolSpec`. */
export const Metal3IPPoolSpec = Metal3IPPoolSpecFields.superRefine(refineMetal3IPPoolSpec)
  .meta({ 'x-kubernetes-validations': IP_POOL_SPEC_RULES })
  .describe('IPPoolSpec defines the desired state of IPPool.');
export type Metal3IPPoolSpec = z.infer<typeof Metal3IPPoolSpec>;

/**
 * Go `IPPoolStatus`. The Go field `Allocations` is serialised as `indexes` (its JSON tag): that is the name on the
 * wire, so it is the name here. The controller rebuilds it from the IPAddress objects; it is never a source of truth.
 */
export const Metal3IPPoolStatus = z
  .object({
    lastUpdated: Time.describe('LastUpdated identifies when this status was last observed.').optional(),
    indexes: z
      .record(z.string().max(METAL3_MAX_CLAIM_NAME_LENGTH), z.string().min(1).max(MAX_IP_LENGTH))
      .describe('Allocations (Go field name): claim name to the address it holds, rebuilt from the IPAddresses.')
      .optional(),
  })
  .describe('IPPoolStatus defines the observed state of IPPool.');
export type Metal3IPPoolStatus = z.infer<typeof Metal3IPPoolStatus>;

export const Metal3IPPool = z
  .object({
    apiVersion: z.literal(METAL3_IPAM_V1ALPHA1_API_VERSION),
    kind: z.literal(METAL3_IP_POOL_KIND),
    metadata: ObjectMeta,
    spec: Metal3IPPoolSpec,
    status: Metal3IPPoolStatus.optional(),
  })
  .describe('IPPool is the Schema for the ippools API.');
export type Metal3IPPool = z.infer<typeof Metal3IPPool>;
