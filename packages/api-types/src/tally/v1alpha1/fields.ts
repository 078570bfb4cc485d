import * as z from 'zod';
import type { ValidationRule } from '../../crd/structural-schema.js';
import { codePointLength } from '../../text/clip.js';
import { type Inspection, inspectAddressEntry, inspectCIDR, inspectIP } from './addresses.js';
import { isNetworkAlignedCIDR, isValidEntry } from './cel.js';
import { MAX_ENTRY_LENGTH, MAX_IP_LENGTH } from './constants.js';

/**
 * String fields shared by the pool kinds. Each carries its rule twice, once as CEL for the API server and once
 * as a zod refinement over the allocator's parser; the messages match so a user sees the same words either way.
 */

/**
 * A string field checked twice with the same words: by `rule` (CEL) at the API server and by `check` (the allocator's
 * parser) in zod. A refused value reads `"<value>" is not <forms>`, with the parser's reason after a colon in zod; the
 * static message, shown when the expression cannot run or yields text with a line break (a value with a newline),
 * calls it `the <subject>` instead of the rule's CEL source.
 */
export function checkedText(options: {
  readonly maxLength: number;
  readonly rule: string;
  readonly subject: string;
  readonly forms: string;
  /** Why the value is refused, or undefined when it is accepted. */
  readonly check: (value: string) => string | undefined;
}): z.ZodString {
  const { maxLength, forms } = options;
  const rule: ValidationRule = {
    rule: options.rule,
    message: `the ${options.subject} is not ${forms}`,
    messageExpression: `'"' + self + '" is not ${forms}'`,
    reason: 'FieldValueInvalid',
  };
  return z
    .string()
    .min(1)
    .max(maxLength)
    .superRefine((value, ctx) => {
      // zod runs refinements after a failed length check too: an over-long value is reported by .max() only. Counted
      // in code points, as .max() and the API server count them: counted in UTF-16 units, a value of at most maxLength
      // characters holding an emoji passed .max() yet skipped this check, and was accepted without being parsed.
      if (codePointLength(value) > maxLength) return;
      const reason = options.check(value);
      if (reason !== undefined) ctx.addIssue({ code: 'custom', message: `"${value}" is not ${forms}: ${reason}` });
    })
    .meta({ 'x-kubernetes-validations': [rule] });
}

/** Why an inspection refused its text, or undefined when it did not. */
export function refusal(inspected: Inspection<unknown>): string | undefined {
  return inspected.ok ? undefined : inspected.reason;
}

/** An `addresses` / `excludedAddresses` entry. */
export const AddressEntry = checkedText({
  maxLength: MAX_ENTRY_LENGTH,
  rule: isValidEntry('self'),
  subject: 'entry',
  forms: 'an IP address, a CIDR, or a first-last range of one family with first <= last',
  check: (value) => refusal(inspectAddressEntry(value)),
});

/** A single IP address (gateway, reservation). */
export const IPText = checkedText({
  maxLength: MAX_IP_LENGTH,
  rule: 'isIP(self)',
  subject: 'value',
  forms: 'an IP address',
  check: (value) => refusal(inspectIP(value)),
});

/** A prefix pool's CIDR: host bits must be zero, so "fd00::1/64" is refused rather than silently widened. */
export const NetworkCIDR = checkedText({
  maxLength: MAX_IP_LENGTH + 4,
  rule: isNetworkAlignedCIDR('self'),
  subject: 'prefix',
  forms: 'a network-aligned CIDR (an address with all host bits zero, a slash and a prefix length)',
  check: (value) => {
    const inspected = inspectCIDR(value);
    if (!inspected.ok) return inspected.reason;
    return inspected.value.hostBitsSet ? 'host bits are set' : undefined;
  },
});
