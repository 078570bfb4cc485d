/**
 * Cluster API's label-value formatting (`sigs.k8s.io/cluster-api/util/labels/format`). CAPI selects a MachinePool's
 * InfraMachines and Machines by `cluster.x-k8s.io/pool-name=<MustFormatValue(pool name)>`; a provider that formats
 * the value any other way creates InfraMachines the MachinePool controller never finds.
 */

/** `validation.IsValidLabelValue`: at most 63 characters. */
export const MAX_LABEL_VALUE_LENGTH = 63;

// apimachinery's label value regex: empty, or alphanumerics at both ends with `-`, `_` and `.` inside.
const LABEL_VALUE_PATTERN = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

// FNV-1a, 32 bit (Go's hash/fnv New32a).
const FNV32_OFFSET_BASIS = 0x811c9dc5;
const FNV32_PRIME = 0x01000193;

const HASHED_VALUE_PREFIX = 'hash_';
const HASHED_VALUE_SUFFIX = '_z';

/** True when `value` is a valid Kubernetes label value (apimachinery's `IsValidLabelValue` finds no error). */
export function isValidLabelValue(value: string): boolean {
  return value.length <= MAX_LABEL_VALUE_LENGTH && LABEL_VALUE_PATTERN.test(value);
}

/** FNV-1a 32-bit hash of the UTF-8 bytes of `text`, as an unsigned integer. */
export function fnv1a32(text: string): number {
  let hash = FNV32_OFFSET_BASIS;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, FNV32_PRIME);
  }
  return hash >>> 0;
}

/**
 * CAPI's `format.MustFormatValue`: a valid label value is returned as is; anything else (longer than 63 characters,
 * or with characters a label value cannot hold) becomes `hash_<base64url(fnv32a(value)), no padding>_z` — the
 * 4-byte big-endian sum, as Go's `hasher.Sum(nil)` returns it.
 */
export function formatLabelValue(value: string): string {
  if (isValidLabelValue(value)) return value;
  const sum = Buffer.alloc(4);
  sum.writeUInt32BE(fnv1a32(value));
  return `${HASHED_VALUE_PREFIX}${sum.toString('base64url')}${HASHED_VALUE_SUFFIX}`;
}

/** CAPI's `format.MustEqualValue`: true when `labelValue` is what `formatLabelValue(value)` gives. */
export function labelValueMatches(value: string, labelValue: string): boolean {
  return labelValue === formatLabelValue(value);
}
