import { controllerOwnerOf, type SharedInformer } from '@tally-ipam/controller-kit/cache';
import type { ObjectKey } from '@tally-ipam/controller-kit/client';
import { SIM_GROUP } from './api/v1alpha1/constants.js';
import type { StoredAddress, StoredClaim, StoredCluster, StoredMachine } from './resources.js';

// Map functions that more than one Sim controller's watches use: which Sim objects an event of another kind
// concerns. What only one controller watches is declared in its own folder (`<kind>/watches.ts`).

/** The Sim object a CAPI object points at through `infrastructureRef`, if it is of `kind`. */
export function infrastructureRequest(object: StoredCluster | StoredMachine, kind: string): ObjectKey[] {
  return infrastructureRefRequest(object.metadata.namespace, object.spec?.infrastructureRef, kind);
}

export function infrastructureRefRequest(
  namespace: string | undefined,
  ref: { apiGroup: string; kind: string; name: string } | undefined,
  kind: string,
): ObjectKey[] {
  if (!ref || ref.kind !== kind || ref.apiGroup !== SIM_GROUP) return [];
  return [{ namespace, name: ref.name }];
}

/** IPAddress → its claim → the claim's controller, if that is a Sim object of `kind`. */
export function addressToClaimOwner(
  claims: SharedInformer<StoredClaim>,
  kind: string,
): (address: StoredAddress) => ObjectKey[] {
  return (address) => {
    const claim = claims.store.get(`${address.metadata.namespace}/${address.spec.claimRef.name}`);
    const owner = claim ? controllerOwnerOf(claim) : undefined;
    if (!owner || owner.kind !== kind || !owner.apiVersion.startsWith(`${SIM_GROUP}/`)) return [];
    return [{ namespace: address.metadata.namespace, name: owner.name }];
  };
}
