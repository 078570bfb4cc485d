import { fileURLToPath } from 'node:url';
import { createGlobalSetup } from '@tally-ipam/testenv/vitest';

/**
 * One control plane for the package's tests: Cluster API's core CRDs (Cluster, MachinePool, Machine), the example
 * provider's CRDs built from this package's contract fields, and kube-controller-manager, whose garbage collector
 * removes an InfraMachine once the Machine that controls it is deleted — the chain scale-down relies on.
 */
export default createGlobalSetup({
  capiCRDs: ['cluster.x-k8s.io'],
  controllerManager: true,
  crds: [fileURLToPath(new URL('./fixtures/crds', import.meta.url))],
});
