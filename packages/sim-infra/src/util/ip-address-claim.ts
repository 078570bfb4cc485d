import { CLUSTER_NAME_LABEL, IPAM_V1BETA2_API_VERSION } from '@tally-ipam/api-types';
import { type KubeObject, OWNER_UID_INDEX, type SharedInformer } from '@tally-ipam/controller-kit/cache';
import { getCondition } from '@tally-ipam/controller-kit/capi';
import {
  type Client,
  isAlreadyExists,
  isControlledBy,
  isNotFound,
  ownerReferenceTo,
} from '@tally-ipam/controller-kit/client';
import type { PoolReference } from '../api/v1alpha1/types.js';
import { CLAIM_RESOURCE, type StoredAddress, type StoredClaim } from '../resources.js';

// The IPAM contract's consumer side in three steps any infrastructure provider's reconciler can call: claim an address
// (create the IPAddressClaim, then read where it stands), wait (a level-triggered reconcile calls `claimAddress` again
// on the claim's and the IPAddress's events until it is Bound), release (delete the claims, wait until they are gone).
// Sim's SimMachine (one claim per device and pool) and SimCluster (its control-plane endpoint) both use them.

/** What the steps read and write with: a client, and informers of IPAddressClaims and IPAddresses. */
export interface AddressClaimCaches {
  readonly client: Client;
  readonly claims: Pick<SharedInformer<StoredClaim>, 'store'>;
  readonly addresses: Pick<SharedInformer<StoredAddress>, 'store'>;
}

/** One address a consumer wants: the claim's (deterministic) name, the owning Cluster's name, the pool. */
export interface AddressClaimRequest {
  readonly name: string;
  readonly clusterName: string;
  readonly poolRef: PoolReference;
}

/** The claim's `Ready` condition as the IPAM provider wrote it. */
export interface ClaimReadiness {
  readonly status: string;
  readonly reason: string;
  readonly message: string;
}

/** Where one claim stands after `claimAddress`. Every state but `Bound` means: wait for the next event. */
export type AddressClaimState =
  /** Just created by this call (or created before and not cached yet): its event follows. */
  | { readonly name: string; readonly state: 'Created' }
  /** A claim of that name exists but another object controls it: it is never adopted (it may hold another's address). */
  | { readonly name: string; readonly state: 'Conflict'; readonly message: string }
  /** The claim is being deleted: a new one is created once it is gone. */
  | { readonly name: string; readonly state: 'Deleting' }
  /** No `status.addressRef` yet; the claim's `Ready` condition, when the IPAM provider wrote one. */
  | { readonly name: string; readonly state: 'Pending'; readonly ready?: ClaimReadiness | undefined }
  /** `status.addressRef` names an IPAddress the cache does not show (yet). */
  | { readonly name: string; readonly state: 'AddressMissing'; readonly addressName: string }
  /**
   * The IPAddress is there. `mismatch` is set when its `spec.claimRef` names another claim: the provider must not use
   * an address that is not this claim's.
   */
  | {
      readonly name: string;
      readonly state: 'Bound';
      readonly addressName: string;
      readonly address: StoredAddress['spec'];
      readonly mismatch?: string | undefined;
    };

/**
 * Creates an IPAddressClaim the IPAM contract's consumer side way: `spec.poolRef`, `spec.clusterName` and the
 * cluster-name label (IPAM providers read either; clusterctl move needs the owner chain), and a controller owner
 * reference to `owner` with blockOwnerDeletion, so garbage collection — where it runs — also removes the claim.
 * False when it already exists (created by an earlier reconcile the cache has not shown yet: its event follows).
 */
