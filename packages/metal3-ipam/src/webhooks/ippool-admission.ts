import { clipText, echo, METAL3_IPAM_GROUP, METAL3_IPAM_V1ALPHA1_VERSION } from '@tally-ipam/api-types';
import {
  type AdmissionDecision,
  type AdmissionHandler,
  type AdmissionRequest,
  allowed,
  denied,
  specOf,
  specUnchanged,
} from '@tally-ipam/controller-kit';
import { LoosePoolSpec } from '../pool-spec.js';
import { type Metal3PoolSpecInput, rangeIndexHolding } from '../range-bounds.js';

/**
 * The IPPool update rule Metal3's webhook (ip-address-manager v1.10.1) enforces and CEL cannot: after an update, every
 * pre-allocation and every address in use lies inside a range of `spec.pools`. The addresses in use are the
 * IPAddresses naming the pool (the source of truth; Metal3 reads the pool's `status.indexes`, which may be stale).
 */

/** An IPAddress of the pool: its name and the address it carries. */
export interface AddressInUse {
  readonly name: string;
  readonly address: string;
}

/** What the webhook reads: the Metal3 IPAddresses naming a pool, from the controllers' cache. */
export interface Metal3AddressesView {
  addressesOfPool(namespace: string, pool: string): Promise<readonly AddressInUse[]>;
}

/** One refusal: the field, the value and why. */
export interface IPPoolUpdateProblem {
  readonly field: string;
  readonly value: string;
  readonly message: string;
}

/**
 * The spec fields the rule reads, parsed as loosely as the controllers read them (`LoosePoolSpec`): an IPPool written
 * under Metal3's own CRD (which admits objects Tally's schema refuses) must still be checked by this rule and no more.
 */
export type IPPoolUpdateSpec = Metal3PoolSpecInput;

/** Problems of the updated spec: pre-allocations, then addresses in use, each outside every range. Pure. */
export function validateIPPoolUpdate(spec: IPPoolUpdateSpec, inUse: readonly AddressInUse[]): IPPoolUpdateProblem[] {
  const problems: IPPoolUpdateProblem[] = [];
  for (const [claimName, address] of Object.entries(spec.preAllocations ?? {})) {
    if (rangeIndexHolding(spec, address) === undefined) {
      problems.push({
        field: `spec.preAllocations[${echo(claimName)}]`,
        value: echo(address),
        message: 'is outside every range of spec.pools',
      });
    }
  }
  for (const held of inUse) {
    if (rangeIndexHolding(spec, held.address) === undefined) {
      problems.push({
        field: 'spec.pools',
        value: echo(held.address),
        message: `no longer holds this address, in use by IPAddress ${echo(held.name)}`,
      });
    }
  }
  return problems;
}

/** controller-runtime's path scheme, as Metal3 serves it: `/validate-ipam-metal3-io-v1alpha1-ippool`. */
export const IPPOOL_WEBHOOK_PATH = `/validate-${METAL3_IPAM_GROUP.replaceAll('.', '-')}-${METAL3_IPAM_V1ALPHA1_VERSION}-ippool`;
/** The webhook's name in the ValidatingWebhookConfiguration. */
export const IPPOOL_WEBHOOK_NAME = `validation.ippool.${METAL3_IPAM_GROUP}`;

/** Longest denial message; the problems beyond it are counted, not listed. */
export const MAX_IPPOOL_ADMISSION_MESSAGE_LENGTH = 4_096;
/** Problems listed in one denial. */
export const MAX_LISTED_PROBLEMS = 20;

function refusal(request: AdmissionRequest, details: readonly string[]): AdmissionDecision {
  const listed = details.slice(0, MAX_LISTED_PROBLEMS);
  const more = details.length > listed.length ? `; and ${details.length - listed.length} more` : '';
  const name = request.name ? ` "${clipText(request.name, 253)}"` : '';
  const message = `IPPool.${METAL3_IPAM_GROUP}${name} is invalid: ${listed.join('; ')}${more}`;
  return denied(clipText(message, MAX_IPPOOL_ADMISSION_MESSAGE_LENGTH), { code: 422, reason: 'Invalid' });
}

/**
 * The IPPool admission handler. Only UPDATE is checked, and only when the spec changed: metadata writes (finalizers,
 * the Cluster owner reference, labels) and the deletion of a pool are never refused — Metal3 checks those too, which
 * would block the finalizer of a pool created with a pre-allocation outside its ranges, as the proposal's example is.
 */
export function ipPoolAdmissionHandler(view: Metal3AddressesView): AdmissionHandler {
  return async (request) => {
    if (request.operation !== 'UPDATE') return allowed();
    if (specUnchanged(request)) return allowed();
    const parsed = LoosePoolSpec.safeParse(specOf(request.object));
    if (!parsed.success) {
      return refusal(
        request,
        parsed.error.issues.map((issue) => `spec.${issue.path.map(String).join('.')}: ${issue.message}`),
      );
    }
    const inUse = await view.addressesOfPool(request.namespace ?? '', request.name ?? '');
    const problems = validateIPPoolUpdate(parsed.data, inUse);
    if (problems.length === 0) return allowed();
    return refusal(
      request,
      problems.map((problem) => `${problem.field}: ${problem.value} ${problem.message}`),
    );
  };
}
