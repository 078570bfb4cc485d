import type * as z from 'zod';
import type { ValidationRule } from '../../crd/structural-schema.js';
import { inspectCIDR, inspectIP } from '../../tally/v1alpha1/addresses.js';
import { ipLessOrEqual } from '../../tally/v1alpha1/cel.js';
import { codePointLength, echo, isIntegerInRange } from '../../text/clip.js';
import { METAL3_MAX_CLAIM_NAME_LENGTH } from './constants.js';

/**
 * Rules Metal3's IPPool does not check at admission (its controller fails later, on a claim, with "Exhausted IP
 * Pools" or an address out of bounds), checked here at admission as CEL and, with the same words, by zod.
 */

const START = 'self.start';
const END = 'self.end';
const SUBNET = 'self.subnet';
const START_OK = `(has(${START}) && isIP(${START}))`;
const END_OK = `(has(${END}) && isIP(${END}))`;
const SUBNET_OK = `(has(${SUBNET}) && isCIDR(${SUBNET}))`;
/** The family of a range: of its start, or of its subnet without one; 0 when neither parses. */
const RANGE_FAMILY = `(${START_OK} ? ip(${START}).family() : (${SUBNET_OK} ? cidr(${SUBNET}).ip().family() : 0))`;
const FAMILY_TEXT = `(${RANGE_FAMILY} == 4 ? '4' : '6')`;

function familyOf(field: string): string {
  return `ip(self.${field}).family()`;
}

/** Rules on one entry of `spec.pools` (Go `Pool`); each has a zod twin in {@link refineMetal3PoolRange}. */
export const POOL_RANGE_RULES: ValidationRule[] = [
  {
    rule: `has(${START}) || has(${SUBNET})`,
    message: 'a pool needs start or subnet (without start, the first address is the subnet address plus one)',
    reason: 'FieldValueRequired',
  },
  {
    // Metal3 would count up from start to the end of the address space.
    rule: `!has(${START}) || has(${END}) || has(${SUBNET})`,
    message: 'start needs end or subnet to stop at',
    messageExpression: `'start ' + ${START} + ' needs end or subnet to stop at'`,
    reason: 'FieldValueRequired',
  },
  {
    rule: `!${START_OK} || !${END_OK} || ${familyOf('start')} == ${familyOf('end')}`,
    message: 'end is not of the IP family of start',
    messageExpression: `'end ' + ${END} + ' is not of the IP family of start ' + ${START}`,
    fieldPath: '.end',
    reason: 'FieldValueInvalid',
  },
  {
    rule: `!${START_OK} || !${END_OK} || ${familyOf('start')} != ${familyOf('end')} || ${ipLessOrEqual(START, END, 'e')}`,
    message: 'end is before start',
    messageExpression: `'end ' + ${END} + ' is before start ' + ${START}`,
    fieldPath: '.end',
    reason: 'FieldValueInvalid',
  },
  ...(['start', 'end'] as const).map(
    (field): ValidationRule => ({
      rule:
        `!has(self.${field}) || !isIP(self.${field}) || !${SUBNET_OK} || ` +
        `(${familyOf(field)} == cidr(${SUBNET}).ip().family() && cidr(${SUBNET}).masked().containsIP(self.${field}))`,
      message: `${field} is outside the subnet`,
      messageExpression: `'${field} ' + self.${field} + ' is outside the subnet ' + ${SUBNET}`,
      fieldPath: `.${field}`,
      reason: 'FieldValueInvalid',
    }),
  ),
  {
    rule: `!has(self.gateway) || !isIP(self.gateway) || ${RANGE_FAMILY} == 0 || ${familyOf('gateway')} == ${RANGE_FAMILY}`,
    message: 'gateway is not of the IP family of the pool',
    messageExpression: `'gateway ' + self.gateway + ' is not IPv' + ${FAMILY_TEXT} + ' like the pool'`,
    fieldPath: '.gateway',
    reason: 'FieldValueInvalid',
  },
  {
    rule: `!has(self.prefix) || self.prefix <= 32 || ${RANGE_FAMILY} != 4`,
    message: 'prefix is longer than 32, the maximum for IPv4',
    fieldPath: '.prefix',
    reason: 'FieldValueInvalid',
  },
];

/** What the zod twins read of one pool entry (before its own field checks passed, so every value is unknown). */
export interface PoolRangeView {
  start?: string | undefined;
  end?: string | undefined;
  subnet?: string | undefined;
  prefix?: number | undefined;
  gateway?: string | undefined;
}

function ipOf(text: string | undefined): { family: 4 | 6; value: bigint } | undefined {
  if (text === undefined) return undefined;
  const inspected = inspectIP(text);
  return inspected.ok ? inspected.value : undefined;
}

