/**
 * Pool counts are bigints (an IPv6 /64 holds 2^64 addresses), but a Kubernetes status integer travels as a JSON
 * number, which JavaScript only represents exactly up to 2^53 − 1. The reference provider caps at Go's MaxInt64;
 * capping at the largest exact JavaScript integer keeps the written number honest instead of silently rounded.
 */
export const MAX_STATUS_COUNT: number = Number.MAX_SAFE_INTEGER;

export function toStatusCount(count: bigint): number {
  if (count < 0n) throw new RangeError(`a pool count cannot be negative, got ${count}`);
  return count > BigInt(MAX_STATUS_COUNT) ? MAX_STATUS_COUNT : Number(count);
}
