import * as z from 'zod';
import type { ValidationRule } from '../../crd/structural-schema.js';
import { inspectCIDR } from '../../tally/v1alpha1/addresses.js';
import { MAX_IP_LENGTH } from '../../tally/v1alpha1/constants.js';
import { checkedText, IPText, refusal } from '../../tally/v1alpha1/fields.js';

/**
 * Field types shared by the three Metal3 kinds. Addresses reuse Tally's `IPText` (CEL `isIP` and the allocator's
 * strict parser), so a Metal3 object and a Tally pool accept exactly the same address text.
 */

/** `corev1.ObjectReference` as Metal3 embeds it: every field optional, replaced as a whole (map-type atomic). */
const objectReferenceFields = {
  apiVersion: z.string().max(317).describe('API version of the referent.').optional(),
  kind: z.string().max(63).describe('Kind of the referent.').optional(),
  name: z.string().max(253).describe('Name of the referent.').optional(),
  namespace: z.string().max(63).describe('Namespace of the referent.').optional(),
  uid: z.string().max(128).describe('UID of the referent.').optional(),
  resourceVersion: z
    .string()
    .max(128)
    .describe('Specific resourceVersion the reference is made to, if any.')
    .optional(),
  fieldPath: z.string().max(1024).describe('A field of the referent, if the reference is to a part of it.').optional(),
};

export const Metal3ObjectReference = z
  .object(objectReferenceFields)
  .meta({ 'x-kubernetes-map-type': 'atomic' })
  .describe('A reference to an object (corev1.ObjectReference).');
export type Metal3ObjectReference = z.infer<typeof Metal3ObjectReference>;

/**
 * The rule Metal3's webhooks apply to `spec.pool` / `spec.claim` on update: the name, namespace and kind cannot
 * change (apiVersion, uid, resourceVersion may). Only used on references whose name is required.
 */
function referenceImmutable(field: string): ValidationRule {
  // No `has(x) ? x : ''`: the cost estimator loses the length bound through a conditional and prices it as unbounded.
  const same = (key: string) =>
    `has(self.${key}) == has(oldSelf.${key}) && (!has(self.${key}) || self.${key} == oldSelf.${key})`;
  return {
    // `namespace` is a CEL reserved word: a field of that name is written `__namespace__` (unescaped, the API server
    // refused the CRD with an estimated cost over budget by more than 100x).
    rule: `self.name == oldSelf.name && ${same('__namespace__')} && ${same('kind')}`,
    message: `${field} is immutable: its name, namespace and kind cannot change`,
    messageExpression:
      `'${field} is immutable: its name, namespace and kind cannot change (was ' + oldSelf.name + ', now ' + ` +
      `self.name + ')'`,
    reason: 'FieldValueForbidden',
  };
}

/**
 * A reference whose name must be set (Metal3's webhooks refuse an empty `spec.pool.name` / `spec.claim.name` on
 * create; here the schema does it, so the refusal names the field without a webhook) and that cannot be changed.
 */
export function requiredReference(field: string, description: string) {
  return z
    .object({ ...objectReferenceFields, name: z.string().min(1).max(253).describe('Name of the referent.') })
    .meta({ 'x-kubernetes-map-type': 'atomic', 'x-kubernetes-validations': [referenceImmutable(field)] })
    .describe(description);
}

/** A prefix length as Metal3 has it (`+kubebuilder:validation:Maximum=128`), plus a minimum of 0. */
export const Metal3Prefix = z
  .int()
  .min(0)
  .max(128)
  .meta({ format: 'int32' })
  .describe('Prefix is the mask of the network as integer (max 128).');

/** `IPSubnetStr`: a CIDR; host bits may be set, as Metal3 allows (`192.168.0.5/24` starts at .6 without `start`). */
export const Metal3Subnet = checkedText({
  maxLength: MAX_IP_LENGTH + 4,
  rule: 'isCIDR(self)',
  subject: 'value',
  forms: 'a CIDR (an address, a slash and a prefix length)',
  check: (value) => refusal(inspectCIDR(value)),
});

/**
 * `IPText` with one more rule. `.meta()` replaces a key rather than merging it, so the address rule is read back and
 * carried over explicitly.
 */
export function ipTextWith(rule: ValidationRule) {
  const inherited = (IPText.meta()?.['x-kubernetes-validations'] ?? []) as ValidationRule[];
  return IPText.meta({ 'x-kubernetes-validations': [...inherited, rule] });
}
