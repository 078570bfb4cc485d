import type { PoolSpecIssue } from '@tally-ipam/allocator';

/** An IPPool spec that cannot be served; every issue names the field (`spec.pools[1].start`) and the value. */
export class Metal3PoolSpecError extends Error {
  readonly issues: readonly PoolSpecIssue[];

  constructor(issues: readonly PoolSpecIssue[]) {
    const listed = issues.slice(0, 10).map((issue) => `${issue.field}: ${issue.message}`);
    if (issues.length > 10) listed.push(`and ${issues.length - 10} more`);
    super(`invalid IPPool spec (${issues.length} problem${issues.length === 1 ? '' : 's'}): ${listed.join('; ')}`);
    this.name = 'Metal3PoolSpecError';
    this.issues = issues;
  }
}

/**
 * Why a claim got no address; stable strings the claim reconciler writes to `status.errorMessage` with the message.
 * - `exhausted`: every range is full (Metal3: "Exhausted IP Pools");
 * - `pre-allocation-held`: the claim's pre-allocated address is held by another claim's IPAddress;
 * - `pre-allocation-invalid`: the claim's pre-allocation cannot be honoured (Metal3: "Pre-allocated IP out of bond").
 */
export type Metal3AllocationFailure = 'exhausted' | 'pre-allocation-held' | 'pre-allocation-invalid';

export class Metal3AllocationError extends Error {
  readonly reason: Metal3AllocationFailure;

  constructor(reason: Metal3AllocationFailure, message: string) {
    super(message);
    this.name = 'Metal3AllocationError';
    this.reason = reason;
  }
}
