/**
 * The name of the IPAddress Metal3 creates for an address: `<namePrefix>-<address>` with every '.' and ':' turned
 * into '-', trailing '-' removed (`provisioning-192-168-0-11`, `pool-fd00--1` for fd00::1, `pool-fd00` for fd00::).
 * Tally names them the same way, so an IPAddress Metal3 created is found — and reused — after a switch, and two
 * controllers can never create two objects for one address of one pool: the name is the same, the API server keeps
 * one. Pass the canonical text (`formatIP`), as Metal3 passes Go's `net.IP.String()`, which prints the same text.
 *
 * The mapping is one-to-one within a family; across families it is not (`1.2.3.4` and `1:2:3:4::` both give
 * `<prefix>-1-2-3-4`), which only matters for a pool with ranges of both families.
 */
export function ipAddressName(namePrefix: string, address: string): string {
  const joined = `${namePrefix}-${address.replaceAll(':', '-').replaceAll('.', '-')}`;
  return joined.replace(/-+$/, '');
}
