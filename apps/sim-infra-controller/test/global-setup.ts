import { simCRDDirectory } from '@tally-ipam/sim-infra';
import { createGlobalSetup } from '@tally-ipam/testenv/vitest';

/** A control plane with Cluster API's CRDs and the Sim CRDs for the controller process to work against. */
export default createGlobalSetup({
  crds: [simCRDDirectory()],
  capiCRDs: ['cluster.x-k8s.io', 'ipam.cluster.x-k8s.io'],
  controllerManager: false,
});
