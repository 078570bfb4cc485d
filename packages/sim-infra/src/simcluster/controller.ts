import type { Controller } from '@tally-ipam/controller-kit/controller';
import { SIM_CLUSTER_KIND } from '../api/v1alpha1/constants.js';
import { ADDRESS_RESOURCE, CLAIM_RESOURCE, CLUSTER_RESOURCE, SIM_CLUSTER_RESOURCE } from '../resources.js';
import { newSimController, type SimControllerContext } from '../shared.js';
import { addressToClaimOwner, infrastructureRequest } from '../watches.js';
import { SimClusterReconciler } from './reconciler.js';

/** The SimCluster controller: its reconciler and what it watches (its endpoint claim and IPAddress, its Cluster). */
export function newSimClusterController(shared: SimControllerContext): Controller {
  const { informers } = shared;
  const scope = { namespace: shared.namespace };
  const reconciler = new SimClusterReconciler({
    client: shared.client,
    simClusters: informers.simClusters,
    clusters: informers.clusters,
    claims: informers.claims,
    addresses: informers.addresses,
    recorder: shared.recorderFor('simcluster'),
    now: shared.now,
  });
  return newSimController(shared, 'simcluster', SIM_CLUSTER_RESOURCE, reconciler)
    .owns(CLAIM_RESOURCE, scope)
    .watches(ADDRESS_RESOURCE, addressToClaimOwner(informers.claims, SIM_CLUSTER_KIND), scope)
    .watches(CLUSTER_RESOURCE, (cluster) => infrastructureRequest(cluster, SIM_CLUSTER_KIND), scope);
}
