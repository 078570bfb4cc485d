import {
  isClusterScopedPoolKind,
  isTallyPoolReference,
  TALLY_GROUP,
  TALLY_POOL_KINDS,
  type TallyPoolKind,
} from '@tally-ipam/api-types';
import type { Holding } from '@tally-ipam/ledger';
import type { StoredAddress, StoredClaim, StoredPool } from './resources.js';

/**
 * One Tally pool, named without ambiguity: a namespaced pool by kind, namespace and name; a global pool by kind and
 * name. A namespaced `TallyIPPool "a"` and a `GlobalTallyIPPool "a"` are different pools.
 */
export interface PoolRef {
  readonly kind: TallyPoolKind;
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

function isPoolKind(kind: string): kind is TallyPoolKind {
  return (TALLY_POOL_KINDS as readonly string[]).includes(kind);
}

/**
 * A pool reference in an object's namespace: namespaced pools only serve objects of their own namespace, so the
 * namespace comes from the referring object; global pools have none.
 */
function refIn(kind: TallyPoolKind, name: string, namespace: string | undefined): PoolRef {
  return isClusterScopedPoolKind(kind) ? { kind, name } : { kind, name, namespace };
}

/** The Tally pool a claim asks for, or undefined when its poolRef names another provider's pool. */
export function poolRefOfClaim(claim: StoredClaim): PoolRef | undefined {
  const ref = claim.spec.poolRef;
  if (!isTallyPoolReference(ref)) return undefined;
  return refIn(ref.kind, ref.name, claim.metadata.namespace);
}

/** The Tally pool an IPAddress was allocated from, or undefined when it is not Tally's. */
export function poolRefOfAddress(address: StoredAddress): PoolRef | undefined {
  const ref = address.spec.poolRef;
  if (!isTallyPoolReference(ref)) return undefined;
  return refIn(ref.kind, ref.name, address.metadata.namespace);
}

export function poolRefOfHolding(holding: Holding): PoolRef | undefined {
  const ref = holding.spec.poolRef;
  if (ref.apiGroup !== TALLY_GROUP || !isPoolKind(ref.kind)) return undefined;
  return refIn(ref.kind, ref.name, ref.namespace);
}

export function poolRefOfPool(pool: StoredPool): PoolRef | undefined {
  if (!isPoolKind(pool.kind)) return undefined;
  return refIn(pool.kind, pool.metadata.name, pool.metadata.namespace);
}
