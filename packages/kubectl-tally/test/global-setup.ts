import { inClusterCRDDirectory, tallyCRDDirectory } from '@tally-ipam/api-types';
import { createGlobalSetup } from '@tally-ipam/testenv/vitest';

/**
 * One control plane for the plugin's tests: Tally's CRDs (pools and ledgers), the in-cluster provider's pool CRDs
 * (`ipam.cluster.x-k8s.io/v1alpha2`, which Tally serves behind `--enable-in-cluster-ipam`) and Cluster API's IPAM and
 * core CRDs. No kube-controller-manager: its garbage collector would delete the claim the tests give a missing owner,
 * which `who` must show as missing. Metal3's CRDs are not installed here (metal3.test.ts installs them), so a run
 * also checks that their absence is no error.
 */
export default createGlobalSetup({
  crds: [tallyCRDDirectory(), inClusterCRDDirectory()],
  capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'],
});
