import * as z from 'zod';
import type { ValidationRule } from '../../crd/structural-schema.js';

/**
 * Tenancy of the global pools: which namespaces may claim from a GlobalTallyIPPool / GlobalTallyPrefixPool (a
 * metav1.LabelSelector over namespace labels) and how many addresses (prefixes) the claims of one namespace may hold.
 * Namespaced pools serve their own namespace only and carry neither field.
 */

/** A selector requirement's operators, as metav1.LabelSelectorOperator. */
export const LABEL_SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;

/** In and NotIn need values, Exists and DoesNotExist take none: the API server's rule for every LabelSelector. */
const VALUES_RULE: ValidationRule = {
  rule:
    "self.operator in ['In', 'NotIn'] ? (has(self.values) && size(self.values) > 0) : " +
    '(!has(self.values) || size(self.values) == 0)',
  messageExpression:
    "self.operator in ['In', 'NotIn'] ? 'operator ' + self.operator + ' needs at least one value' : " +
    "'operator ' + self.operator + ' takes no values'",
  message: 'In and NotIn need at least one value; Exists and DoesNotExist take none',
  fieldPath: '.values',
  reason: 'FieldValueInvalid',
};

export const LabelSelectorRequirement = z
  .object({
    key: z.string().min(1).max(317).describe('The label key the requirement applies to.'),
    operator: z.enum(LABEL_SELECTOR_OPERATORS).describe('In, NotIn, Exists or DoesNotExist.'),
    values: z
      .array(z.string().max(63))
      .max(64)
      .describe('The values for In and NotIn; empty for Exists and DoesNotExist.')
      .optional(),
  })
  .superRefine((requirement, ctx) => {
    const needsValues = requirement.operator === 'In' || requirement.operator === 'NotIn';
    const count = requirement.values?.length ?? 0;
    if (needsValues && count === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['values'],
        message: `operator ${requirement.operator} needs at least one value`,
      });
    }
    if (!needsValues && count > 0) {
      ctx.addIssue({ code: 'custom', path: ['values'], message: `operator ${requirement.operator} takes no values` });
    }
  })
  .meta({ 'x-kubernetes-validations': [VALUES_RULE] })
  .describe('A label requirement: a key, an operator and (for In and NotIn) values.');
export type LabelSelectorRequirement = z.infer<typeof LabelSelectorRequirement>;

export const LabelSelector = z
  .object({
    matchLabels: z
      .record(z.string().max(317), z.string().max(63))
      .describe('Labels the namespace must carry with exactly these values.')
      .meta({ maxProperties: 64 })
      .optional(),
    matchExpressions: z
      .array(LabelSelectorRequirement)
      .max(16)
      .describe('Requirements the namespace labels must all meet.')
      .optional(),
  })
  .describe('metav1.LabelSelector: every matchLabels entry and every matchExpressions requirement must hold.');
export type LabelSelector = z.infer<typeof LabelSelector>;

/** The fields a global pool's spec adds to the namespaced pool's. */
export const POOL_TENANCY_FIELDS = {
  namespaceSelector: LabelSelector.describe(
    'The namespaces whose IPAddressClaims may claim from the pool, selected by namespace labels; absent: every ' +
      'namespace, an empty selector too. A claim of another namespace gets Ready=False (NamespaceNotAllowed) and ' +
      'no address. Changing it takes back no address already held.',
  ).optional(),
  maxAddressesPerNamespace: z
    .int()
    .min(0)
    .max(2147483647)
    .describe(
      'At most this many addresses (prefixes) are held from the pool by the claims of one namespace; absent: no ' +
        'cap. A claim over it gets Ready=False (NamespaceCapReached) until one of its namespace is released. ' +
        'Lowering it takes back no address already held.',
    )
    .meta({ format: 'int32' })
    .optional(),
} as const;

/** The tenancy fields alone, for a reader of a global pool's spec that needs nothing else. */
export const PoolTenancy = z.object(POOL_TENANCY_FIELDS);
export type PoolTenancy = z.infer<typeof PoolTenancy>;
