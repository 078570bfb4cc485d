import { metal3CRDDirectory, tallyCRDDirectory } from '@tally-ipam/api-types';
import { createGlobalSetup, type GlobalSetup } from '@tally-ipam/testenv/vitest';

/**
 * One control plane of the package's own (never an external test cluster): Tally's CRDs as shipped, Metal3's CRDs
 * and Cluster API's core and IPAM CRDs.
 */
const setup: GlobalSetup = createGlobalSetup({
  ignoreTestKubeconfig: true,
  crds: [tallyCRDDirectory(), metal3CRDDirectory()],
  capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'],
});

export default setup;
