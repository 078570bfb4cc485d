import type { ConditionInput, ConditionStatus } from '@tally-ipam/controller-kit/capi';
import {
  IP_ADDRESS_CLAIM_CONFLICT_REASON,
  IP_ADDRESS_CLAIM_FAILED_REASON,
  IP_ADDRESS_CLAIMS_BEING_CREATED_REASON,
  IP_ADDRESS_INVALID_REASON,
  IP_ADDRESSES_ALLOCATED_REASON,
  NO_IP_ADDRESSES_REQUESTED_REASON,
  WAITING_FOR_IP_ADDRESS_REASON,
} from '../api/v1alpha1/constants.js';

/** A condition without type and generation: what a step of a reconcile concluded. */
export interface ConditionVerdict {
  readonly status: ConditionStatus;
  readonly reason: string;
  readonly message: string;
}

/** Where one of a machine's IPAddressClaims stands. */
export type ClaimProgress =
  /** Not created yet (or not in the cache yet). */
  | { readonly name: string; readonly state: 'Missing' }
  /** A claim of that name exists but another object controls it: it is never adopted. */
  | { readonly name: string; readonly state: 'Conflict'; readonly message: string }
  /** No `status.addressRef` yet; the claim's own `Ready` condition, if the IPAM provider wrote one. */
  | {
      readonly name: string;
      readonly state: 'Pending';
      readonly ready?: { readonly status: string; readonly reason: string; readonly message: string } | undefined;
    }
  /** `status.addressRef` names an IPAddress that is not (yet) readable. */
  | { readonly name: string; readonly state: 'AddressMissing'; readonly addressName: string }
  | { readonly name: string; readonly state: 'Bound' };

function names(claims: readonly ClaimProgress[]): string {
  return claims.map((claim) => claim.name).join(', ');
}

/**
 * Rolls a machine's claims up into its `IPAddressesReady` condition, most actionable problem first: a claim name
 * taken by someone else, then invalid addresses, then claims the IPAM provider failed (its reason and message passed
 * on), then claims still being created, then claims waiting for an address. All bound and valid is True; a machine
 * that asks for no IPAM addresses is True as well.
 */
export function ipAddressesCondition(
  claims: readonly ClaimProgress[],
  invalidAddresses: readonly string[] = [],
): ConditionVerdict {
  const total = claims.length;
  const conflicts = claims.filter((claim) => claim.state === 'Conflict');
  if (conflicts.length > 0) {
    return {
      status: 'False',
      reason: IP_ADDRESS_CLAIM_CONFLICT_REASON,
      message: conflicts.map((claim) => (claim.state === 'Conflict' ? claim.message : claim.name)).join('; '),
    };
  }
  if (invalidAddresses.length > 0) {
    return { status: 'False', reason: IP_ADDRESS_INVALID_REASON, message: invalidAddresses.join('; ') };
  }
  const failed = claims.filter((claim) => claim.state === 'Pending' && claim.ready?.status === 'False');
  if (failed.length > 0) {
    return {
      status: 'False',
      reason: IP_ADDRESS_CLAIM_FAILED_REASON,
      message: failed
        .map((claim) =>
          claim.state === 'Pending' && claim.ready
            ? `IPAddressClaim ${claim.name}: ${claim.ready.reason}${claim.ready.message ? `: ${claim.ready.message}` : ''}`
            : claim.name,
        )
        .join('; '),
    };
  }
  const missing = claims.filter((claim) => claim.state === 'Missing');
  if (missing.length > 0) {
    return {
      status: 'False',
      reason: IP_ADDRESS_CLAIMS_BEING_CREATED_REASON,
      message: `${missing.length}/${total} IPAddressClaims being created: ${names(missing)}`,
    };
  }
  const waiting = claims.filter((claim) => claim.state === 'Pending' || claim.state === 'AddressMissing');
  if (waiting.length > 0) {
    return {
      status: 'False',
      reason: WAITING_FOR_IP_ADDRESS_REASON,
      message: `${waiting.length}/${total} IPAddressClaims waiting for an IP address: ${names(waiting)}`,
    };
  }
  if (total === 0) {
    return {
      status: 'True',
      reason: NO_IP_ADDRESSES_REQUESTED_REASON,
      message: 'no device takes addresses from a pool',
    };
  }
  return { status: 'True', reason: IP_ADDRESSES_ALLOCATED_REASON, message: `${total}/${total} IP addresses allocated` };
}

/** A verdict as the condition of a type, for `setCondition`. */
export function conditionOf(type: string, verdict: ConditionVerdict, observedGeneration: number): ConditionInput {
  return { type, ...verdict, observedGeneration };
}
