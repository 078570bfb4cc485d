import { tallyCRDDirectory } from '@tally-ipam/api-types';
import { createGlobalSetup } from '@tally-ipam/testenv/vitest';

/** One control plane for the process and chaos tests: Tally's CRDs, CAPI's IPAM and core CRDs, garbage collection. */
export default createGlobalSetup({
  crds: [tallyCRDDirectory()],
  capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'],
  controllerManager: true,
});
