import { fileURLToPath } from 'node:url';
import { createGlobalSetup } from '../src/vitest-setup.js';

// The shared control plane of this package's tests: kube-controller-manager for the cascade tests, the fixture CRD and
// Cluster API's IPAM CRDs installed before it starts, so the garbage collector knows them from the beginning.
export default createGlobalSetup({
  controllerManager: true,
  crds: [fileURLToPath(new URL('./fixtures/widgets.crd.yaml', import.meta.url))],
  capiCRDs: ['ipam.cluster.x-k8s.io'],
});
