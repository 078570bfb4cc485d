import { fileURLToPath } from 'node:url';
// Imported the way other packages do (`@tally-ipam/testenv/vitest`), so this also proves that module loads in vitest's
// main process.
import { createGlobalSetup } from '../src/vitest.js';

// The shared control plane of this package's tests: kube-controller-manager for the cascade tests, the fixture CRD and
// Cluster API's IPAM CRDs installed before it starts, so the garbage collector knows them from the beginning.
export default createGlobalSetup({
  controllerManager: true,
  crds: [fileURLToPath(new URL('./fixtures/widgets.crd.yaml', import.meta.url))],
  capiCRDs: ['ipam.cluster.x-k8s.io'],
});
