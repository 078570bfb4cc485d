/**
 * The pool kinds this provider can serve: Tally's own four, and — behind `inClusterIPAM`
 * (`--enable-in-cluster-ipam`) — the in-cluster provider's four (its two IP pool and two prefix pool kinds), served
 * from the same allocator and ledgers. One notion for every place that routes by kind, so a kind is either served everywhere or nowhere.
 */
import {
  GLOBAL_IN_CLUSTER_IP_POOL_KIND,
  GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND,
  GLOBAL_TALLY_IP_POOL_KIND,
  GLOBAL_TALLY_PREFIX_POOL_KIND,
  IN_CLUSTER_IP_POOL_KINDS,
  IN_CLUSTER_PREFIX_POOL_KIND,
  IN_CLUSTER_PREFIX_POOL_KINDS,
  IN_CLUSTER_PROTECT_ADDRESS_FINALIZER,
  IN_CLUSTER_PROTECT_POOL_FINALIZER,
  IN_CLUSTER_RELEASE_ADDRESS_FINALIZER,
  type InClusterIPPoolKind,
  type InClusterPrefixPoolKind,
  TALLY_POOL_KINDS,
  TALLY_PREFIX_POOL_KIND,
  type TallyPoolKind,
} from '@tally-ipam/api-types';
import { ADDRESS_FINALIZER, CLAIM_FINALIZER, POOL_FINALIZER } from './constants.js';

/** A pool kind an IPAddressClaim's `spec.poolRef` may name for this provider to serve it. */
export type ServedPoolKind = TallyPoolKind | InClusterPoolKind;

/** The in-cluster provider's kinds: its IP pools and its prefix pools. */
export type InClusterPoolKind = InClusterIPPoolKind | InClusterPrefixPoolKind;

const IN_CLUSTER_POOL_KINDS: readonly InClusterPoolKind[] = [
  ...IN_CLUSTER_IP_POOL_KINDS,
  ...IN_CLUSTER_PREFIX_POOL_KINDS,
];

/** Every kind the provider knows how to serve; which of them it serves is `servedPoolKinds`'. */
export const SERVED_POOL_KINDS: readonly ServedPoolKind[] = [...TALLY_POOL_KINDS, ...IN_CLUSTER_POOL_KINDS];

/** The kinds served with the given options: Tally's always, the in-cluster provider's four only when enabled. */
export function servedPoolKinds(options: { readonly inClusterIPAM?: boolean | undefined }): readonly ServedPoolKind[] {
  return options.inClusterIPAM === true ? SERVED_POOL_KINDS : TALLY_POOL_KINDS;
}

export function isServedPoolKind(kind: string): kind is ServedPoolKind {
  return (SERVED_POOL_KINDS as readonly string[]).includes(kind);
}

/** True for the in-cluster provider's four kinds (their finalizers, status and webhook are the reference's). */
export function isInClusterPoolKind(kind: string): kind is InClusterPoolKind {
  return (IN_CLUSTER_POOL_KINDS as readonly string[]).includes(kind);
}

/** True for the in-cluster provider's two prefix pool kinds. */
export function isInClusterPrefixPoolKind(kind: string): kind is InClusterPrefixPoolKind {
  return (IN_CLUSTER_PREFIX_POOL_KINDS as readonly string[]).includes(kind);
}

/** Cluster-scoped kinds serve claims of every namespace; the others only claims of their own namespace. */
export function isGlobalPoolKind(kind: ServedPoolKind): boolean {
  return (
    kind === GLOBAL_TALLY_IP_POOL_KIND ||
    kind === GLOBAL_TALLY_PREFIX_POOL_KIND ||
    kind === GLOBAL_IN_CLUSTER_IP_POOL_KIND ||
    kind === GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND
  );
}

/** Prefix kinds hand out whole prefixes: Tally's two and the in-cluster provider's two. */
export function isPrefixKind(kind: ServedPoolKind): boolean {
  return (
    kind === TALLY_PREFIX_POOL_KIND ||
    kind === GLOBAL_TALLY_PREFIX_POOL_KIND ||
    kind === IN_CLUSTER_PREFIX_POOL_KIND ||
    kind === GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND
  );
}

/** The finalizers written for one pool kind: on the pool, on its claims and on their IPAddresses. */
export interface KindFinalizers {
  readonly pool: string;
  readonly claim: string;
  readonly address: string;
}

const TALLY_FINALIZERS: KindFinalizers = { pool: POOL_FINALIZER, claim: CLAIM_FINALIZER, address: ADDRESS_FINALIZER };

/**
 * The reference's strings for its own kinds, so that after a hand-over in either direction the other controller
 * recognises and removes what this one put on (`ProtectPool`, `ReleaseAddress`, `ProtectAddress`).
 */
const IN_CLUSTER_FINALIZERS: KindFinalizers = {
  pool: IN_CLUSTER_PROTECT_POOL_FINALIZER,
  claim: IN_CLUSTER_RELEASE_ADDRESS_FINALIZER,
  address: IN_CLUSTER_PROTECT_ADDRESS_FINALIZER,
};

export function finalizersOf(kind: ServedPoolKind): KindFinalizers {
  return isInClusterPoolKind(kind) ? IN_CLUSTER_FINALIZERS : TALLY_FINALIZERS;
}
