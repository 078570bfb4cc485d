import { CLAIM_RESOURCE, CLUSTER_RESOURCE } from '@tally-ipam/api-types';
import type { VcsimEndpoint } from '@tally-ipam/vsphere';
import {
  INFRA_GROUP,
  MACHINE_DEPLOYMENT_RESOURCE,
  SECRET_RESOURCE,
  VSPHERE_CLUSTER_RESOURCE,
  VSPHERE_MACHINE_TEMPLATE_RESOURCE,
} from './resources.js';
import type { ScenarioSetup } from './state.js';

const CAPV_API_VERSION = `${INFRA_GROUP}/v1beta1`;
export const BOOTSTRAP_SECRET = 'capv-bootstrap';
const MACHINE_KUBERNETES_VERSION = 'v1.34.1';

/**
 * The objects a user writes for a Cluster on vSphere without a control plane provider: the bootstrap data Secret
 * (given directly, no kubeadm), a VSphereCluster naming the simulator by address and thumbprint (CAPV's manager has
 * its credentials), and the Cluster. Cluster API links them itself.
 */
export async function createCluster(setup: ScenarioSetup, vcsim: VcsimEndpoint, bootstrapData: string): Promise<void> {
  const { client, namespace, clusterName } = setup;
  await client.create(SECRET_RESOURCE, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: BOOTSTRAP_SECRET, namespace },
    type: 'cluster.x-k8s.io/secret',
    data: {
      value: Buffer.from(bootstrapData).toString('base64'),
      format: Buffer.from('cloud-config').toString('base64'),
    },
  });
  await client.create(VSPHERE_CLUSTER_RESOURCE, {
    apiVersion: CAPV_API_VERSION,
    kind: 'VSphereCluster',
    metadata: { name: clusterName, namespace },
    spec: { server: vcsim.server, thumbprint: vcsim.thumbprint },
  });
  await client.create(CLUSTER_RESOURCE, {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Cluster',
    metadata: { name: clusterName, namespace },
    spec: { infrastructureRef: { apiGroup: INFRA_GROUP, kind: 'VSphereCluster', name: clusterName } },
  });
}

/**
 * A VSphereMachineTemplate cloning the simulator's template with two network devices — the first addressed from the
 * namespaced IPv4 pool, the second from the cluster-scoped IPv6 pool, both through `addressesFromPools` — and a
 * MachineDeployment of `replicas` on it whose Machines name the bootstrap Secret directly.
 */
export async function createMachineDeployment(
  setup: ScenarioSetup,
  vcsim: VcsimEndpoint,
  replicas: number,
): Promise<void> {
  const { client, namespace, clusterName, deploymentName, pools } = setup;
  await client.create(VSPHERE_MACHINE_TEMPLATE_RESOURCE, {
    apiVersion: CAPV_API_VERSION,
    kind: 'VSphereMachineTemplate',
    metadata: { name: deploymentName, namespace },
    spec: {
      template: {
        spec: {
          server: vcsim.server,
          thumbprint: vcsim.thumbprint,
          datacenter: vcsim.datacenter,
          datastore: vcsim.datastore,
          resourcePool: vcsim.resourcePool,
          folder: vcsim.folder,
          template: vcsim.template,
          cloneMode: 'fullClone',
          numCPUs: 2,
          memoryMiB: 2048,
          network: {
            devices: [
              { networkName: setup.networks[0], addressesFromPools: [pools.v4.ref] },
              { networkName: setup.networks[1], addressesFromPools: [pools.v6.ref] },
            ],
          },
        },
      },
    },
  });
  const selector = { 'e2e.tally.dev/deployment': deploymentName };
  await client.create(MACHINE_DEPLOYMENT_RESOURCE, {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'MachineDeployment',
    metadata: { name: deploymentName, namespace },
    spec: {
      clusterName,
      replicas,
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: selector },
        spec: {
          clusterName,
          version: MACHINE_KUBERNETES_VERSION,
          bootstrap: { dataSecretName: BOOTSTRAP_SECRET },
          infrastructureRef: { apiGroup: INFRA_GROUP, kind: 'VSphereMachineTemplate', name: deploymentName },
        },
      },
    },
  });
}

/**
 * The barrier before claims are created under the pause: the provider has seen the Cluster paused. Tally re-queues a
 * Cluster's claims when the Cluster changes; the reference provider re-queues them only when one is unpaused, so an
 * existing claim is touched (a label of ours, which neither CAPV nor the provider reads) until the provider's log
 * shows it skipped that claim as paused: from then on its cache holds the paused Cluster.
 */
export async function waitForPauseBarrier(
  setup: ScenarioSetup,
  existingClaim: string,
  eventually: <T>(what: string, probe: () => Promise<T | undefined>) => Promise<T>,
): Promise<void> {
  const { client, namespace, provider } = setup;
  let poke = 0;
  await eventually(`the provider to see the Cluster paused (claim ${existingClaim} skipped)`, async () => {
    if (await provider.loggedPausedSkip({ namespace, name: existingClaim })) return true;
    // About every 2 s (the probe runs every 250 ms): a touch is an update event, not a request for an answer.
    if (poke++ % 8 === 0) {
      await client.mergePatch(
        CLAIM_RESOURCE,
        { namespace, name: existingClaim },
        {
          metadata: { labels: { 'e2e.tally.dev/poke': String(poke) } },
        },
      );
    }
    return undefined;
  });
}
