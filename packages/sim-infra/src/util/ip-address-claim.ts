import { CLUSTER_NAME_LABEL, IPAM_V1BETA2_API_VERSION } from '@tally-ipam/api-types';
import type { KubeObject } from '@tally-ipam/controller-kit/cache';
import { type Client, isAlreadyExists, ownerReferenceTo } from '@tally-ipam/controller-kit/client';
import type { PoolReference } from '../api/v1alpha1/types.js';
import { CLAIM_RESOURCE } from '../resources.js';

/**
 * Creates an IPAddressClaim the IPAM contract's consumer side way: `spec.poolRef`, `spec.clusterName` and the
 * cluster-name label (IPAM providers read either; clusterctl move needs the owner chain), and a controller owner
 * reference to `owner` with blockOwnerDeletion, so garbage collection — where it runs — also removes the claim.
 * False when it already exists (created by an earlier reconcile the cache has not shown yet: its event follows).
 */
export async function createIPAddressClaim(
  client: Client,
  owner: KubeObject,
  claim: { readonly name: string; readonly clusterName: string; readonly poolRef: PoolReference },
  signal: AbortSignal | undefined,
): Promise<boolean> {
  try {
    await client.create(
      CLAIM_RESOURCE,
      {
        apiVersion: IPAM_V1BETA2_API_VERSION,
        kind: 'IPAddressClaim',
        metadata: {
          name: claim.name,
          namespace: owner.metadata.namespace,
          labels: { [CLUSTER_NAME_LABEL]: claim.clusterName },
          ownerReferences: [ownerReferenceTo(owner, { controller: true, blockOwnerDeletion: true })],
        },
        spec: {
          clusterName: claim.clusterName,
          poolRef: { apiGroup: claim.poolRef.apiGroup, kind: claim.poolRef.kind, name: claim.poolRef.name },
        },
      },
      { signal },
    );
    return true;
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
    return false;
  }
}
