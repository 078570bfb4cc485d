import { type Condition, type ConditionInput, summarizeConditions } from '@tally-ipam/controller-kit/capi';
import { DELETING_REASON, READY_CONDITION } from './constants.js';

/**
 * A terminal failure, the v1beta2 way: the pool cannot recover without a change by a human (bad configuration,
 * quota refused for good). Reported in the `Ready` condition — never in `status.failureReason`/`failureMessage`,
 * which CAPI v1.12's MachinePool controller crashes on (README, "Terminal failures").
 */
export interface TerminalFailure {
  /** UpperCamelCase, e.g. `InvalidConfiguration`. */
  readonly reason: string;
  /** What failed, on which object, and what to do. */
  readonly message: string;
}

export interface ReadySummaryInput {
  /** The object's current conditions (after setting the ones `Ready` summarises). */
  readonly conditions: readonly Condition[] | undefined;
  /** Condition types that must all be True for the pool to be Ready, in the order their problems are reported. */
  readonly dependsOn: readonly string[];
  readonly observedGeneration: number;
  /** The object has a deletionTimestamp: `Ready` describes the deletion (the contract wants the whole lifecycle). */
  readonly deleting?: boolean | undefined;
  readonly terminalFailure?: TerminalFailure | undefined;
}

/**
 * An InfraMachinePool's `Ready` condition: a deletion, then a terminal failure, win over everything; otherwise the
 * summary of `dependsOn` (controller-kit's `summarizeConditions`: False with the first False dependency's reason,
 * Unknown when none is False but one is Unknown or missing, True otherwise; the message lists each one that is not
 * True).
 */
export function summarizeReadyCondition(input: ReadySummaryInput): ConditionInput {
  const base = { type: READY_CONDITION, observedGeneration: input.observedGeneration };
  if (input.deleting) {
    return { ...base, status: 'False', reason: DELETING_REASON, message: 'the pool is being deleted' };
  }
  if (input.terminalFailure) {
    return {
      ...base,
      status: 'False',
      reason: input.terminalFailure.reason,
      message: input.terminalFailure.message,
    };
  }
  return summarizeConditions({
    conditions: input.conditions,
    forConditionTypes: input.dependsOn,
    observedGeneration: input.observedGeneration,
  });
}
