import { CLAIM_RESOURCE, CLUSTER_RESOURCE, METAL3_IPAM_GROUP, TALLY_GROUP } from '@tally-ipam/api-types';
import { clusterNameOf } from '@tally-ipam/controller-kit/capi';
import type { Client } from '@tally-ipam/controller-kit/client';
import { isServedPoolKind, POOL_RESOURCES } from '@tally-ipam/ipam-provider';
import { METAL3_CLAIM_RESOURCE, METAL3_POOL_RESOURCE } from '@tally-ipam/metal3-ipam';
import { type ChainLink, type ChainObject, type OwnerLookup, walkOwnerChain } from '../view/owner-chain.js';
import { getOrMissing } from './list.js';
import { type AnyObject, ownerResource } from './resources.js';

/** A reference resolved: the object, or why there is none. */
export type Found<T> =
  | { readonly state: 'found'; readonly object: T }
  | { readonly state: 'missing' | 'unreadable'; readonly detail?: string };

async function found<T>(read: () => Promise<T | undefined>): Promise<Found<T>> {
  try {
    const object = await read();
    return object === undefined ? { state: 'missing' } : { state: 'found', object };
  } catch (error) {
    return { state: 'unreadable', detail: error instanceof Error ? error.message : String(error) };
  }
}

/** The claim of a holding: an IPAddressClaim, or a Metal3 IPClaim (by the entry's claim API group). */
export function readClaim(
  client: Client,
  apiGroup: string,
  namespace: string,
  name: string,
): Promise<Found<AnyObject>> {
  const resource = apiGroup === METAL3_IPAM_GROUP ? METAL3_CLAIM_RESOURCE : CLAIM_RESOURCE;
  return found(() => getOrMissing(client, resource, { namespace, name }));
}

/**
 * The pool a reference names: a Tally or in-cluster kind (global ones have no namespace) or a Metal3 IPPool. An
 * in-cluster pool whose CRD is not installed answers 404 and so shows as missing.
 */
export function readPool(
  client: Client,
  ref: { apiGroup: string; kind: string; name: string },
  namespace: string,
): Promise<Found<AnyObject>> {
  if (ref.apiGroup === TALLY_GROUP && isServedPoolKind(ref.kind)) {
    const resource = POOL_RESOURCES[ref.kind];
    return found(() =>
      getOrMissing(client, resource, { namespace: resource.namespaced ? namespace : undefined, name: ref.name }),
    );
  }
  if (ref.apiGroup === METAL3_IPAM_GROUP)
    return found(() => getOrMissing(client, METAL3_POOL_RESOURCE, { namespace, name: ref.name }));
  return Promise.resolve({ state: 'unreadable', detail: `${ref.kind}.${ref.apiGroup} is no pool kind Tally serves` });
}

/** Looks owners up by their apiVersion and kind, in the namespace of the object they own. */
export function ownerLookup(client: Client): OwnerLookup {
  return (link, namespace) =>
    getOrMissing(client, ownerResource(link.apiVersion, link.kind), { namespace, name: link.name });
}

/** The owner chain of an object and the Cluster it belongs to (its cluster name, else a Cluster in the chain). */
export async function ownersOf(
  client: Client,
  object: ChainObject & AnyObject,
): Promise<{ chain: ChainLink[]; cluster: { name: string; state: Found<AnyObject>['state'] } | undefined }> {
  const chain = await walkOwnerChain(object, ownerLookup(client));
  const clusterName = clusterNameOf(object) ?? chain.find((link) => link.kind === 'Cluster')?.name;
  if (clusterName === undefined) return { chain, cluster: undefined };
  const cluster = await found(() =>
    getOrMissing(client, CLUSTER_RESOURCE, { namespace: object.metadata.namespace, name: clusterName }),
  );
  return { chain, cluster: { name: clusterName, state: cluster.state } };
}
