import {
  GLOBAL_TALLY_IP_POOL_KIND,
  GLOBAL_TALLY_PREFIX_POOL_KIND,
  TALLY_GROUP,
  TALLY_POOL_KINDS,
  TALLY_PREFIX_POOL_KIND,
  type TallyPoolKind,
} from './constants.js';

/**
 * True when a claim's `spec.poolRef` names one of Tally's pool kinds. Group and kind must both match (matching on
 * the name alone is the bug class metal3 has); the name is the caller's business.
 */
export function isTallyPoolReference(ref: { apiGroup?: string; kind?: string }): ref is {
  apiGroup: typeof TALLY_GROUP;
  kind: TallyPoolKind;
} {
  return ref.apiGroup === TALLY_GROUP && (TALLY_POOL_KINDS as readonly string[]).includes(ref.kind ?? '');
}

/** Cluster-scoped pool kinds serve claims in every namespace; the others only claims in their own namespace. */
export function isClusterScopedPoolKind(kind: TallyPoolKind): boolean {
  return kind === GLOBAL_TALLY_IP_POOL_KIND || kind === GLOBAL_TALLY_PREFIX_POOL_KIND;
}

/** Prefix pools hand out whole prefixes (`allocationPrefixLength`); IP pools single addresses. */
export function isPrefixPoolKind(kind: TallyPoolKind): boolean {
  return kind === TALLY_PREFIX_POOL_KIND || kind === GLOBAL_TALLY_PREFIX_POOL_KIND;
}
