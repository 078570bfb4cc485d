import * as z from 'zod';
import type { ValidationRule } from '../../crd/structural-schema.js';
import { ObjectMeta } from '../../meta/v1/types.js';
import { inspectIP } from '../../tally/v1alpha1/addresses.js';
import { IPText } from '../../tally/v1alpha1/fields.js';
import { echo, isIntegerInRange } from '../../text/clip.js';
import { METAL3_IP_ADDRESS_KIND, METAL3_IPAM_V1ALPHA1_API_VERSION } from './constants.js';
import { ipTextWith, Metal3Prefix, requiredReference } from './fields.js';
import { Metal3DNSServers } from './ip-pool.js';

/**
 * `ipam.metal3.io/v1alpha1` IPAddress as ip-address-manager/api v1.10.1 defines it (`ipaddress_types.go`): no
 * status. It is the source of truth of an allocation; its address, pool and claim never change (Metal3's webhook
 * rules, as CEL here).
 */

const ADDRESS_RULES: ValidationRule[] = [
  {
    rule: '!has(self.gateway) || !isIP(self.gateway) || !isIP(self.address) || ip(self.gateway).family() == ip(self.address).family()',
    message: 'gateway is not of the IP family of the address',
    messageExpression: `'gateway ' + self.gateway + ' is not of the IP family of the address ' + self.address`,
    fieldPath: '.gateway',
    reason: 'FieldValueInvalid',
  },
  {
    rule: '!has(self.prefix) || self.prefix <= 32 || !isIP(self.address) || ip(self.address).family() == 6',
    message: 'prefix is longer than 32, the maximum for an IPv4 address',
    fieldPath: '.prefix',
    reason: 'FieldValueInvalid',
  },
];

interface AddressView {
  address?: string | undefined;
  gateway?: string | undefined;
  prefix?: number | undefined;
}

function refineAddress(spec: AddressView, ctx: z.RefinementCtx): void {
  const address = spec.address === undefined ? undefined : inspectIP(spec.address);
  if (!address?.ok || spec.address === undefined) return;
  const gateway = spec.gateway === undefined ? undefined : inspectIP(spec.gateway);
  if (gateway?.ok && spec.gateway !== undefined && gateway.value.family !== address.value.family) {
    ctx.addIssue({
      code: 'custom',
      path: ['gateway'],
      message: `gateway ${echo(spec.gateway)} is not of the IP family of the address ${echo(spec.address)}`,
    });
  }
  if (address.value.family === 4 && isIntegerInRange(spec.prefix, 33, 128)) {
    ctx.addIssue({
      code: 'custom',
      path: ['prefix'],
      message: 'prefix is longer than 32, the maximum for an IPv4 address',
    });
  }
}

/** Go `IPAddressSpec`. */
export const Metal3IPAddressSpec = z
  .object({
    claim: requiredReference('claim', 'Claim points to the object the IPClaim was created for.'),
    pool: requiredReference('pool', 'Pool is the IPPool this was generated from.'),
    prefix: Metal3Prefix.optional(),
    gateway: IPText.describe('Gateway is the gateway ip address.').optional(),
    address: ipTextWith({
      rule: 'self == oldSelf',
      message: 'address is immutable: an IPAddress is one allocation',
      messageExpression: `'address is immutable: an IPAddress is one allocation (was ' + oldSelf + ', now ' + self + ')'`,
      reason: 'FieldValueForbidden',
    }).describe('Address contains the IP address. Immutable.'),
    dnsServers: Metal3DNSServers.optional(),
  })
  .superRefine(refineAddress)
  .meta({ 'x-kubernetes-validations': ADDRESS_RULES })
  .describe('IPAddressSpec defines the desired state of IPAddress.');
export type Metal3IPAddressSpec = z.infer<typeof Metal3IPAddressSpec>;

export const Metal3IPAddress = z
  .object({
    apiVersion: z.literal(METAL3_IPAM_V1ALPHA1_API_VERSION),
    kind: z.literal(METAL3_IP_ADDRESS_KIND),
    metadata: ObjectMeta,
    spec: Metal3IPAddressSpec,
  })
  .describe('IPAddress is the Schema for the ipaddresses API.');
export type Metal3IPAddress = z.infer<typeof Metal3IPAddress>;
