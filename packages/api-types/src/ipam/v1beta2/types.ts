import * as z from 'zod';
import { KIND_PATTERN } from '../../meta/v1/patterns.js';
import { Conditions, ObjectMeta, ObjectName } from '../../meta/v1/types.js';
import { IPADDRESS_KIND, IPADDRESSCLAIM_KIND, IPAM_V1BETA2_API_VERSION } from './constants.js';

/**
 * The `ipam.cluster.x-k8s.io/v1beta2` contract types exactly as Cluster API v1.12 defines them
 * (`api/ipam/v1beta2`). All objects are loose: Tally reads claims and addresses other controllers wrote, and a
 * field we do not know must survive a read-modify-write instead of being silently dropped.
 */

/** `IPPoolReference`: all three fields are required in v1beta2 (the core group "" is impossible). */
export const IPPoolReference = z.looseObject({
  name: ObjectName,
  kind: z.string().min(1).max(63).regex(new RegExp(KIND_PATTERN)),
  apiGroup: ObjectName,
});
export type IPPoolReference = z.infer<typeof IPPoolReference>;

/** `IPAddressReference` / `IPAddressClaimReference`: a same-namespace name. */
export const LocalObjectName = z.looseObject({ name: ObjectName });
export type LocalObjectName = z.infer<typeof LocalObjectName>;

export const IPAddressClaimSpec = z.looseObject({
  clusterName: z.string().min(1).max(63).optional(),
  poolRef: IPPoolReference,
});
export type IPAddressClaimSpec = z.infer<typeof IPAddressClaimSpec>;

export const IPAddressClaimStatus = z.looseObject({
  conditions: Conditions.optional(),
  addressRef: LocalObjectName.optional(),
  deprecated: z.looseObject({}).optional(),
});
export type IPAddressClaimStatus = z.infer<typeof IPAddressClaimStatus>;

export const IPAddressClaim = z.looseObject({
  apiVersion: z.literal(IPAM_V1BETA2_API_VERSION),
  kind: z.literal(IPADDRESSCLAIM_KIND),
  metadata: ObjectMeta,
  spec: IPAddressClaimSpec,
  status: IPAddressClaimStatus.optional(),
});
export type IPAddressClaim = z.infer<typeof IPAddressClaim>;

export const IPAddressSpec = z.looseObject({
  claimRef: LocalObjectName,
  poolRef: IPPoolReference,
  /** Canonical text: IPv6 longer than 39 characters (mixed notation) does not fit upstream's schema. */
  address: z.string().min(1).max(39),
  prefix: z.int().min(0).max(128),
  gateway: z.string().min(1).max(39).optional(),
});
export type IPAddressSpec = z.infer<typeof IPAddressSpec>;

/** IPAddress has no status in the contract. */
export const IPAddress = z.looseObject({
  apiVersion: z.literal(IPAM_V1BETA2_API_VERSION),
  kind: z.literal(IPADDRESS_KIND),
  metadata: ObjectMeta,
  spec: IPAddressSpec,
});
export type IPAddress = z.infer<typeof IPAddress>;