export async function createIPAddressClaim(
  client: Client,
  owner: KubeObject,
  claim: AddressClaimRequest,
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

/**
 * The claim step: reads the claim `request` names in `owner`'s namespace from the cache, creates it when it is
 * missing, and says where it stands (see `AddressClaimState`). Idempotent: call it on every reconcile until `Bound`;
 * watch IPAddressClaims (owned) and IPAddresses (mapped to the claim's owner) so that each change re-queues `owner`.
 */
export async function claimAddress(
  caches: AddressClaimCaches,
  owner: KubeObject,
  request: AddressClaimRequest,
  signal: AbortSignal | undefined,
): Promise<AddressClaimState> {
  const namespace = owner.metadata.namespace ?? '';
  const name = request.name;
  const claim = caches.claims.store.get(`${namespace}/${name}`);
  if (!claim) {
    await createIPAddressClaim(caches.client, owner, request, signal);
    return { name, state: 'Created' };
  }
  if (!isControlledBy(claim, owner)) {
    const controller = claim.metadata.ownerReferences?.find((ref) => ref.controller);
    return {
      name,
      state: 'Conflict',
      message: `IPAddressClaim ${name} exists but is not controlled by this ${owner.kind ?? 'object'} (${controller ? `its controller is ${controller.kind} ${controller.name}` : 'it has no controller'}); delete or rename it`,
    };
  }
  if (claim.metadata.deletionTimestamp) return { name, state: 'Deleting' };
  const addressName = claim.status?.addressRef?.name;
  if (!addressName) {
    const ready = getCondition(claim.status?.conditions, 'Ready');
    return {
      name,
      state: 'Pending',
      ready: ready ? { status: ready.status, reason: ready.reason, message: ready.message ?? '' } : undefined,
    };
  }
  const address = caches.addresses.store.get(`${namespace}/${addressName}`);
  if (!address) return { name, state: 'AddressMissing', addressName };
  const mismatch =
    address.spec.claimRef.name === name
      ? undefined
      : `IPAddressClaim ${name}: its IPAddress ${addressName} belongs to claim ${address.spec.claimRef.name}`;
  return { name, state: 'Bound', addressName, address: address.spec, mismatch };
}

/** The claims in the cache that `owner` controls (by the owner-UID index). */
export function ownedAddressClaims(caches: AddressClaimCaches, owner: KubeObject): StoredClaim[] {
  const uid = owner.metadata.uid;
  if (!uid) return [];
  return caches.claims.store
    .byIndex(OWNER_UID_INDEX, uid)
    .filter((claim) => claim.metadata.namespace === owner.metadata.namespace && isControlledBy(claim, owner));
}

/** Deletes one claim, guarded by its UID so that a claim re-created under the same name is left alone. */
export async function deleteAddressClaim(
  client: Client,
  claim: StoredClaim,
  signal: AbortSignal | undefined,
): Promise<void> {
  try {
    await client.delete(
      CLAIM_RESOURCE,
      { namespace: claim.metadata.namespace, name: claim.metadata.name },
      { preconditions: { uid: claim.metadata.uid }, signal },
    );
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

/**
 * The release step, for `owner`'s deletion: deletes every claim it controls — by the owner index and by the names it
 * would have used (`names`); when the cache shows none, the API server is asked, since a claim created moments ago may
 * not be cached yet — and returns the names still there. Call it on every reconcile of the deletion and remove the
 * finalizer only once it returns none: the IPAM provider gives the address back before the claim goes. Explicit
 * deletes, because owner references only help where kube-controller-manager's garbage collector runs.
 */
export async function releaseAddressClaims(
  caches: AddressClaimCaches,
  owner: KubeObject,
  names: readonly string[],
  signal: AbortSignal | undefined,
): Promise<string[]> {
  const namespace = owner.metadata.namespace ?? '';
  const remaining = ownedAddressClaims(caches, owner);
  for (const name of names) {
    const claim = caches.claims.store.get(`${namespace}/${name}`);
    if (claim && isControlledBy(claim, owner) && !remaining.includes(claim)) remaining.push(claim);
  }
  if (remaining.length === 0) {
    for (const name of names) {
      try {
        const live = await caches.client.get(CLAIM_RESOURCE, { namespace, name }, { signal });
        if (isControlledBy(live, owner)) remaining.push(live);
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
  }
  for (const claim of remaining) {
    if (!claim.metadata.deletionTimestamp) await deleteAddressClaim(caches.client, claim, signal);
  }
  return remaining.map((claim) => claim.metadata.name);
}
