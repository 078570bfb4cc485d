import { type AddressPool, checkAllocatable, type PoolSpecIssue } from '@tally-ipam/allocator';
import { echo, inspectIP } from '@tally-ipam/api-types';

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
    // The schema refuses an address that is not one, but this is called on every spec that parsed: should a schema
    // ever let one through again (as it did an address with an emoji in it), the pool is refused naming the field
    // rather than the parser's exception failing the whole review with HTTP 500 or the reconcile with an error.
    const ip = inspectIP(reservation.address);
    if (!ip.ok) {
      issues.push({
        field: `spec.reservations[${index}].address`,
        value: reservation.address,
        message: `address ${echo(reservation.address)} for claim ${echo(reservation.claimName)} is not an IP address: ${echo(ip.reason)}`,
      });
      return;
    }
    const verdict = checkAllocatable(pool, ip.value);
    if (verdict.allocatable) return;
    issues.push({
      field: `spec.reservations[${index}]`,
      value: reservation.address,
      message: `address ${echo(reservation.address)} for claim ${echo(reservation.claimName)} ${verdict.detail}`,
    });
  });
  return issues;
}
