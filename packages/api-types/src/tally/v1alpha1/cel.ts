/**
 * CEL fragments for the pool validations, built on the API server's IP/CIDR library (`isIP`, `ip()`, `.family()`,
 * `isCIDR`, `cidr()`, `.prefixLength()`, `.containsIP()`, `.containsCIDR()`, `.masked()`; Kubernetes ≥ 1.31) and the
 * strings extension (`split`, `substring`, `join`). Each function takes a CEL expression that yields a string and
 * returns an expression; callers guard with the validity fragments so that `ip()`/`cidr()` never see bad text
 * (a failing conversion would surface as an evaluation error instead of a message naming the value).
 *
 * Parsing rules are the API server's (Go `netip`): no leading zeros in IPv4, no zones, no IPv4-mapped IPv6. The
 * zod refinements in `addresses.ts` implement the same rules with the allocator's parser; the fuzz suite holds the
 * two to agreement on a real API server.
 */

/** Wraps text in CEL single quotes (our inputs never contain quotes or backslashes). */
export function celString(text: string): string {
  return `'${text}'`;
}

/** The first address of a "first-last" range (or the whole text when there is no '-'). */
export function rangeFirst(x: string): string {
  return `${x}.split('-')[0]`;
}

/** The last address of a "first-last" range. */
export function rangeLast(x: string): string {
  return `${x}.split('-')[1]`;
}

/**
 * A string that sorts like the address: IPv4 octets padded to 3 digits, IPv6 expanded to 8 groups of 4 hex digits
 * (CEL has no integer wide enough for IPv6 and no IP ordering). Needs a valid IP. `v` names the comprehension
 * variables, which must be unique within one rule.
 */
export function ipSortKey(x: string, v: string): string {
  const c = `c${v}`;
  const l = `l${v}`;
  const r = `r${v}`;
  const g = `g${v}`;
  const groups = (part: string): string => `(${part} == '' ? 0 : size(${part}.split(':')))`;
  const expanded =
    `(${c}.contains('::') ? [${c}.split('::')[0]].map(${l}, [${c}.split('::')[1]].map(${r}, ` +
    `(${l} == '' ? '' : ${l} + ':') + '0:0:0:0:0:0:0:0'.substring(0, 2 * (8 - ${groups(l)} - ${groups(r)}) - 1) + ` +
    `(${r} == '' ? '' : ':' + ${r}))[0])[0] : ${c})`;
  const v4 = `${c}.split('.').map(${g}, ('00' + ${g}).substring(size(${g}) - 1)).join('.')`;
  const v6 = `${expanded}.split(':').map(${g}, ('000' + ${g}).substring(size(${g}) - 1)).join(':')`;
  return `[string(ip(${x}))].map(${c}, ip(${c}).family() == 4 ? ${v4} : ${v6})[0]`;
}

/** True when x is "first-last": two addresses of one family with first <= last. */
export function isValidRange(x: string): string {
  return (
    `(${x}.split('-').size() == 2 && isIP(${rangeFirst(x)}) && isIP(${rangeLast(x)}) && ` +
    `ip(${rangeFirst(x)}).family() == ip(${rangeLast(x)}).family() && ` +
    `${ipSortKey(rangeFirst(x), 'f')} <= ${ipSortKey(rangeLast(x), 't')})`
  );
}

/** True when x is a single address, a CIDR or a range. */
export function isValidEntry(x: string): string {
  return `(${x}.contains('-') ? ${isValidRange(x)} : (${x}.contains('/') ? isCIDR(${x}) : isIP(${x})))`;
}

/** The family (4 or 6) of a valid entry. */
export function entryFamily(x: string): string {
  return `(${x}.contains('/') && !${x}.contains('-') ? cidr(${x}).ip().family() : ip(${rangeFirst(x)}).family())`;
}

/** True when a valid entry lies entirely inside the CIDR value `net`. */
export function entryInside(x: string, net: string): string {
  return (
    `(${x}.contains('-') ? (${net}.containsIP(${rangeFirst(x)}) && ${net}.containsIP(${rangeLast(x)})) : ` +
    `(${x}.contains('/') ? ${net}.containsCIDR(${x}) : ${net}.containsIP(${x})))`
  );
}

/** The first address of a valid entry as text (the network address for a CIDR). */
export function entryFirstAddress(x: string): string {
  return `(${x}.contains('/') && !${x}.contains('-') ? string(cidr(${x}).masked().ip()) : ${rangeFirst(x)})`;
}

/** True when x is a CIDR whose host bits are all zero. */
export function isNetworkAlignedCIDR(x: string): string {
  return `(isCIDR(${x}) && string(cidr(${x}).ip()) == string(cidr(${x}).masked().ip()))`;
}
