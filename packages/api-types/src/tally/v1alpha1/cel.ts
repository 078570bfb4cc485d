/**
 * CEL fragments for the pool validations, built on the API server's IP/CIDR library (`isIP`, `ip()`, `.family()`,
 * `isCIDR`, `cidr()`, `.prefixLength()`, `.containsIP()`, `.containsCIDR()`, `.masked()`; Kubernetes ≥ 1.31) and the
 * strings extension (`split`, `join`). Each function takes a CEL expression that yields a string and returns an
 * expression; callers guard with the parse fragments so that `ip()`/`cidr()` never see bad text (a failing
 * conversion would surface as an evaluation error instead of a message naming the value).
 *
 * Cost: the API server estimates every rule's worst case before it admits the CRD. Strings produced by
 * `string(ip)` or `string(int)` have no size bound, so comparing or concatenating them is priced as unbounded;
 * the fragments only ever compare IP/CIDR values and turn numbers into text through a constant lookup list.
 *
 * Parsing rules are the API server's (Go `netip`): no leading zeros in IPv4, no zones, no IPv4-mapped IPv6. The
 * zod refinements in `addresses.ts` implement the same rules with the allocator's parser; the fuzz suite holds the
 * two to agreement on a real API server.
 */

const BYTE_INDEXES = Array.from({ length: 16 }, (_, index) => index);
const BIT_INDEXES = Array.from({ length: 8 }, (_, index) => index);
const NUMBER_TEXTS = Array.from({ length: 129 }, (_, number) => `'${number}'`);

/** Text of an integer in 0..128 as a bounded-size CEL string (`string(n)` would be priced as unbounded). */
export function smallIntText(n: string): string {
  return `[${NUMBER_TEXTS.join(', ')}][${n}]`;
}

/** '4' or '6' for a family expression. */
export function familyText(family: string): string {
  return `(${family} == 4 ? '4' : '6')`;
}

/** The first address of a "first-last" range (or the whole text when there is no '-'). */
export function rangeFirst(x: string): string {
  return `${x}.split('-')[0]`;
}

/** The last address of a "first-last" range. */
export function rangeLast(x: string): string {
  return `${x}.split('-')[1]`;
}

/** `x/n` as a CIDR value, where x is address text and n an integer expression in 0..128. */
function cidrOf(x: string, n: string): string {
  return `cidr(${x} + '/' + ${smallIntText(n)})`;
}

/**
 * True when address a <= address b (both valid, same family). CEL has no IP ordering and no integer wide enough
 * for IPv6, so this finds the first bit where they differ — the bit n at which b is still inside a's /n network but
 * not inside its /n+1 network — and checks that a has a 0 there (a's /n and /n+1 networks start at the same
 * address). The search runs per byte, then per bit inside the first differing byte (16 + 8 steps instead of 128),
 * and the two addresses are bound once, which keeps the estimated cost of a 128-entry list inside the budget.
 * `v` names the comprehension variables (unique within one rule).
 */
export function ipLessOrEqual(aText: string, bText: string, v: string): string {
  const [a, b, k, j] = [`a${v}`, `b${v}`, `k${v}`, `j${v}`];
  const differingByte =
    `[${BYTE_INDEXES.join(', ')}].filter(${k}, (ip(${a}).family() == 6 || ${k} < 4) && ` +
    `${cidrOf(a, `8 * ${k}`)}.containsIP(${b}) && !${cidrOf(a, `8 * ${k} + 8`)}.containsIP(${b}))[0]`;
  const n = `8 * ${k} + ${j}`;
  const aHasZeroWhereTheyDiffer =
    `[${BIT_INDEXES.join(', ')}].exists(${j}, ${cidrOf(a, n)}.containsIP(${b}) && ` +
    `!${cidrOf(a, `${n} + 1`)}.containsIP(${b}) && ${cidrOf(a, `${n} + 1`)}.masked().ip() == ${cidrOf(a, n)}.masked().ip())`;
  return (
    `[${aText}].map(${a}, [${bText}].map(${b}, ip(${a}) == ip(${b}) || ` +
    `[${differingByte}].map(${k}, ${aHasZeroWhereTheyDiffer})[0])[0])[0]`
  );
}

/** True when x has the shape of a range whose two ends parse as addresses of one family (order not checked). */
export function isParseableRange(x: string): string {
  return (
    `(${x}.split('-').size() == 2 && isIP(${rangeFirst(x)}) && isIP(${rangeLast(x)}) && ` +
    `ip(${rangeFirst(x)}).family() == ip(${rangeLast(x)}).family())`
  );
}

/** True when x is "first-last": two addresses of one family with first <= last. */
export function isValidRange(x: string): string {
  return `(${isParseableRange(x)} && ${ipLessOrEqual(rangeFirst(x), rangeLast(x), 'r')})`;
}

/** True when x is a single address, a CIDR or a valid range. */
export function isValidEntry(x: string): string {
  return `(${x}.contains('-') ? ${isValidRange(x)} : (${x}.contains('/') ? isCIDR(${x}) : isIP(${x})))`;
}

/**
 * True when `ip()`/`cidr()` can read x's parts, i.e. the cross-field rules can look at it. Cheaper than
 * {@link isValidEntry}; an entry that parses but is invalid (an inverted range) is reported by its own rule.
 */
export function isParseableEntry(x: string): string {
  return `(${x}.contains('-') ? ${isParseableRange(x)} : (${x}.contains('/') ? isCIDR(${x}) : isIP(${x})))`;
}

/** The family (4 or 6) of a parseable entry (of its first address, for a range). */
export function entryFamily(x: string): string {
  return `(${x}.contains('/') && !${x}.contains('-') ? cidr(${x}).ip().family() : ip(${rangeFirst(x)}).family())`;
}

/** The first address of a parseable entry as written (for a CIDR: its address part, host bits included). */
export function entryAddressText(x: string): string {
  return `${rangeFirst(x)}.split('/')[0]`;
}

/** The /n network (n an integer expression) around the first address of a parseable entry. */
export function networkAround(x: string, n: string): string {
  return `${cidrOf(entryAddressText(x), n)}.masked()`;
}

/** True when a parseable entry lies entirely inside the CIDR value `net` (same family assumed). */
export function entryInside(x: string, net: string): string {
  return (
    `(${x}.contains('-') ? (${net}.containsIP(${rangeFirst(x)}) && ${net}.containsIP(${rangeLast(x)})) : ` +
    `(${x}.contains('/') ? ${net}.containsCIDR(${x}) : ${net}.containsIP(${x})))`
  );
}

/** True when x is a CIDR whose host bits are all zero. */
export function isNetworkAlignedCIDR(x: string): string {
  return `(isCIDR(${x}) && cidr(${x}).ip() == cidr(${x}).masked().ip())`;
}
