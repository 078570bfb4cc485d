import {
  METAL3_IP_ADDRESS_KIND,
  METAL3_IP_CLAIM_KIND,
  METAL3_IP_POOL_KIND,
  METAL3_IPAM_V1ALPHA1_API_VERSION,
  StoredObjectMeta,
} from '@tally-ipam/api-types';
import { type TypedResourceKind, typedResource } from '@tally-ipam/controller-kit/client';
import * as z from 'zod';

/**
 * The Metal3 kinds as the controllers cache them. The cache schemas are loose on purpose: a management cluster may
 * run Metal3's own CRDs, which admit objects Tally's stricter schemas refuse, and such an object must still be seen —
 * an IPAddress dropped by the cache would be an address nobody counts as held. The reconcilers parse what they use
 * (`translateIPPoolSpec` for pools) and report what they cannot.
 */

const reference = z.looseObject({
  name: z.string().optional(),
  namespace: z.string().optional(),
});

export const StoredMetal3Pool = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: StoredObjectMeta,
  spec: z.unknown(),
  status: z.unknown().optional(),
});
export type StoredMetal3Pool = z.infer<typeof StoredMetal3Pool>;

export const StoredMetal3Claim = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: StoredObjectMeta,
  spec: z.looseObject({ pool: reference.optional() }),
  status: z
    .looseObject({
      address: reference.optional(),
      errorMessage: z.string().optional(),
    })
    .optional(),
});
export type StoredMetal3Claim = z.infer<typeof StoredMetal3Claim>;

export const StoredMetal3Address = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: StoredObjectMeta,
  spec: z.looseObject({
    address: z.string().optional(),
    pool: reference.optional(),
    claim: reference.optional(),
  }),
});
export type StoredMetal3Address = z.infer<typeof StoredMetal3Address>;

export const METAL3_POOL_RESOURCE: TypedResourceKind<StoredMetal3Pool> = typedResource(
  { apiVersion: METAL3_IPAM_V1ALPHA1_API_VERSION, kind: METAL3_IP_POOL_KIND, plural: 'ippools', namespaced: true },
  StoredMetal3Pool,
);

export const METAL3_CLAIM_RESOURCE: TypedResourceKind<StoredMetal3Claim> = typedResource(
  { apiVersion: METAL3_IPAM_V1ALPHA1_API_VERSION, kind: METAL3_IP_CLAIM_KIND, plural: 'ipclaims', namespaced: true },
  StoredMetal3Claim,
);

export const METAL3_ADDRESS_RESOURCE: TypedResourceKind<StoredMetal3Address> = typedResource(
  {
    apiVersion: METAL3_IPAM_V1ALPHA1_API_VERSION,
    kind: METAL3_IP_ADDRESS_KIND,
    plural: 'ipaddresses',
    namespaced: true,
  },
  StoredMetal3Address,
);

/** The IPPool a claim names: Metal3 serves only a pool of the claim's own namespace. */
export function poolKeyOfClaim(claim: StoredMetal3Claim): string | undefined {
  const name = claim.spec.pool?.name;
  if (!name) return undefined;
  return `${claim.metadata.namespace ?? ''}/${name}`;
}

/** The IPPool an IPAddress names, in the IPAddress's namespace (as Metal3 lists them). */
export function poolKeyOfAddress(address: StoredMetal3Address): string | undefined {
  const name = address.spec.pool?.name;
  return name ? `${address.metadata.namespace ?? ''}/${name}` : undefined;
}

/** The IPClaim an IPAddress names, in the IPAddress's namespace. */
export function claimKeyOfAddress(address: StoredMetal3Address): string | undefined {
  const name = address.spec.claim?.name;
  return name ? `${address.metadata.namespace ?? ''}/${name}` : undefined;
}

/** Cache indexes of the Metal3 informers. */
export const METAL3_POOL_INDEX = 'metal3:pool';
export const METAL3_CLAIM_INDEX = 'metal3:claim';

/** Index function of Metal3 IPAddresses by the pool they name (one function, so every informerFor call agrees). */
export function addressPoolIndex(address: StoredMetal3Address): string[] {
  const key = poolKeyOfAddress(address);
  return key === undefined ? [] : [key];
}
