/**
 * What the in-cluster provider's validating webhooks (IP pools: in-cluster-pools.ts, prefix pools:
 * in-cluster-prefix-pools.ts) share: the reference's paths and names, the view of a pool's IPAddresses, and the
 * refusal with the reference's HTTP statuses — 422 (`Invalid`) for the spec rules, 400 (`BadRequest`) for the update
 * and delete rules and for an object of another shape, since clients may branch on them (row 11 of
 * docs/design/in-cluster-drop-in.md).
 */
import {
  clipText,
  formatInClusterPoolIssues,
  IN_CLUSTER_IPAM_GROUP,
  IN_CLUSTER_V1ALPHA2_VERSION,
  type InClusterPoolIssue,
  type InClusterPrefixInUse,
} from '@tally-ipam/api-types';
import { type AdmissionDecision, type AdmissionRequest, denied } from '@tally-ipam/controller-kit';
import type * as z from 'zod';
import type { InClusterPoolKind } from '../pool-kinds.js';
import type { PoolRef } from '../pool-ref.js';
import type { ProviderCacheView } from '../view.js';

/** `/validate-ipam-cluster-x-k8s-io-v1alpha2-inclusterippool`: the reference's path (controller-runtime's scheme). */
export function inClusterPoolWebhookPath(kind: InClusterPoolKind): string {
  return `/validate-${IN_CLUSTER_IPAM_GROUP.replaceAll('.', '-')}-${IN_CLUSTER_V1ALPHA2_VERSION}-${kind.toLowerCase()}`;
}

/** `validation.inclusterippool.ipam.cluster.x-k8s.io`: the reference's webhook name. */
export function inClusterPoolWebhookName(kind: InClusterPoolKind): string {
  return `validation.${kind.toLowerCase()}.${IN_CLUSTER_IPAM_GROUP}`;
}

/**
 * What the rules read of the IPAddresses naming a pool (the reference lists them for each review): their addresses
 * (IP pools), or their addresses with `spec.prefix` (prefix pools).
 */
export interface InClusterAddressesView {
  addressesOf(ref: PoolRef): Promise<readonly string[]>;
  allocationsOf(ref: PoolRef): Promise<readonly InClusterPrefixInUse[]>;
}

/** How long a review waits for caches that have not listed yet before it fails (the API server retries). */
const SYNC_WAIT_MS = 10_000;

/** The view over the provider's IPAddress cache (indexed by pool for every kind it can serve, the flag aside). */
export function providerInClusterAddressesView(provider: ProviderCacheView): InClusterAddressesView {
  const synced = async (): Promise<void> => {
    if (!provider.hasSynced() && !(await provider.waitForSync(AbortSignal.timeout(SYNC_WAIT_MS)))) {
      throw new Error(`the IPAddress and pool caches have not synced after ${SYNC_WAIT_MS / 1000} s; try again`);
    }
  };
  return {
    async addressesOf(ref) {
      await synced();
      return provider.allocatedAddresses(ref).map((address) => address.address);
    },
    async allocationsOf(ref) {
      await synced();
      return provider.allocatedAddresses(ref).map((address) => ({ address: address.address, prefix: address.prefix }));
    },
  };
}

/** Longest denial message (the API server stores it in the client's error). */
export const MAX_IN_CLUSTER_ADMISSION_MESSAGE_LENGTH = 4_096;

/** The rules whose refusal the reference returns as `BadRequest` (400) rather than `Invalid` (422). */
const BAD_REQUEST_RULES: ReadonlySet<InClusterPoolIssue['rule']> = new Set([
  'allocated-addresses-kept',
  'no-addresses-on-delete',
  'allocation-length-immutable',
  'allocations-allocatable',
]);

/** The refusal of a review: 400 when a refused rule is one the reference answers `BadRequest`, else 422. */
export function inClusterRefusal(
  kind: InClusterPoolKind,
  request: AdmissionRequest,
  issues: InClusterPoolIssue[],
): AdmissionDecision {
  const badRequest = issues.some((entry) => BAD_REQUEST_RULES.has(entry.rule));
  const name = request.name ? ` "${clipText(request.name, 253)}"` : '';
  const message = clipText(
    `${kind}.${IN_CLUSTER_IPAM_GROUP}${name} is invalid: ${formatInClusterPoolIssues(issues)}`,
    MAX_IN_CLUSTER_ADMISSION_MESSAGE_LENGTH,
  );
  return badRequest
    ? denied(message, { code: 400, reason: 'BadRequest' })
    : denied(message, { code: 422, reason: 'Invalid' });
}

/**
 * The reviewed object parsed as its kind, or the refusal: the CRD's schema admitted it, so this is an object of
 * another shape than the kind's, which the reference's decoder refuses as a bad request too.
 */
export function parseReviewed<T>(
  kind: InClusterPoolKind,
  schema: z.ZodType<T>,
  subject: unknown,
): { ok: true; value: T } | { ok: false; decision: AdmissionDecision } {
  const parsed = schema.safeParse(subject);
  if (parsed.success) return { ok: true, value: parsed.data };
  const detail = parsed.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.map(String).join('.') || 'object'}: ${issue.message}`)
    .join('; ');
  return {
    ok: false,
    decision: denied(clipText(`expected a ${kind}: ${detail}`, MAX_IN_CLUSTER_ADMISSION_MESSAGE_LENGTH), {
      code: 400,
      reason: 'BadRequest',
    }),
  };
}

/** The pool's reference as its IPAddresses name it (the old object's, for an update, as the reference lists them). */
export function inClusterRefOf(
  kind: InClusterPoolKind,
  namespaced: boolean,
  pool: { readonly metadata: { readonly name?: string | undefined; readonly namespace?: string | undefined } },
): PoolRef {
  const name = pool.metadata.name ?? '';
  return namespaced ? { kind, name, namespace: pool.metadata.namespace } : { kind, name };
}
