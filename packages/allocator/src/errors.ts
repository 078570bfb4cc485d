/** Why an allocation could not be honoured; stable strings that callers may map to condition reasons. */
export type AllocationFailureReason =
  /** Nothing is free (possibly because released addresses are still in their reuse grace period). */
  | 'exhausted'
  /** The requested value is not in the pool's `addresses`/`prefixes` (or is of the other IP family). */
  | 'outside-pool'
  /** The requested value is listed in the pool's exclusions. */
  | 'excluded'
  /** The requested value is the gateway, the IPv4 network or broadcast address, or the IPv6 subnet-router anycast. */
  | 'reserved'
  /** The requested prefix does not have the pool's allocation length or is not aligned to it. */
  | 'misaligned'
  /** The requested value is already allocated. */
  | 'taken'
  /** The requested value was released less than the reuse grace period ago. */
  | 'in-grace-period';

export interface AllocationErrorDetails {
  /** The requested address or prefix, canonical text; absent for `exhausted`. */
  readonly requested?: string;
  /** For `in-grace-period`, and for `exhausted` when something is cooling down: when the next value frees up. */
  readonly availableAtMs?: number;
}

export class AllocationError extends Error {
  readonly reason: AllocationFailureReason;
  readonly requested: string | undefined;
  readonly availableAtMs: number | undefined;

  constructor(reason: AllocationFailureReason, message: string, details: AllocationErrorDetails = {}) {
    super(message);
    this.name = 'AllocationError';
    this.reason = reason;
    this.requested = details.requested;
    this.availableAtMs = details.availableAtMs;
  }
}

/** One problem in a pool spec: the JSON path of the field (`spec.addresses[2]`), its value, and what is wrong. */
export interface PoolSpecIssue {
  readonly field: string;
  readonly value: unknown;
  readonly message: string;
}

export class PoolSpecError extends Error {
  readonly issues: readonly PoolSpecIssue[];

  constructor(issues: readonly PoolSpecIssue[]) {
    const lines = issues.map((issue) => `${issue.field}: ${JSON.stringify(issue.value)}: ${issue.message}`);
    super(`invalid pool spec (${issues.length} problem${issues.length === 1 ? '' : 's'}): ${lines.join('; ')}`);
    this.name = 'PoolSpecError';
    this.issues = issues;
  }
}
