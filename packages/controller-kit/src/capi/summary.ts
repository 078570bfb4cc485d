import { READY_CONDITION } from '@tally-ipam/api-types';
import type { ConditionInput, ConditionStatus } from './conditions.js';

/** Reason of a summary that is True (CAPI's providers' `<Kind>ReadyReason`). */
export const READY_REASON = 'Ready';
/** Reason of a summary that is Unknown: nothing is False, something is Unknown or not reported yet. */
export const READY_UNKNOWN_REASON = 'ReadyUnknown';
/** Reason CAPI gives a listed condition that is missing (it counts as Unknown). */
export const NOT_YET_REPORTED_REASON = 'NotYetReported';
/** Fallback reason of a False summary whose first problem has an empty reason (never from a valid condition). */
export const NOT_READY_REASON = 'NotReady';

/** What a summary reads of a condition: one stored in `status.conditions`, or a step's verdict about to be set. */
export interface SummarySource {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason: string;
  readonly message?: string | undefined;
}

export interface SummaryInput {
  /** The object's conditions, after setting the ones the summary reads. */
  readonly conditions: readonly SummarySource[] | undefined;
  /**
   * The condition types summarised, most relevant first: problems are reported in this order and the first one gives
   * a False summary its reason. A type listed twice counts once; an empty list summarises to True.
   */
  readonly forConditionTypes: readonly string[];
  /** Types whose normal state is False (such as `Deleting` or `Paused`): True is the problem, False is fine. */
  readonly negativePolarityConditionTypes?: readonly string[] | undefined;
  /** Types left out while missing; any other missing type counts as Unknown ("not reported yet"). */
  readonly ignoreTypesIfMissing?: readonly string[] | undefined;
  /** The summary's type: `Ready` unless told. */
  readonly type?: string | undefined;
  readonly observedGeneration: number;
}

interface Problem {
  readonly status: 'False' | 'Unknown';
  readonly reason: string;
  readonly text: string;
}

/**
 * A condition summarising others, CAPI's `conditions.NewSummaryCondition` with its default merge strategy: each listed
 * condition is an issue (False, or True for a negative-polarity type), unknown (Unknown, or missing) or fine. The
 * summary is False when any is an issue, else Unknown when any is unknown, else True. Its message lists every issue
 * and every unknown in the listed order as `<type>: <message>` (the reason where the message is empty), joined by
 * "; ". Where Tally differs from CAPI, on purpose: a False summary takes the reason of its first issue (CAPI v1.10+
 * writes a generic one), an Unknown one `ReadyUnknown`, a True one `Ready` with an empty message (CAPI lists the
 * fine conditions' messages), and the message stays on one line (CAPI writes a `* ` bullet per line).
 */
export function summarizeConditions(input: SummaryInput): ConditionInput {
  const negative = new Set(input.negativePolarityConditionTypes ?? []);
  const ignoredIfMissing = new Set(input.ignoreTypesIfMissing ?? []);
  const problems: Problem[] = [];
  for (const type of new Set(input.forConditionTypes)) {
    const condition = input.conditions?.find((candidate) => candidate.type === type);
    if (condition === undefined) {
      if (!ignoredIfMissing.has(type)) {
        problems.push({ status: 'Unknown', reason: NOT_YET_REPORTED_REASON, text: `${type}: not reported yet` });
      }
      continue;
    }
    const status = problemStatus(condition.status, negative.has(type));
    if (status === undefined) continue;
    const text = `${type}: ${condition.message || condition.reason}`;
    problems.push({ status, reason: condition.reason, text });
  }
  const base = { type: input.type ?? READY_CONDITION, observedGeneration: input.observedGeneration };
  if (problems.length === 0) return { ...base, status: 'True', reason: READY_REASON, message: '' };
  const message = problems.map((problem) => problem.text).join('; ');
  const firstIssue = problems.find((problem) => problem.status === 'False');
  if (firstIssue === undefined) return { ...base, status: 'Unknown', reason: READY_UNKNOWN_REASON, message };
  return { ...base, status: 'False', reason: firstIssue.reason || NOT_READY_REASON, message };
}

/**
 * False for an issue, Unknown for unknown, undefined where the condition is in its normal state. A status that is none
 * of the three (data that bypassed validation) counts as unknown, as CAPI counts it.
 */
function problemStatus(status: ConditionStatus, negativePolarity: boolean): 'False' | 'Unknown' | undefined {
  if (status === (negativePolarity ? 'False' : 'True')) return undefined;
  if (status === (negativePolarity ? 'True' : 'False')) return 'False';
  return 'Unknown';
}
