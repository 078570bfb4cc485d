import * as z from 'zod';
import type { ValidationRule } from '../../crd/structural-schema.js';
import { inspectAddressEntry, inspectCIDR, inspectIP } from './addresses.js';
import { isNetworkAlignedCIDR, isValidEntry } from './cel.js';
import { MAX_ENTRY_LENGTH, MAX_IP_LENGTH } from './constants.js';

/**
 * String fields shared by the pool kinds. Each carries its rule twice, once as CEL for the API server and once
 * as a zod refinement over the allocator's parser; the messages match so a user sees the same words either way.
 */

const ENTRY_FORMS = 'an IP address, a CIDR, or a first-last range of one family with first <= last';

export function invalidEntryMessage(value: string): string {
  return `"${value}" is not ${ENTRY_FORMS}`;
}

const ENTRY_RULE: ValidationRule = {
  rule: isValidEntry('self'),
  // Every rule carries a static message too: the API server shows it when the expression cannot run or yields text
  // with a line break (a value with a newline), instead of the rule's CEL source.
  message: `the entry is not ${ENTRY_FORMS}`,
  messageExpression: `'"' + self + '" is not ${ENTRY_FORMS}'`,
  reason: 'FieldValueInvalid',
};

/** An `addresses` / `excludedAddresses` entry. */
export const AddressEntry = z
  .string()
  .min(1)
  .max(MAX_ENTRY_LENGTH)
  .superRefine((value, ctx) => {
    // zod runs refinements after a failed length check too: an over-long value is reported by .max() only.
    if (value.length > MAX_ENTRY_LENGTH) return;
    const inspected = inspectAddressEntry(value);
    if (!inspected.ok) ctx.addIssue({ code: 'custom', message: `${invalidEntryMessage(value)}: ${inspected.reason}` });
  })
  .meta({ 'x-kubernetes-validations': [ENTRY_RULE] });

export function invalidIPMessage(value: string): string {
  return `"${value}" is not an IP address`;
}

/** A single IP address (gateway, reservation). */
export const IPText = z
  .string()
  .min(1)
  .max(MAX_IP_LENGTH)
  .superRefine((value, ctx) => {
    if (value.length > MAX_IP_LENGTH) return;
    const inspected = inspectIP(value);
    if (!inspected.ok) ctx.addIssue({ code: 'custom', message: `${invalidIPMessage(value)}: ${inspected.reason}` });
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: 'isIP(self)',
        message: 'the value is not an IP address',
        messageExpression: `'"' + self + '" is not an IP address'`,
        reason: 'FieldValueInvalid',
      },
    ],
  });

export function invalidPrefixMessage(value: string): string {
  return `"${value}" is not a network-aligned CIDR (an address with all host bits zero, a slash and a prefix length)`;
}

/** A prefix pool's CIDR: host bits must be zero, so "fd00::1/64" is refused rather than silently widened. */
export const NetworkCIDR = z
  .string()
  .min(1)
  .max(MAX_IP_LENGTH + 4)
  .superRefine((value, ctx) => {
    if (value.length > MAX_IP_LENGTH + 4) return;
    const inspected = inspectCIDR(value);
    if (!inspected.ok) {
      ctx.addIssue({ code: 'custom', message: `${invalidPrefixMessage(value)}: ${inspected.reason}` });
    } else if (inspected.value.hostBitsSet) {
      ctx.addIssue({ code: 'custom', message: `${invalidPrefixMessage(value)}: host bits are set` });
    }
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: isNetworkAlignedCIDR('self'),
        message:
          'the prefix is not a network-aligned CIDR (an address with all host bits zero, a slash and a prefix length)',
        messageExpression: `'"' + self + '" is not a network-aligned CIDR (an address with all host bits zero, a slash and a prefix length)'`,
        reason: 'FieldValueInvalid',
      },
    ],
  });
