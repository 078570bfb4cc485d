import type * as z from 'zod';
import type { ValidationRule } from '../../crd/structural-schema.js';
import { isIntegerInRange } from '../../text/clip.js';
import { type AddressInterval, inspectAddressEntry, inspectCIDR, inspectIP } from './addresses.js';
import { entryFamily, familyText, isNetworkAlignedCIDR, isParseableEntry, smallIntText } from './cel.js';
import { MAX_POOL_ENTRIES } from './constants.js';

/**
 * The cross-field rules of the prefix pool spec, twice: as CEL for the API server and as a zod refinement over the
 * allocator's parser, so both refuse the same pools with the same words.
 */

const FIRST = 'self.prefixes[0]';
// Rules still run when the schema check failed, so every index and lookup is guarded against bad input.
const POOL_VALID = `(size(self.prefixes) > 0 && ${isNetworkAlignedCIDR(FIRST)})`;
const LENGTH_IN_RANGE = '(self.allocationPrefixLength >= 1 && self.allocationPrefixLength <= 128)';
const POOL_FAMILY = `cidr(${FIRST}).ip().family()`;

function celPrefixFamily(p: string): string {
  return `cidr(${p}).ip().family()`;
}

/** Cross-field rules on the prefix pool spec; each has a zod twin in `refinePrefixPoolSpec`. */
export const PREFIX_POOL_SPEC_RULES: ValidationRule[] = [
  {
    rule: `!${POOL_VALID} || self.prefixes.all(p, !${isNetworkAlignedCIDR('p')} || ${celPrefixFamily('p')} == ${POOL_FAMILY})`,
    messageExpression:
      `'prefixes mix IP families: ' + self.prefixes.filter(p, ${isNetworkAlignedCIDR('p')} && ` +
      `${celPrefixFamily('p')} != ${POOL_FAMILY})[0] + ' not IPv' + ${familyText(POOL_FAMILY)} + ` +
      `' like the first prefix ' + ${FIRST}`,
    message: 'prefixes mix IP families: every prefix must be of the family of the first prefix',
    fieldPath: '.prefixes',
    reason: 'FieldValueInvalid',
  },
  {
    rule: `!${POOL_VALID} || !${LENGTH_IN_RANGE} || ${POOL_FAMILY} == 6 || self.allocationPrefixLength <= 32`,
    messageExpression: `'allocationPrefixLength ' + ${smallIntText('self.allocationPrefixLength')} + ' is longer than 32, the maximum for IPv4 prefixes'`,
    message: 'allocationPrefixLength is longer than 32, the maximum for IPv4 prefixes',
    fieldPath: '.allocationPrefixLength',
    reason: 'FieldValueInvalid',
  },
  {
    rule:
      `!${LENGTH_IN_RANGE} || ` +
      `self.prefixes.all(p, !${isNetworkAlignedCIDR('p')} || cidr(p).prefixLength() <= self.allocationPrefixLength)`,
    messageExpression:
      `'allocationPrefixLength ' + ${smallIntText('self.allocationPrefixLength')} + ' is shorter than the prefixes ' + ` +
      `self.prefixes.filter(p, ${isNetworkAlignedCIDR('p')} && cidr(p).prefixLength() > self.allocationPrefixLength)` +
      `[0] + ' it must be carved from'`,
    message: 'allocationPrefixLength is shorter than a prefix it must be carved from',
    fieldPath: '.allocationPrefixLength',
    reason: 'FieldValueInvalid',
  },
  {
    rule: `!has(self.gateway) || !isIP(self.gateway) || !${POOL_VALID} || ip(self.gateway).family() == ${POOL_FAMILY}`,
    messageExpression:
      `'gateway ' + self.gateway + ' is IPv' + ${familyText('ip(self.gateway).family()')} + ` +
      `' but the pool prefixes are IPv' + ${familyText(POOL_FAMILY)}`,
    message: 'gateway is not of the family of the pool prefixes',
    fieldPath: '.gateway',
    reason: 'FieldValueInvalid',
  },
  {
    rule:
      `!has(self.excludedPrefixes) || !${POOL_VALID} || ` +
      `self.excludedPrefixes.all(e, !${isParseableEntry('e')} || ${entryFamily('e')} == ${POOL_FAMILY})`,
    messageExpression:
      `'excludedPrefixes ' + self.excludedPrefixes.filter(e, ${isParseableEntry('e')} && ${entryFamily('e')} != ` +
      `${POOL_FAMILY})[0] + ' not IPv' + ${familyText(POOL_FAMILY)} + ' like the pool prefixes'`,
    message: 'excludedPrefixes are not of the family of the pool prefixes',
    fieldPath: '.excludedPrefixes',
    reason: 'FieldValueInvalid',
  },
  {
    rule:
      `size(oldSelf.prefixes) == 0 || !${isNetworkAlignedCIDR('oldSelf.prefixes[0]')} || !${POOL_VALID} || ` +
      `${celPrefixFamily('oldSelf.prefixes[0]')} == ${POOL_FAMILY}`,
    messageExpression:
      `'the IP family of a pool is immutable: it was IPv' + ${familyText(celPrefixFamily('oldSelf.prefixes[0]'))} + ` +
      `'; create a new pool for IPv' + ${familyText(POOL_FAMILY)}`,
    message: 'the IP family of a pool is immutable; create a new pool for the other family',
    fieldPath: '.prefixes',
    reason: 'FieldValueForbidden',
  },
];

