import { type Condition, type ConditionInput, getCondition } from '@tally-ipam/controller-kit/capi';
import { DELETING_REASON, NOT_READY_REASON, READY_CONDITION, READY_REASON, READY_UNKNOWN_REASON } from './constants.js';

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
 * The `Ready` condition summarising others, in the spirit of CAPI's `conditions.NewSummaryCondition`: False with the
 * first False dependency's reason (messages of all False ones joined); Unknown when none is False but one is Unknown
 * or missing; True otherwise. A terminal failure or a deletion wins over everything.
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
  const falseOnes: Condition[] = [];
  const unknownOnes: string[] = [];
  for (const type of input.dependsOn) {
    const condition = getCondition(input.conditions, type);
    if (condition === undefined) unknownOnes.push(`${type}: not reported yet`);
    else if (condition.status === 'False') falseOnes.push(condition);
    else if (condition.status === 'Unknown') unknownOnes.push(describe(condition));
  }
  const firstFalse = falseOnes[0];
  if (firstFalse !== undefined) {
    return {
      ...base,
      status: 'False',
      reason: firstFalse.reason || NOT_READY_REASON,
      message: falseOnes.map(describe).join('; '),
    };
  }
  if (unknownOnes.length > 0) {
    return { ...base, status: 'Unknown', reason: READY_UNKNOWN_REASON, message: unknownOnes.join('; ') };
  }
  return { ...base, status: 'True', reason: READY_REASON, message: '' };
}

function describe(condition: Condition): string {
  return condition.message ? `${condition.type}: ${condition.message}` : `${condition.type} is ${condition.status}`;
}
