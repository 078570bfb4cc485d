import {
  clipText,
  type IPADDRESSCLAIM_ADDRESS_ALLOCATED_REASON,
  type IPADDRESSCLAIM_ALLOCATION_FAILED_REASON,
  type IPADDRESSCLAIM_POOL_EXHAUSTED_REASON,
  type IPADDRESSCLAIM_POOL_NOT_READY_REASON,
  IPADDRESSCLAIM_READY_CONDITION,
} from '@tally-ipam/api-types';
import { type Client, type Condition, getCondition, isNotFound, setCondition } from '@tally-ipam/controller-kit';
import {
  type CLAIM_ADDRESS_RESERVED_REASON,
  type CLAIM_NAMESPACE_CAP_REACHED_REASON,
  type CLAIM_NAMESPACE_NOT_ALLOWED_REASON,
  MAX_CONDITION_MESSAGE_LENGTH,
} from '../constants.js';
import { CLAIM_RESOURCE, type StoredClaim } from '../resources.js';

export type ClaimReadyReason =
  | typeof IPADDRESSCLAIM_ADDRESS_ALLOCATED_REASON
  | typeof IPADDRESSCLAIM_ALLOCATION_FAILED_REASON
  | typeof IPADDRESSCLAIM_POOL_EXHAUSTED_REASON
  | typeof IPADDRESSCLAIM_POOL_NOT_READY_REASON
  | typeof CLAIM_ADDRESS_RESERVED_REASON
  | typeof CLAIM_NAMESPACE_NOT_ALLOWED_REASON
  | typeof CLAIM_NAMESPACE_CAP_REACHED_REASON;

/** What a reconcile concluded about a claim: the `Ready` condition and, once allocated, the IPAddress name. */
export interface ClaimOutcome {
  readonly ready: boolean;
  readonly reason: ClaimReadyReason;
  /** Always set, and always something a person can act on. */
  readonly message: string;
  readonly addressName?: string | undefined;
}

export function notReady(reason: Exclude<ClaimReadyReason, 'AddressAllocated'>, message: string): ClaimOutcome {
  return { ready: false, reason, message };
}

/**
 * Writes `status.addressRef` and the `Ready` condition when they differ from what the claim shows (a no-op write
 * would still cost an API call and an event for every watcher). A merge patch with the claim's resourceVersion: a
 * status computed from a stale claim fails with a Conflict and the reconcile retries.
 */
export async function writeClaimStatus(
  client: Client,
  claim: StoredClaim,
  outcome: ClaimOutcome,
  now: Date,
  signal: AbortSignal,
): Promise<StoredClaim> {
  const conditions = (claim.status?.conditions ?? []) as readonly Condition[];
  const input = {
    type: IPADDRESSCLAIM_READY_CONDITION,
    status: outcome.ready ? ('True' as const) : ('False' as const),
    reason: outcome.reason,
    message: clipText(outcome.message, MAX_CONDITION_MESSAGE_LENGTH),
    observedGeneration: claim.metadata.generation ?? 0,
  };
  const current = getCondition(conditions, IPADDRESSCLAIM_READY_CONDITION);
  const currentAddress = claim.status?.addressRef?.name;
  const wantedAddress = outcome.addressName ?? currentAddress;
  const unchanged =
    current !== undefined &&
    current.status === input.status &&
    current.reason === input.reason &&
    current.message === input.message &&
    current.observedGeneration === input.observedGeneration &&
    currentAddress === wantedAddress;
  if (unchanged) return claim;
  const status: Record<string, unknown> = { conditions: setCondition(conditions, input, now) };
  if (wantedAddress !== undefined) status.addressRef = { name: wantedAddress };
  try {
    return await client.patchStatus(CLAIM_RESOURCE, claim, status, { signal });
  } catch (error) {
    // The claim was deleted meanwhile (without our finalizer, or it finished): nothing to report to, nothing to fix.
    if (isNotFound(error)) return claim;
    throw error;
  }
}
