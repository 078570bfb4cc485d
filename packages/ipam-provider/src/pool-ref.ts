import { TALLY_GROUP } from '@tally-ipam/api-types';
import type { Holding } from '@tally-ipam/ledger';
import { isGlobalPoolKind, isServedPoolKind, type ServedPoolKind } from './pool-kinds.js';
import type { StoredAddress, StoredClaim, StoredPool } from './resources.js';

/**
 * One pool the provider can serve (a Tally kind or an in-cluster IP pool kind), named without ambiguity: a namespaced pool by kind, namespace and name; a global pool by kind and
 * name. A namespaced `TallyIPPool "a"` and a `GlobalTallyIPPool "a"` are different pools.
 */
export interface PoolRef {
  readonly kind: ServedPoolKind;
  readonly name: string;
  /** Only for namespaced kinds. */
  readonly namespace?: string | undefined;
}

/** The map key of a pool: `Kind/namespace/name` (namespace empty for global pools). */
export function poolKey(ref: PoolRef): string {
  return `${ref.kind}/${ref.namespace ?? ''}/${ref.name}`;
}

/** The pool as a holding or ledger entry names it: `{apiGroup, kind, name, namespace?}`. */
export function tallyPoolReference(pool: PoolRef): {
  apiGroup: string;
  kind: string;
  name: string;
  namespace?: string;
} {
  return {
    apiGroup: TALLY_GROUP,
    kind: pool.kind,
    name: pool.name,
    ...(pool.namespace ? { namespace: pool.namespace } : {}),
  };
}

/** True when `a` names the pool `b` (undefined never does). */
export function samePool(a: PoolRef | undefined, b: PoolRef): boolean {
  return a !== undefined && poolKey(a) === poolKey(b);
}

/** `TallyIPPool ns/name` or `GlobalTallyIPPool name`, for messages and events. */
export function describePool(ref: PoolRef): string {
  return ref.namespace ? `${ref.kind} ${ref.namespace}/${ref.name}` : `${ref.kind} ${ref.name}`;
}

/**
 * True when a `poolRef` names a kind the provider can serve, by group and kind (matching on the name alone is the bug
 * class metal3 has). Tally's pools and the in-cluster provider's share the IPAM group. Whether the kind is served by
 * this process (`inClusterIPAM`) is the claim filter's question (`claimServedBy`), not this one's.
 */
function isServedReference(ref: { apiGroup?: string | undefined; kind?: string | undefined }): ref is {
  apiGroup: string;
  kind: ServedPoolKind;
} {
  return ref.apiGroup === TALLY_GROUP && isServedPoolKind(ref.kind ?? '');
}

/**
 * A pool reference in an object's namespace: namespaced pools only serve objects of their own namespace, so the
 * namespace comes from the referring object; global pools have none.
 */
function refIn(kind: ServedPoolKind, name: string, namespace: string | undefined): PoolRef {
  return isGlobalPoolKind(kind) ? { kind, name } : { kind, name, namespace };
}

/** The pool a claim asks for, or undefined when its poolRef names no kind this provider can serve. */
export function poolRefOfClaim(claim: StoredClaim): PoolRef | undefined {
  const ref = claim.spec.poolRef;
  if (!isServedReference(ref)) return undefined;
  return refIn(ref.kind, ref.name, claim.metadata.namespace);
}

/** The pool an IPAddress was allocated from, or undefined when its kind is none this provider can serve. */
export function poolRefOfAddress(address: StoredAddress): PoolRef | undefined {
  const ref = address.spec.poolRef;
  if (!isServedReference(ref)) return undefined;
  return refIn(ref.kind, ref.name, address.metadata.namespace);
}

export function poolRefOfHolding(holding: Holding): PoolRef | undefined {
  const ref = holding.spec.poolRef;
  if (!isServedReference(ref)) return undefined;
  return refIn(ref.kind, ref.name, ref.namespace);
}

export function poolRefOfPool(pool: StoredPool): PoolRef | undefined {
  if (!isServedPoolKind(pool.kind)) return undefined;
  return refIn(pool.kind, pool.metadata.name, pool.metadata.namespace);
}
