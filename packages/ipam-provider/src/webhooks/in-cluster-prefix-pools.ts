/**
 * The validating webhook of the in-cluster provider's prefix pool kinds (`InClusterPrefixPool`,
 * `GlobalInClusterPrefixPool`), served when Tally serves those kinds (`--enable-in-cluster-ipam`): the reference's
 * rules (`internal/webhooks/inclusterprefixpool.go`) as api-types' pure functions — create: the spec rules; update:
 * the spec rules, `allocationPrefixLength` unchanged, every IPAddress still allocatable; delete: no IPAddresses left
 * unless the skip annotation is set — with the reference's two /128 warnings on what it admits. The reference's
 * defaulting webhook is not served: the CRD's default already sets the one field it sets (row 27).
 */
import {
  GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND,
  GlobalInClusterPrefixPool,
  IN_CLUSTER_PREFIX_POOL_KIND,
  InClusterPrefixPool,
  type InClusterPrefixPoolKind,
  inClusterPrefixPoolWarnings,
  validateInClusterPoolDelete,
  validateInClusterPrefixPoolSpec,
  validateInClusterPrefixPoolUpdate,
} from '@tally-ipam/api-types';
import { type AdmissionHandler, allowed } from '@tally-ipam/controller-kit';
import type * as z from 'zod';
import {
  type InClusterAddressesView,
  inClusterRefOf,
  inClusterRefusal,
  parseReviewed,
} from './in-cluster-admission.js';

type PrefixPoolObject = InClusterPrefixPool | GlobalInClusterPrefixPool;

/** One in-cluster prefix pool kind as its webhook sees it. */
interface PrefixPoolKindInfo {
  readonly kind: InClusterPrefixPoolKind;
  readonly plural: string;
  readonly namespaced: boolean;
  readonly schema: z.ZodType<PrefixPoolObject>;
}

export const IN_CLUSTER_PREFIX_POOL_WEBHOOK_KINDS: readonly PrefixPoolKindInfo[] = [
  { kind: IN_CLUSTER_PREFIX_POOL_KIND, plural: 'inclusterprefixpools', namespaced: true, schema: InClusterPrefixPool },
  {
    kind: GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND,
    plural: 'globalinclusterprefixpools',
    namespaced: false,
    schema: GlobalInClusterPrefixPool,
  },
];

/** The admission handler of one in-cluster prefix pool kind: CREATE, UPDATE and DELETE, as the reference checks them. */
export function inClusterPrefixPoolAdmissionHandler(
  kind: InClusterPrefixPoolKind,
  view: InClusterAddressesView,
): AdmissionHandler {
  const info = IN_CLUSTER_PREFIX_POOL_WEBHOOK_KINDS.find((candidate) => candidate.kind === kind);
  if (!info) throw new Error(`no in-cluster prefix pool kind ${kind}`);
  return async (request) => {
    const subject = request.operation === 'DELETE' ? request.oldObject : request.object;
    const reviewed = parseReviewed(info.kind, info.schema, subject);
    if (!reviewed.ok) return reviewed.decision;
    const pool = reviewed.value;
    switch (request.operation) {
      case 'CREATE': {
        const issues = validateInClusterPrefixPoolSpec(pool.spec);
        if (issues.length > 0 || pool.spec === undefined) return inClusterRefusal(info.kind, request, issues);
        return allowed(inClusterPrefixPoolWarnings(pool.spec));
      }
      case 'UPDATE': {
        // The reference lists the old object's IPAddresses and compares the old allocation length with the new.
        const oldParsed = info.schema.safeParse(request.oldObject);
        const old = oldParsed.success ? oldParsed.data : pool;
        const inUse = await view.allocationsOf(inClusterRefOf(info.kind, info.namespaced, old));
        const issues = validateInClusterPrefixPoolUpdate(old.spec, pool.spec, inUse);
        if (issues.length > 0 || pool.spec === undefined) return inClusterRefusal(info.kind, request, issues);
        return allowed(inClusterPrefixPoolWarnings(pool.spec));
      }
      case 'DELETE': {
        const inUse = await view.allocationsOf(inClusterRefOf(info.kind, info.namespaced, pool));
        const issues = validateInClusterPoolDelete(pool.metadata.annotations, inUse.length);
        return issues.length === 0 ? allowed() : inClusterRefusal(info.kind, request, issues);
      }
      default:
        return allowed();
    }
  };
}
