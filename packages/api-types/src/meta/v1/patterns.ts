/**
 * Name patterns Kubernetes and Cluster API validate with, written once so the zod schemas and the CRD schemas
 * (which copy `pattern` verbatim, so these must stay RE2-compatible: no look-around, no back-references) agree.
 */

/** RFC 1123 subdomain: lower-case alphanumerics, '-' and '.', starting and ending alphanumeric (max 253). */
export const DNS1123_SUBDOMAIN_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

/** A Kubernetes kind as CAPI's v1beta2 references constrain it. */
export const KIND_PATTERN = '^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$';

/** metav1.Condition `type`: an optional DNS-subdomain prefix and a qualified name. */
export const CONDITION_TYPE_PATTERN =
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$';

/** metav1.Condition `reason`: CamelCase with `_`, `,` and `:` allowed inside. */
export const CONDITION_REASON_PATTERN = '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$';
