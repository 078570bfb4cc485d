import { tallyCRDDirectory } from '@tally-ipam/api-types';
import { createGlobalSetup } from '@tally-ipam/testenv/vitest';
import { simCRDDirectory } from '../src/crds.js';

/**
 * One control plane for the package's tests: Cluster API's core and IPAM CRDs, Tally's pool CRDs (the IPAM provider
 * runs in-process in the integration tests), the Sim CRDs, and kube-controller-manager so that garbage collection and
 * namespace deletion behave as in a real cluster.
 */
export default createGlobalSetup({
  crds: [tallyCRDDirectory(), simCRDDirectory()],
  capiCRDs: ['cluster.x-k8s.io', 'ipam.cluster.x-k8s.io'],
  controllerManager: true,
});