/** The fields the cross-field rules read. */
export interface PrefixPoolSpecView {
  prefixes: string[];
  allocationPrefixLength: number;
  gateway?: string | undefined;
  excludedPrefixes?: string[] | undefined;
}

/** The zod twin of PREFIX_POOL_SPEC_RULES: same rules, same words. */
export function refinePrefixPoolSpec(spec: PrefixPoolSpecView, ctx: z.RefinementCtx): void {
  // Over-long lists are reported by their own .max() check.
  if (spec.prefixes.length > MAX_POOL_ENTRIES || (spec.excludedPrefixes?.length ?? 0) > MAX_POOL_ENTRIES) return;
  const parsePrefix = (text: string): AddressInterval | undefined => {
    const inspected = inspectCIDR(text);
    return inspected.ok && !inspected.value.hostBitsSet ? inspected.value : undefined;
  };
  const length = spec.allocationPrefixLength;
  // Runs even when allocationPrefixLength failed its own check; a value out of 1..128 is reported there only.
  const lengthUsable = isIntegerInRange(length, 1, 128);
  const tooLong = lengthUsable ? spec.prefixes.filter((text) => (parsePrefix(text)?.prefixLength ?? 0) > length) : [];
  const firstText = spec.prefixes[0];
  const first = firstText === undefined ? undefined : parsePrefix(firstText);
  if (first !== undefined) {
    const family = first.family;
    const mixed = spec.prefixes.filter((text) => {
      const parsed = parsePrefix(text);
      return parsed !== undefined && parsed.family !== family;
    });
    if (mixed.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['prefixes'],
        message: `prefixes mix IP families: ${mixed.join(', ')} not IPv${family} like the first prefix ${firstText}`,
      });
    }
    if (lengthUsable && family === 4 && length > 32) {
      ctx.addIssue({
        code: 'custom',
        path: ['allocationPrefixLength'],
        message: `allocationPrefixLength ${length} is longer than 32, the maximum for IPv4 prefixes`,
      });
    }
  }
  if (tooLong.length > 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['allocationPrefixLength'],
      message: `allocationPrefixLength ${length} is shorter than the prefixes ${tooLong.join(', ')} it must be carved from`,
    });
  }
  if (first === undefined) return;
  const family = first.family;
  if (spec.gateway !== undefined) {
    const gateway = inspectIP(spec.gateway);
    if (gateway.ok && gateway.value.family !== family) {
      ctx.addIssue({
        code: 'custom',
        path: ['gateway'],
        message: `gateway ${spec.gateway} is IPv${gateway.value.family} but the pool prefixes are IPv${family}`,
      });
    }
  }
  const excludedMixed = (spec.excludedPrefixes ?? []).filter((text) => {
    const parsed = inspectAddressEntry(text);
    return parsed.ok && parsed.value.family !== family;
  });
  if (excludedMixed.length > 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['excludedPrefixes'],
      message: `excludedPrefixes ${excludedMixed.join(', ')} not IPv${family} like the pool prefixes`,
    });
  }
}
