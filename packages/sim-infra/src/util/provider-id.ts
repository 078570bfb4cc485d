import { SIM_PROVIDER_ID_SCHEME } from '../api/v1alpha1/constants.js';

/**
 * The provider ID of a simulated instance: `sim://<namespace>/<name>`. Unique per management cluster, stable across
 * `clusterctl move` (it is derived from the name, not from a uid), and what the simulated Node carries in
 * `spec.providerID` — Cluster API matches the two exactly.
 */
export function simProviderID(namespace: string, name: string): string {
  return `${SIM_PROVIDER_ID_SCHEME}://${namespace}/${name}`;
}
