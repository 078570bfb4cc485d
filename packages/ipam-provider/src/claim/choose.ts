/**
 * Step 1 of a claim's allocation: which address (or prefix) to try — the requested-address annotation, else the pool's
 * reservation for the claim, else the pool's strategy. Pure choice on the in-memory pool state; nothing is written.
 */
import { AllocationError } from '@tally-ipam/allocator';
import {
  clipText,
  clipUtf8,
  echo,
  IPADDRESSCLAIM_ALLOCATION_FAILED_REASON,
  IPADDRESSCLAIM_POOL_EXHAUSTED_REASON,
  MAX_IP_LENGTH,
} from '@tally-ipam/api-types';
import {
  CLAIM_ADDRESS_RESERVED_REASON,
  EVENT_ALLOCATION_FAILED,
  EVENT_POOL_EXHAUSTED,
  REQUESTED_ADDRESS_ANNOTATION,
} from '../constants.js';
import type { AllocationUnit } from '../pool-allocation.js';
import { describePool, type PoolRef } from '../pool-ref.js';
import type { PoolState } from '../pool-state.js';
import type { StoredClaim } from '../resources.js';
import type { ClaimReconcilerDeps } from './deps.js';
import { type ClaimOutcome, notReady } from './status.js';

/** The longest address or CIDR text (IPv6 in mixed notation with a /128); a longer annotation is never parsed. */
const MAX_REQUESTED_ADDRESS_LENGTH = MAX_IP_LENGTH + 4;

/** The outcome of choosing an address: a unit to holding, or the reason there is none. */
export type Choice =
  | { readonly ok: true; readonly unit: AllocationUnit; readonly specific: string | undefined }
  | { readonly ok: false; readonly outcome: ClaimOutcome; readonly retryAfterMs?: number | undefined };

/** Picks an address: the requested-address annotation, else the pool's reservation for the claim, else the strategy. */
export function chooseAddress(deps: ClaimReconcilerDeps, claim: StoredClaim, ref: PoolRef, state: PoolState): Choice {
  const requested = claim.metadata.annotations?.[REQUESTED_ADDRESS_ANNOTATION];
  const reservation = state.allocation.reservations.get(claim.metadata.name);
  try {
    if (requested !== undefined && requested.length > MAX_REQUESTED_ADDRESS_LENGTH) {
      deps.metrics.allocations.inc({ kind: ref.kind, result: 'failed' });
      return {
        ok: false,
        outcome: notReady(
          IPADDRESSCLAIM_ALLOCATION_FAILED_REASON,
          `requested address ${echo(requested)} (annotation ${REQUESTED_ADDRESS_ANNOTATION}) is ` +
            `${requested.length} characters long, longer than any address or CIDR; change or remove the annotation`,
        ),
      };
    }
    if (requested !== undefined) {
      const canonical = state.allocation.isPrefixPool ? undefined : state.allocation.unitOf(requested, 0)?.address;
      const reservedFor = canonical === undefined ? undefined : reservationHolder(state, canonical);
      if (reservedFor !== undefined && reservedFor !== claim.metadata.name) {
        deps.metrics.allocations.inc({ kind: ref.kind, result: 'failed' });
        return {
          ok: false,
          outcome: notReady(
            CLAIM_ADDRESS_RESERVED_REASON,
            `requested address ${canonical} (annotation ${REQUESTED_ADDRESS_ANNOTATION}) is reserved for claim ` +
              `${reservedFor} in the spec.reservations of ${describePool(ref)}; change or remove the annotation`,
          ),
        };
      }
      const unit = state.allocation.allocateSpecific(requested);
      return {
        ok: true,
        unit,
        specific: `requested address ${echo(requested)} (annotation ${REQUESTED_ADDRESS_ANNOTATION})`,
      };
    }
    if (reservation !== undefined) {
      // Held back from the strategy since the pool state was built; only this claim may holding it.
      const unit = state.allocation.unitOf(reservation, 0);
      if (unit) return { ok: true, unit, specific: `reserved address ${reservation} (spec.reservations)` };
    }
    return { ok: true, unit: state.allocation.allocate(), specific: undefined };
  } catch (error) {
    if (!(error instanceof AllocationError)) throw error;
    const retryAfterMs =
      error.availableAtMs === undefined ? undefined : Math.max(error.availableAtMs - deps.now(), 1) + 50;
    if (requested !== undefined) {
      deps.metrics.allocations.inc({ kind: ref.kind, result: 'failed' });
      void deps.recorder.warning(claim, EVENT_ALLOCATION_FAILED, 'Allocate', eventNote(error.message));
      return {
        ok: false,
        retryAfterMs,
        outcome: notReady(
          IPADDRESSCLAIM_ALLOCATION_FAILED_REASON,
          `requested address ${echo(requested)} (annotation ${REQUESTED_ADDRESS_ANNOTATION}) cannot be allocated ` +
            `from ${describePool(ref)}: ${clipText(error.message, 1_000)}; change or remove the annotation`,
        ),
      };
    }
    deps.metrics.allocations.inc({ kind: ref.kind, result: 'exhausted' });
    const message =
      `${describePool(ref)} is exhausted: ${error.message}; the claim is allocated as soon as an address is ` +
      'released, or add addresses to the pool';
    void deps.recorder.warning(claim, EVENT_POOL_EXHAUSTED, 'Allocate', eventNote(message));
    return { ok: false, retryAfterMs, outcome: notReady(IPADDRESSCLAIM_POOL_EXHAUSTED_REASON, message) };
  }
}

export /** An Event's note is cut by the API server at 1 KiB without a mark; cut here, with one. */
function eventNote(text: string): string {
  return clipUtf8(text, 1024);
}

export /** The claim a pool's `spec.reservations` holds this canonical address for, if any. */
function reservationHolder(state: PoolState, address: string): string | undefined {
  for (const [claimName, reserved] of state.allocation.reservations) if (reserved === address) return claimName;
  return undefined;
}
