import { pluralize } from './pluralize.js';

/**
 * The CRD name Cluster API computes for a group and kind (`sigs.k8s.io/cluster-api/util/contract.CalculateCRDName`):
 * the flect plural of the lower-cased kind, a dot, and the group. CAPI looks a provider's CRD up by this name to
 * learn which contract versions it serves, so a CRD under any other name cannot be referenced.
 */
export function calculateCRDName(group: string, kind: string): string {
  return `${pluralize(kind.toLowerCase())}.${group}`;
}

/** The plural resource name CAPI expects for a kind (the first label of {@link calculateCRDName}). */
export function pluralResourceName(kind: string): string {
  return pluralize(kind.toLowerCase());
}
