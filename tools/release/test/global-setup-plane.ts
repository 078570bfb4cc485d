import { createGlobalSetup } from '@tally-ipam/testenv/vitest';

/** A control plane as the other suites get it: Cluster API's CRDs installed by testenv, for `clusterctl init`. */
export default createGlobalSetup({
  capiCRDs: ['cluster.x-k8s.io', 'ipam.cluster.x-k8s.io', 'addons.cluster.x-k8s.io', 'runtime.cluster.x-k8s.io'],
});
