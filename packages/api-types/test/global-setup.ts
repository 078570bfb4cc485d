import { fileURLToPath } from 'node:url';
import { createGlobalSetup } from '@tally-ipam/testenv/vitest';

/**
 * One real etcd + kube-apiserver for the run, with the committed Tally CRDs, the Metal3 CRDs, the in-cluster
 * provider's CRDs, and CAPI's IPAM and core CRDs.
 */
export default createGlobalSetup({
  crds: [
    fileURLToPath(new URL('../config/crd/', import.meta.url)),
    fileURLToPath(new URL('../config/metal3/crd/', import.meta.url)),
    fileURLToPath(new URL('../config/in-cluster/crd/', import.meta.url)),
  ],
  capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'],
});
