/**
 * `metav1.Condition` helpers (the v1beta2 contract's `status.conditions`). Pure functions: they return new arrays and
 * never change their inputs, so a reconciler can compare old and new status to skip no-op writes.
 */

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  readonly type: string;
  readonly status: ConditionStatus;
  /** The generation of the object the condition was computed from. */
  readonly observedGeneration?: number | undefined;
  /** RFC 3339 (second precision) time of the last status change. */
  readonly lastTransitionTime: string;
  /** UpperCamelCase machine-readable reason; never empty. */
  readonly reason: string;
  readonly message: string;
}

export interface ConditionInput {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason: string;
  readonly message?: string | undefined;
  readonly observedGeneration: number;
}

/** Thrown for a condition the API server would reject (apimachinery's validation of metav1.Condition). */
export class InvalidConditionError extends Error {
  override readonly name = 'InvalidConditionError';
}

// The patterns and limits of metav1.Condition's OpenAPI validation.
const TYPE_PATTERN =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;
const REASON_PATTERN = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const MAX_TYPE_LENGTH = 316;
const MAX_REASON_LENGTH = 1024;
const MAX_MESSAGE_LENGTH = 32768;
const STATUSES: readonly string[] = ['True', 'False', 'Unknown'];

/**
 * Sets a condition: adds it, or updates the one of the same type. `lastTransitionTime` becomes `now` only when the
 * status changes (or the condition is new); reason, message and observedGeneration always take the new values.
 * Throws `InvalidConditionError` for an empty or malformed reason or type, an unknown status, a message over 32 kB
 * or a negative observedGeneration.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
  now: Date,
): Condition[] {
  validateCondition(input);
  const existing = conditions ?? [];
  const previous = existing.find((condition) => condition.type === input.type);
  const next: Condition = {
    type: input.type,
    status: input.status,
    observedGeneration: input.observedGeneration,
    lastTransitionTime:
      previous && previous.status === input.status ? previous.lastTransitionTime : formatConditionTime(now),
    reason: input.reason,
    message: input.message ?? '',
  };
  return previous
    ? existing.map((condition) => (condition.type === input.type ? next : condition))
    : [...existing, next];
}

export function getCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((condition) => condition.type === type);
}

export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === 'True';
}

export function isConditionFalse(conditions: readonly Condition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === 'False';
}

export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((condition) => condition.type !== type);
}

/** metav1.Time serializes with second precision: `2026-01-02T15:04:05Z`. */
export function formatConditionTime(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

function validateCondition(input: ConditionInput): void {
  const what = `condition ${JSON.stringify(input.type)}`;
  if (input.type.length === 0 || input.type.length > MAX_TYPE_LENGTH || !TYPE_PATTERN.test(input.type)) {
    throw new InvalidConditionError(
      `${what}: type must be a qualified name of at most ${MAX_TYPE_LENGTH} characters (e.g. "Ready")`,
    );
  }
  if (!STATUSES.includes(input.status)) {
    throw new InvalidConditionError(
      `${what}: status must be True, False or Unknown, got ${JSON.stringify(input.status)}`,
    );
  }
  if (input.reason.length === 0) {
    throw new InvalidConditionError(`${what}: reason must not be empty (use an UpperCamelCase reason such as "Ready")`);
  }
  if (input.reason.length > MAX_REASON_LENGTH || !REASON_PATTERN.test(input.reason)) {
    throw new InvalidConditionError(
      `${what}: reason ${JSON.stringify(input.reason)} must start with a letter and contain only letters, digits, "_", "," and ":" (at most ${MAX_REASON_LENGTH} characters)`,
    );
  }
  if ((input.message?.length ?? 0) > MAX_MESSAGE_LENGTH) {
    throw new InvalidConditionError(`${what}: message is longer than ${MAX_MESSAGE_LENGTH} characters`);
  }
  if (!Number.isSafeInteger(input.observedGeneration) || input.observedGeneration < 0) {
    throw new InvalidConditionError(
      `${what}: observedGeneration must be a non-negative integer, got ${input.observedGeneration}`,
    );
  }
}
