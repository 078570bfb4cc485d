import { inClusterCRDDirectory, metal3CRDDirectory, tallyCRDDirectory } from '@tally-ipam/api-types';
import { createGlobalSetup } from '@tally-ipam/testenv/vitest';

/**
 * One control plane for the process and chaos tests: Tally's CRDs, Metal3's and the in-cluster provider's (the shipped
 * RBAC names them), CAPI's IPAM and core CRDs, garbage collection.
 */
export default createGlobalSetup({
  crds: [tallyCRDDirectory(), metal3CRDDirectory(), inClusterCRDDirectory()],
  capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'],
  controllerManager: true,
});
