import type * as z from 'zod';
import type { ValidationRule } from '../../crd/structural-schema.js';
import { isIntegerInRange } from '../../text/clip.js';
import { type AddressInterval, inspectAddressEntry, inspectCIDR } from './addresses.js';
import { entryFamily, familyText, isNetworkAlignedCIDR, isParseableEntry, smallIntText } from './cel.js';
import { MAX_POOL_ENTRIES } from './constants.js';
import {
  gatewayFamilyRule,
  immutableFamilyRule,
  mixedFamilyRule,
  type PoolFamilyList,
  poolFamilyCEL,
  refineGatewayFamily,
} from './pool-family-rules.js';

/**
 * The cross-field rules of the prefix pool spec, twice: as CEL for the API server and as a zod refinement over the
 * allocator's parser, so both refuse the same pools with the same words.
 */

const PREFIXES: PoolFamilyList = {
  list: 'prefixes',
  variable: 'p',
  entry: 'prefix',
  isReadable: isNetworkAlignedCIDR,
  familyOf: (p) => `cidr(${p}).ip().family()`,
};
const { readable: POOL_VALID, family: POOL_FAMILY } = poolFamilyCEL(PREFIXES);
const LENGTH_IN_RANGE = '(self.allocationPrefixLength >= 1 && self.allocationPrefixLength <= 128)';

/** Cross-field rules on the prefix pool spec; each has a zod twin in `refinePrefixPoolSpec`. */
export const PREFIX_POOL_SPEC_RULES: ValidationRule[] = [
  mixedFamilyRule(PREFIXES),
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
  gatewayFamilyRule(PREFIXES),
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
  immutableFamilyRule(PREFIXES),
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
  refineGatewayFamily(spec.gateway, family, 'prefixes', ctx);
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
