import { tallyCRDDirectory } from '@tally-ipam/api-types';
import { createGlobalSetup } from '@tally-ipam/testenv/vitest';

/**
 * One control plane for the plugin's tests: Tally's CRDs (pools and ledgers) and Cluster API's IPAM and core CRDs.
 * No kube-controller-manager: its garbage collector would delete the claim the tests give a missing owner, which
 * `who` must show as missing. Metal3's CRDs are not installed, so every run also checks that their absence is no error.
 */
export default createGlobalSetup({
  crds: [tallyCRDDirectory()],
  capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'],
});
