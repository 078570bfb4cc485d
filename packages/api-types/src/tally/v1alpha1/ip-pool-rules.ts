import type * as z from 'zod';
import type { ValidationRule } from '../../crd/structural-schema.js';
import { isIntegerInRange } from '../../text/clip.js';
import { type AddressInterval, inspectAddressEntry, inspectIP, subnetAround } from './addresses.js';
import { entryFamily, entryInside, familyText, isParseableEntry, networkAround, smallIntText } from './cel.js';
import { MAX_POOL_ENTRIES, MAX_RESERVATIONS } from './constants.js';
import {
  gatewayFamilyRule,
  immutableFamilyRule,
  mixedFamilyRule,
  type PoolFamilyList,
  poolFamilyCEL,
  refineGatewayFamily,
} from './pool-family-rules.js';

/**
 * The cross-field rules of the IP pool spec, twice: as CEL for the API server (`x-kubernetes-validations` on
 * `spec`) and as a zod refinement over the allocator's parser, so both refuse the same pools with the same words.
 */

const ADDRESSES: PoolFamilyList = {
  list: 'addresses',
  variable: 'a',
  entry: 'entry',
  isReadable: isParseableEntry,
  familyOf: entryFamily,
};
const { first: FIRST, readable: POOL_PARSEABLE, family: POOL_FAMILY } = poolFamilyCEL(ADDRESSES);
const PREFIX_IN_RANGE = '(self.prefix >= 0 && self.prefix <= 128)';
const POOL_FAMILY_TEXT = familyText(POOL_FAMILY);
const POOL_NETWORK = networkAround(FIRST, 'self.prefix');

const RESERVATIONS = 'self.reservations';
/**
 * Index of the first reservation matching `condition` (written against `self.reservations[i]`). Messages index the
 * list itself instead of reading fields of a filter() result, whose string sizes the cost estimator cannot bound.
 */
function firstReservationIndex(condition: (reservation: string) => string): string {
  const indexes = Array.from({ length: MAX_RESERVATIONS }, (_, index) => index).join(', ');
  return `[${indexes}].filter(i, i < size(${RESERVATIONS}) && ${condition(`${RESERVATIONS}[i]`)})[0]`;
}
const WRONG_FAMILY_RESERVATION = `${RESERVATIONS}[${firstReservationIndex(
  (r) => `isIP(${r}.address) && ip(${r}.address).family() != ${POOL_FAMILY}`,
)}]`;
const SHARED_ADDRESS_RESERVATION = `${RESERVATIONS}[${firstReservationIndex(
  (r) =>
    `isIP(${r}.address) && ${RESERVATIONS}.filter(s, isIP(s.address) && ip(s.address) == ip(${r}.address)).size() > 1`,
)}]`;

/** The first entry (CEL variable `v` over `list`) that parses but is not of the pool's family, for a message. */
function celOtherFamily(list: string, v: string): string {
  return `${list}.filter(${v}, ${isParseableEntry(v)} && ${entryFamily(v)} != ${POOL_FAMILY})[0]`;
}

/** Cross-field rules on the IP pool spec; each has a zod twin in `refineIPPoolSpec`. */
export const IP_POOL_SPEC_RULES: ValidationRule[] = [
  mixedFamilyRule(ADDRESSES),
  {
    rule:
      `!has(self.excludedAddresses) || !${POOL_PARSEABLE} || ` +
      `self.excludedAddresses.all(e, !${isParseableEntry('e')} || ${entryFamily('e')} == ${POOL_FAMILY})`,
    messageExpression:
      `'excludedAddresses ' + ${celOtherFamily('self.excludedAddresses', 'e')} + ` +
      `' not IPv' + ${POOL_FAMILY_TEXT} + ' like the pool addresses'`,
    message: 'excludedAddresses mix IP families: every entry must be of the family of the pool addresses',
    fieldPath: '.excludedAddresses',
    reason: 'FieldValueInvalid',
  },
  {
    rule: `!${POOL_PARSEABLE} || !${PREFIX_IN_RANGE} || ${POOL_FAMILY} == 6 || self.prefix <= 32`,
    messageExpression: `'prefix ' + ${smallIntText('self.prefix')} + ' is longer than 32, the maximum for IPv4 addresses'`,
    message: 'prefix is longer than 32, the maximum for IPv4 addresses',
    fieldPath: '.prefix',
    reason: 'FieldValueInvalid',
  },
  gatewayFamilyRule(ADDRESSES),
  {
    rule:
      `!${POOL_PARSEABLE} || !${PREFIX_IN_RANGE} || (${POOL_FAMILY} == 4 && self.prefix > 32) || ` +
      `self.addresses.all(a, !${isParseableEntry('a')} || ${entryFamily('a')} != ${POOL_FAMILY} || ` +
      `${entryInside('a', POOL_NETWORK)})`,
    messageExpression:
      `'addresses ' + self.addresses.filter(a, ${isParseableEntry('a')} && ${entryFamily('a')} == ${POOL_FAMILY} && ` +
      `!${entryInside('a', POOL_NETWORK)})[0] + ' lie outside the /' + ${smallIntText('self.prefix')} + ` +
      `' network of the first entry ' + ${FIRST}`,
    message: 'addresses lie outside the prefix network of the first entry',
    fieldPath: '.addresses',
    reason: 'FieldValueInvalid',
  },
  {
    rule:
      `!has(self.reservations) || !${POOL_PARSEABLE} || ` +
      `self.reservations.all(r, !isIP(r.address) || ip(r.address).family() == ${POOL_FAMILY})`,
    messageExpression:
      `'reservations ' + ${WRONG_FAMILY_RESERVATION}.claimName + '=' + ${WRONG_FAMILY_RESERVATION}.address + ` +
      `' not IPv' + ${POOL_FAMILY_TEXT} + ' like the pool'`,
    message: 'reservations are not of the family of the pool',
    fieldPath: '.reservations',
    reason: 'FieldValueInvalid',
  },
  {
    rule:
      `!has(self.reservations) || self.reservations.all(r, !isIP(r.address) || ` +
      `self.reservations.filter(s, isIP(s.address) && ip(s.address) == ip(r.address)).size() == 1)`,
    messageExpression: `'reservations give one address to several claims: ' + ${SHARED_ADDRESS_RESERVATION}.address`,
    message: 'reservations give one address to several claims',
    fieldPath: '.reservations',
    reason: 'FieldValueInvalid',
  },
  immutableFamilyRule(ADDRESSES),
];

