import { type AddressPool, checkAllocatable, type PoolSpecIssue, parseIP } from '@tally-ipam/allocator';
import { echo } from '@tally-ipam/api-types';

/**
 * The static reservations a pool can never honour: an address outside the pool's addresses, excluded, the gateway,
 * or a reserved network address. One issue per entry, naming it (`spec.reservations[2]`), for the webhook's refusal
 * and the controller's InvalidSpec condition alike.
 */
export function reservationIssues(
  pool: AddressPool,
  reservations: readonly { readonly claimName: string; readonly address: string }[],
): PoolSpecIssue[] {
  const issues: PoolSpecIssue[] = [];
  reservations.forEach((reservation, index) => {
    const verdict = checkAllocatable(pool, parseIP(reservation.address));
    if (verdict.allocatable) return;
    issues.push({
      field: `spec.reservations[${index}]`,
      value: reservation.address,
      message: `address ${echo(reservation.address)} for claim ${echo(reservation.claimName)} ${verdict.detail}`,
    });
  });
  return issues;
}
