/** The IPAddress of an allocation, created as Metal3's controller creates it. */
import {
  METAL3_IP_ADDRESS_FINALIZER,
  METAL3_IP_ADDRESS_KIND,
  METAL3_IPAM_V1ALPHA1_API_VERSION,
} from '@tally-ipam/api-types';
import { type Client, isAlreadyExists } from '@tally-ipam/controller-kit/client';
import type { ReconcileContext } from '@tally-ipam/controller-kit/controller';
import type { Metal3Allocation } from '../allocate.js';
import {
  METAL3_ADDRESS_RESOURCE,
  type StoredMetal3Address,
  type StoredMetal3Claim,
  type StoredMetal3Pool,
} from '../resources.js';

/**
 * Creates the IPAddress with Metal3's name, owner references, finalizer and the claim's labels; an existing one of
 * this claim with this address is returned, another claim's is 'taken'.
 */
export async function createAddress(
  client: Client,
  claim: StoredMetal3Claim,
  pool: StoredMetal3Pool,
  allocation: Metal3Allocation,
  context: ReconcileContext,
): Promise<StoredMetal3Address | 'taken'> {
  const namespace = pool.metadata.namespace ?? '';
  try {
    return await client.create(
      METAL3_ADDRESS_RESOURCE,
      {
        apiVersion: METAL3_IPAM_V1ALPHA1_API_VERSION,
        kind: METAL3_IP_ADDRESS_KIND,
        metadata: {
          name: allocation.name,
          namespace,
          finalizers: [METAL3_IP_ADDRESS_FINALIZER],
          ownerReferences: [ownerReference(pool), ownerReference(claim)],
          ...(claim.metadata.labels ? { labels: claim.metadata.labels } : {}),
        },
        spec: {
          address: allocation.address,
          pool: { name: pool.metadata.name, namespace },
          claim: { name: claim.metadata.name, namespace },
          ...(allocation.prefix === undefined ? {} : { prefix: allocation.prefix }),
          ...(allocation.gateway === undefined ? {} : { gateway: allocation.gateway }),
          ...(allocation.dnsServers.length > 0 ? { dnsServers: [...allocation.dnsServers] } : {}),
        },
      },
      { signal: context.signal },
    );
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
    const live = await client.get(
      METAL3_ADDRESS_RESOURCE,
      { namespace, name: allocation.name },
      { signal: context.signal },
    );
    return live.spec.claim?.name === claim.metadata.name && live.spec.address === allocation.address ? live : 'taken';
  }
}

/** The owner reference Metal3 writes: apiVersion, kind, name, uid; neither controller nor blockOwnerDeletion. */
function ownerReference(owner: StoredMetal3Pool | StoredMetal3Claim): {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
} {
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid ?? '' };
}