/** The fields the cross-field rules read. */
export interface IPPoolSpecView {
  addresses: string[];
  prefix: number;
  gateway?: string | undefined;
  excludedAddresses?: string[] | undefined;
  reservations?: ReservationView[] | undefined;
}

interface ReservationView {
  claimName: string;
  address: string;
}

/**
 * The zod twin of IP_POOL_SPEC_RULES: same rules, same words. CEL looks at every entry `ip()` can read, zod only at
 * fully valid ones; an entry that is readable but invalid (an inverted range) is refused by its own rule either way.
 */
export function refineIPPoolSpec(spec: IPPoolSpecView, ctx: z.RefinementCtx): void {
  // Over-long lists are reported by their own .max() check; the cross-field rules would cost O(n^2) on them.
  if (
    spec.addresses.length > MAX_POOL_ENTRIES ||
    (spec.excludedAddresses?.length ?? 0) > MAX_POOL_ENTRIES ||
    (spec.reservations?.length ?? 0) > MAX_RESERVATIONS
  ) {
    return;
  }
  const parse = (text: string): AddressInterval | undefined => {
    const inspected = inspectAddressEntry(text);
    return inspected.ok ? inspected.value : undefined;
  };
  const reservations = spec.reservations ?? [];
  refineReservationUniqueness(reservations, ctx);
  const firstText = spec.addresses[0];
  const first = firstText === undefined ? undefined : parse(firstText);
  if (first === undefined) return;
  const family = first.family;
  const otherFamily = (list: string[]): string[] =>
    list.filter((text) => {
      const parsed = parse(text);
      return parsed !== undefined && parsed.family !== family;
    });

  const mixed = otherFamily(spec.addresses);
  if (mixed.length > 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['addresses'],
      message: `addresses mix IP families: ${mixed.join(', ')} not IPv${family} like the first entry ${firstText}`,
    });
  }
  const excludedMixed = otherFamily(spec.excludedAddresses ?? []);
  if (excludedMixed.length > 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['excludedAddresses'],
      message: `excludedAddresses ${excludedMixed.join(', ')} not IPv${family} like the pool addresses`,
    });
  }
  // zod runs this refinement even when `prefix` failed its own check (-2^31, 1e300, 1.5): such a value is reported
  // there and must never reach the shifts below (a prefix of -10^9 would build a billion-bit network mask).
  const prefixUsable = isIntegerInRange(spec.prefix, 0, 128);
  const prefixFits = prefixUsable && (family === 6 || spec.prefix <= 32);
  if (prefixUsable && !prefixFits) {
    ctx.addIssue({
      code: 'custom',
      path: ['prefix'],
      message: `prefix ${spec.prefix} is longer than 32, the maximum for IPv4 addresses`,
    });
  }
  refineGatewayFamily(spec.gateway, family, 'addresses', ctx);
  if (prefixFits) {
    const network = subnetAround(family, first.first, spec.prefix);
    const outside = spec.addresses.filter((text) => {
      const parsed = parse(text);
      return (
        parsed !== undefined && parsed.family === family && (parsed.first < network.first || parsed.last > network.last)
      );
    });
    if (outside.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['addresses'],
        message: `addresses ${outside.join(', ')} lie outside the /${spec.prefix} network of the first entry ${firstText}`,
      });
    }
  }
  const wrongFamily = reservations.filter((reservation) => {
    const ip = inspectIP(reservation.address);
    return ip.ok && ip.value.family !== family;
  });
  if (wrongFamily.length > 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['reservations'],
      message: `reservations ${wrongFamily.map((r) => `${r.claimName}=${r.address}`).join(', ')} not IPv${family} like the pool`,
    });
  }
}

function refineReservationUniqueness(reservations: readonly ReservationView[], ctx: z.RefinementCtx): void {
  const byAddress = new Map<string, ReservationView[]>();
  const claimNames = new Set<string>();
  reservations.forEach((reservation, index) => {
    if (claimNames.has(reservation.claimName)) {
      ctx.addIssue({
        code: 'custom',
        path: ['reservations', index, 'claimName'],
        message: `duplicate reservation for claim ${reservation.claimName}`,
      });
    }
    claimNames.add(reservation.claimName);
    const ip = inspectIP(reservation.address);
    if (!ip.ok) return;
    const key = `${ip.value.family}/${ip.value.value}`;
    byAddress.set(key, [...(byAddress.get(key) ?? []), reservation]);
  });
  const shared = reservations.filter((reservation) => {
    const ip = inspectIP(reservation.address);
    return ip.ok && (byAddress.get(`${ip.value.family}/${ip.value.value}`)?.length ?? 0) > 1;
  });
  if (shared.length > 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['reservations'],
      message: `reservations give one address to several claims: ${[...new Set(shared.map((r) => r.address))].join(', ')}`,
    });
  }
}
