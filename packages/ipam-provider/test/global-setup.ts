import { inClusterCRDDirectory, tallyCRDDirectory } from '@tally-ipam/api-types';
import { createGlobalSetup } from '@tally-ipam/testenv/vitest';

/**
 * One control plane for the package's tests: the Tally CRDs (pools and address holdings), the in-cluster provider's
 * pool CRDs (served with `inClusterIPAM`), Cluster API's IPAM and core CRDs, and kube-controller-manager so that owner
 * references are garbage-collected as in a real cluster.
 */
export default createGlobalSetup({
  crds: [tallyCRDDirectory(), inClusterCRDDirectory()],
  capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'],
  controllerManager: true,
});
