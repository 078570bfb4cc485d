import { tallyCRDDirectory } from '@tally-ipam/api-types';
import { createGlobalSetup } from '@tally-ipam/testenv/vitest';
import { simCRDDirectory } from '../../src/crds.js';

/**
 * A control plane of its own with the real Cluster API core manager (v1.12, webhooks and conversion registered) and
 * kube-controller-manager: here Cluster API, not the test, owns Clusters and Machines.
 */
export default createGlobalSetup({
  crds: [tallyCRDDirectory(), simCRDDirectory()],
  controllerManager: true,
  capiManager: true,
});
