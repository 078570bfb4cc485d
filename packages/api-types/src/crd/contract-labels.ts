import { CONTRACT_LABEL_PREFIX } from '../cluster/v1beta2/constants.js';

/**
 * The label Cluster API reads on a provider CRD to learn which of its versions implement a contract:
 * `cluster.x-k8s.io/<contract>: <version>_<version>…` (e.g. `cluster.x-k8s.io/v1beta2: v1alpha1`). Every listed
 * version must be served by the CRD; CAPI picks the highest one.
 */
export function contractVersionLabel(contract: string, servedVersions: readonly string[]): Record<string, string> {
  if (servedVersions.length === 0) throw new Error(`contract ${contract}: at least one served version is needed`);
  return { [`${CONTRACT_LABEL_PREFIX}${contract}`]: servedVersions.join('_') };
}
