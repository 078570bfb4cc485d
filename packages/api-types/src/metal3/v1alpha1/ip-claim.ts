import * as z from 'zod';
import { ObjectMeta } from '../../meta/v1/types.js';
import {
  METAL3_IP_CLAIM_KIND,
  METAL3_IPAM_V1ALPHA1_API_VERSION,
  METAL3_MAX_ERROR_MESSAGE_LENGTH,
} from './constants.js';
import { Metal3ObjectReference, requiredReference } from './fields.js';

/** `ipam.metal3.io/v1alpha1` IPClaim as ip-address-manager/api v1.10.1 defines it (`ipclaim_types.go`). */

/** Go `IPClaimSpec`. */
export const Metal3IPClaimSpec = z
  .object({
    pool: requiredReference('pool', 'Pool is the IPPool this was generated from.'),
  })
  .describe('IPClaimSpec defines the desired state of IPClaim.');
export type Metal3IPClaimSpec = z.infer<typeof Metal3IPClaimSpec>;

/** Go `IPClaimStatus`. */
export const Metal3IPClaimStatus = z
  .object({
    address: Metal3ObjectReference.describe('Address is the IPAddress that was generated for this claim.').optional(),
    errorMessage: z
      .string()
      .max(METAL3_MAX_ERROR_MESSAGE_LENGTH)
      .describe('ErrorMessage contains the error message.')
      .optional(),
  })
  .describe('IPClaimStatus defines the observed state of IPClaim.');
export type Metal3IPClaimStatus = z.infer<typeof Metal3IPClaimStatus>;

export const Metal3IPClaim = z
  .object({
    apiVersion: z.literal(METAL3_IPAM_V1ALPHA1_API_VERSION),
    kind: z.literal(METAL3_IP_CLAIM_KIND),
    metadata: ObjectMeta,
    spec: Metal3IPClaimSpec,
    status: Metal3IPClaimStatus.optional(),
  })
  .describe('IPClaim is the Schema for the ipclaims API.');
export type Metal3IPClaim = z.infer<typeof Metal3IPClaim>;
