import type { IPFamily } from '@tally-ipam/allocator';
import type * as z from 'zod';
import type { ValidationRule } from '../../crd/structural-schema.js';
import { inspectIP } from './addresses.js';
import { familyText } from './cel.js';

/**
 * The family rules both pool kinds share. A pool's IP family is the family of the first entry of its list
 * (`addresses`, `prefixes`): every entry, the gateway and every later version of the pool must keep to it.
 */

/** How the CEL rules of one pool kind read the entries of the list that decides its family. */
export interface PoolFamilyList {
  readonly list: 'addresses' | 'prefixes';
  /** The CEL variable that ranges over the list in `all()` and `filter()`. */
  readonly variable: string;
  /** What one entry is called in messages ('entry', 'prefix'). */
  readonly entry: string;
  /** CEL: the entry is well-formed enough for `familyOf` (a guard, so a bad entry never fails evaluation). */
  readonly isReadable: (x: string) => string;
  /** CEL: the family (4 or 6) of a readable entry. */
  readonly familyOf: (x: string) => string;
}

/** CEL expressions for the family of a pool: its first entry, the guard that it can be read, and its family. */
export interface PoolFamilyCEL {
  readonly first: string;
  readonly readable: string;
  readonly family: string;
}

export function poolFamilyCEL(source: PoolFamilyList): PoolFamilyCEL {
  const first = `self.${source.list}[0]`;
  return {
    first,
    // Rules still run when the schema check failed, so every index and lookup is guarded against bad input.
    readable: `(size(self.${source.list}) > 0 && ${source.isReadable(first)})`,
    family: source.familyOf(first),
  };
}

/** Every readable entry of the list is of the family of the first. */
export function mixedFamilyRule(source: PoolFamilyList): ValidationRule {
  const { first, readable, family } = poolFamilyCEL(source);
  const { list, variable: v, entry } = source;
  return {
    rule: `!${readable} || self.${list}.all(${v}, !${source.isReadable(v)} || ${source.familyOf(v)} == ${family})`,
    messageExpression:
      `'${list} mix IP families: ' + self.${list}.filter(${v}, ${source.isReadable(v)} && ` +
      `${source.familyOf(v)} != ${family})[0] + ' not IPv' + ${familyText(family)} + ' like the first ${entry} ' + ${first}`,
    message: `${list} mix IP families: every ${entry} must be of the family of the first ${entry}`,
    fieldPath: `.${list}`,
    reason: 'FieldValueInvalid',
  };
}

/** The gateway is of the pool's family. */
export function gatewayFamilyRule(source: PoolFamilyList): ValidationRule {
  const { readable, family } = poolFamilyCEL(source);
  return {
    rule: `!has(self.gateway) || !isIP(self.gateway) || !${readable} || ip(self.gateway).family() == ${family}`,
    messageExpression:
      `'gateway ' + self.gateway + ' is IPv' + ${familyText('ip(self.gateway).family()')} + ` +
      `' but the pool ${source.list} are IPv' + ${familyText(family)}`,
    message: `gateway is not of the family of the pool ${source.list}`,
    fieldPath: '.gateway',
    reason: 'FieldValueInvalid',
  };
}

/** Transition rule: the family decides every allocation, so it can never change in place. */
export function immutableFamilyRule(source: PoolFamilyList): ValidationRule {
  const { readable, family } = poolFamilyCEL(source);
  const oldFirst = `oldSelf.${source.list}[0]`;
  return {
    rule:
      `size(oldSelf.${source.list}) == 0 || !${source.isReadable(oldFirst)} || !${readable} || ` +
      `${source.familyOf(oldFirst)} == ${family}`,
    messageExpression:
      `'the IP family of a pool is immutable: it was IPv' + ${familyText(source.familyOf(oldFirst))} + ` +
      `'; create a new pool for IPv' + ${familyText(family)}`,
    message: 'the IP family of a pool is immutable; create a new pool for the other family',
    fieldPath: `.${source.list}`,
    reason: 'FieldValueForbidden',
  };
}

/** The zod twin of `gatewayFamilyRule`, for a pool whose family is known. */
export function refineGatewayFamily(
  gateway: string | undefined,
  family: IPFamily,
  list: PoolFamilyList['list'],
  ctx: z.RefinementCtx,
): void {
  if (gateway === undefined) return;
  const parsed = inspectIP(gateway);
  if (parsed.ok && parsed.value.family !== family) {
    ctx.addIssue({
      code: 'custom',
      path: ['gateway'],
      message: `gateway ${gateway} is IPv${parsed.value.family} but the pool ${list} are IPv${family}`,
    });
  }
}