export function refineMetal3PoolRange(range: PoolRangeView, ctx: z.RefinementCtx): void {
  if (range.start === undefined && range.subnet === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: 'a pool needs start or subnet (without start, the first address is the subnet address plus one)',
    });
  }
  if (range.start !== undefined && range.end === undefined && range.subnet === undefined) {
    ctx.addIssue({ code: 'custom', message: `start ${echo(range.start)} needs end or subnet to stop at` });
  }
  const start = ipOf(range.start);
  const end = ipOf(range.end);
  const subnet = range.subnet === undefined ? undefined : inspectCIDR(range.subnet);
  const family = start?.family ?? (subnet?.ok ? subnet.value.family : undefined);
  if (start && end && range.start !== undefined && range.end !== undefined) {
    if (start.family !== end.family) {
      ctx.addIssue({
        code: 'custom',
        path: ['end'],
        message: `end ${echo(range.end)} is not of the IP family of start ${echo(range.start)}`,
      });
    } else if (end.value < start.value) {
      ctx.addIssue({
        code: 'custom',
        path: ['end'],
        message: `end ${echo(range.end)} is before start ${echo(range.start)}`,
      });
    }
  }
  if (subnet?.ok && range.subnet !== undefined) {
    for (const [field, ip, text] of [
      ['start', start, range.start],
      ['end', end, range.end],
    ] as const) {
      if (ip === undefined || text === undefined) continue;
      const inside =
        ip.family === subnet.value.family && ip.value >= subnet.value.first && ip.value <= subnet.value.last;
      if (!inside) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `${field} ${echo(text)} is outside the subnet ${echo(range.subnet)}`,
        });
      }
    }
  }
  const gateway = ipOf(range.gateway);
  if (gateway && family !== undefined && gateway.family !== family && range.gateway !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['gateway'],
      message: `gateway ${echo(range.gateway)} is not IPv${family} like the pool`,
    });
  }
  if (family === 4 && isIntegerInRange(range.prefix, 33, 128)) {
    ctx.addIssue({ code: 'custom', path: ['prefix'], message: 'prefix is longer than 32, the maximum for IPv4' });
  }
}

const PRE_ALLOCATIONS = 'self.preAllocations';
const SHARED_PRE_ALLOCATION =
  `${PRE_ALLOCATIONS}.filter(a, isIP(${PRE_ALLOCATIONS}[a]) && ` +
  `${PRE_ALLOCATIONS}.exists(b, b != a && isIP(${PRE_ALLOCATIONS}[b]) && ip(${PRE_ALLOCATIONS}[b]) == ip(${PRE_ALLOCATIONS}[a])))`;

/** Rules on the IPPool spec; each has a zod twin in {@link refineMetal3IPPoolSpec}. */
export const IP_POOL_SPEC_RULES: ValidationRule[] = [
  {
    rule: `!has(${PRE_ALLOCATIONS}) || ${SHARED_PRE_ALLOCATION}.size() == 0`,
    message: 'preAllocations give one address to several claims',
    messageExpression: `'preAllocations give one address to several claims: ' + ${PRE_ALLOCATIONS}[${SHARED_PRE_ALLOCATION}[0]]`,
    fieldPath: '.preAllocations',
    // Not FieldValueDuplicate: with that reason the API server prints `Duplicate value: "object"`, not the message.
    reason: 'FieldValueInvalid',
  },
  {
    rule: `!has(${PRE_ALLOCATIONS}) || ${PRE_ALLOCATIONS}.all(k, size(k) >= 1 && size(k) <= ${METAL3_MAX_CLAIM_NAME_LENGTH})`,
    message: `preAllocations keys are claim names of 1 to ${METAL3_MAX_CLAIM_NAME_LENGTH} characters`,
    fieldPath: '.preAllocations',
    reason: 'FieldValueInvalid',
  },
];

export interface IPPoolSpecView {
  preAllocations?: Record<string, string> | undefined;
}

export function refineMetal3IPPoolSpec(spec: IPPoolSpecView, ctx: z.RefinementCtx): void {
  const owners = new Map<string, string>();
  let duplicateReported = false;
  for (const [claim, text] of Object.entries(spec.preAllocations ?? {})) {
    // In code points, as CEL's size(k) counts: a name with an emoji is not longer for zod than for the API server.
    const length = codePointLength(claim);
    if (length < 1 || length > METAL3_MAX_CLAIM_NAME_LENGTH) {
      ctx.addIssue({
        code: 'custom',
        path: ['preAllocations'],
        message: `preAllocations keys are claim names of 1 to ${METAL3_MAX_CLAIM_NAME_LENGTH} characters, not "${echo(claim)}"`,
      });
    }
    const ip = ipOf(text);
    if (ip === undefined) continue;
    const key = `${ip.family}/${ip.value}`;
    const other = owners.get(key);
    if (other !== undefined && !duplicateReported) {
      duplicateReported = true;
      ctx.addIssue({
        code: 'custom',
        path: ['preAllocations'],
        message: `preAllocations give one address to several claims: ${echo(text)} (${echo(other)}, ${echo(claim)})`,
      });
    }
    owners.set(key, claim);
  }
}
