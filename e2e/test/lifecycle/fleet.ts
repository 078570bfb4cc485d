import { CoreV1Api } from '@kubernetes/client-node';
import { IPAM_GROUP, METAL3_IPAM_V1ALPHA1_API_VERSION, TALLY_V1ALPHA1_API_VERSION } from '@tally-ipam/api-types';
import { Client } from '@tally-ipam/controller-kit/client';
import { POOL_RESOURCES } from '@tally-ipam/ipam-provider';
import { METAL3_CLAIM_RESOURCE, METAL3_POOL_RESOURCE } from '@tally-ipam/metal3-ipam';
import {
  CLAIM_RESOURCE,
  CLUSTER_RESOURCE,
  MACHINE_RESOURCE,
  SECRET_RESOURCE,
  SIM_MACHINE_RESOURCE,
  SIM_V1ALPHA1_API_VERSION,
} from '@tally-ipam/sim-infra';
import { BOOTSTRAP_SECRET, createClusterOnSim, eventually, machineSpec } from '../harness.js';
import { type Inventory, readInventory } from './inventory.js';
import type { ManagementCluster } from './management-cluster.js';

/**
 * What the fleet's helpers need of a management cluster: a testenv one (`startManagementCluster`, controllers as
 * processes) or the kind lane's (controllers as Pods).
 */
export type FleetCluster = Pick<ManagementCluster, 'name' | 'env' | 'kubeConfig' | 'logsHint'>;

/**
 * The fleet every lifecycle test works on: in namespace `fleet`, a Cluster `alpha` on Sim with its control-plane
 * endpoint from a TallyIPPool, two Machines whose SimMachines claim from pools of all four Tally kinds, two Metal3
 * IPClaims (owned by the Machines) of the Cluster's Metal3 IPPool, a claim of no Cluster (`standalone`), a Metal3
 * IPPool of no Cluster with a claim of its own (`static`); and in `bystanders` a claim of the global IPv6 pool. 12
 * addresses in all.
 */
export const NAMESPACE = 'fleet';
/** A namespace no lifecycle step names: its claim of a global pool stays where it is. */
export const OTHER_NAMESPACE = 'bystanders';
export const CLUSTER = 'alpha';
export const FLEET_ADDRESSES = 12;
/** The claims that are in no Cluster's owner chain. */
export const OUTSIDE_THE_TREE = [
  'capi fleet/standalone',
  `capi ${OTHER_NAMESPACE}/bystander`,
  'metal3 fleet/static-claim',
];
const CONTROL_PLANE_LABEL = 'cluster.x-k8s.io/control-plane';
const FIELD_MANAGER = 'tally-lifecycle';

const pool = (kind: keyof typeof POOL_RESOURCES, name: string, spec: object, namespace?: string) => ({
  apiVersion: TALLY_V1ALPHA1_API_VERSION,
  kind,
  metadata: namespace ? { name, namespace } : { name },
  spec,
});

export async function populateFleet(cluster: FleetCluster): Promise<void> {
  const kc = cluster.kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  for (const name of [NAMESPACE, OTHER_NAMESPACE]) await core.createNamespace({ body: { metadata: { name } } });
  const client = new Client(kc, { fieldManager: FIELD_MANAGER });
  try {
    await client.create(
      POOL_RESOURCES.TallyIPPool,
      pool(
        'TallyIPPool',
        'nodes',
        { addresses: ['10.60.0.10-10.60.0.29'], prefix: 24, gateway: '10.60.0.1' },
        NAMESPACE,
      ),
    );
    await client.create(
      POOL_RESOURCES.TallyPrefixPool,
      pool('TallyPrefixPool', 'pods', { prefixes: ['10.61.0.0/20'], allocationPrefixLength: 24 }, NAMESPACE),
    );
    await client.create(
      POOL_RESOURCES.GlobalTallyIPPool,
      pool('GlobalTallyIPPool', 'fleet-v6', { addresses: ['fd00:60::10-fd00:60::2f'], prefix: 64 }),
    );
    await client.create(
      POOL_RESOURCES.GlobalTallyPrefixPool,
      pool('GlobalTallyPrefixPool', 'fleet-v6-prefixes', { prefixes: ['fd00:61::/56'], allocationPrefixLength: 64 }),
    );
    await client.create(METAL3_POOL_RESOURCE, {
      apiVersion: METAL3_IPAM_V1ALPHA1_API_VERSION,
      kind: 'IPPool',
      metadata: { name: 'provisioning', namespace: NAMESPACE },
      spec: {
        clusterName: CLUSTER,
        namePrefix: 'provisioning',
        pools: [{ start: '10.62.0.10', end: '10.62.0.29', gateway: '10.62.0.1' }],
        prefix: 24,
      },
    });
    const ref = (kind: string, name: string) => ({ apiGroup: IPAM_GROUP, kind, name });
    await createClusterOnSim(
      client,
      cluster.env,
      { namespace: NAMESPACE, name: CLUSTER },
      {
        controlPlaneEndpointPoolRef: ref('TallyIPPool', 'nodes'),
      },
    );
    const network = (index: number) => ({
      devices: [
        { name: 'eth0', addressesFromPools: [ref('TallyIPPool', 'nodes'), ref('GlobalTallyIPPool', 'fleet-v6')] },
        {
          name: 'eth1',
          addressesFromPools: [
            index === 0 ? ref('TallyPrefixPool', 'pods') : ref('GlobalTallyPrefixPool', 'fleet-v6-prefixes'),
          ],
        },
      ],
    });
    await client.create(SECRET_RESOURCE, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: BOOTSTRAP_SECRET, namespace: NAMESPACE },
      type: 'cluster.x-k8s.io/secret',
      data: { value: Buffer.from('#cloud-config\n').toString('base64') },
    });
    for (const [index, name] of ['m0', 'm1'].entries()) {
      await client.create(SIM_MACHINE_RESOURCE, {
        apiVersion: SIM_V1ALPHA1_API_VERSION,
        kind: 'SimMachine',
        metadata: { namespace: NAMESPACE, name },
        spec: { network: network(index) },
      });
      // m0 is the control plane: clusterctl moves only a Cluster whose control plane is initialized, which Cluster
      // API decides (without a control plane provider) from a control-plane Machine with a Node.
      await client.create(MACHINE_RESOURCE, {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Machine',
        metadata: { namespace: NAMESPACE, name, ...(index === 0 ? { labels: { [CONTROL_PLANE_LABEL]: '' } } : {}) },
        spec: machineSpec(CLUSTER, 'SimMachine', name),
      });
    }
    const machines = await eventually(
      'both Machines exist',
      async () => {
        const items = (await client.list(MACHINE_RESOURCE, { namespace: NAMESPACE })).items;
        return items.length === 2 ? items : undefined;
      },
      { hint: cluster.logsHint() },
    );
    for (const machine of machines) {
      await client.create(METAL3_CLAIM_RESOURCE, {
        apiVersion: METAL3_IPAM_V1ALPHA1_API_VERSION,
        kind: 'IPClaim',
        metadata: {
          name: `${machine.metadata.name}-provisioning`,
          namespace: NAMESPACE,
          labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER },
          ownerReferences: [
            {
              apiVersion: 'cluster.x-k8s.io/v1beta2',
              kind: 'Machine',
              name: machine.metadata.name,
              uid: machine.metadata.uid ?? '',
              controller: true,
            },
          ],
        },
        spec: { pool: { name: 'provisioning' } },
      });
    }
    // A Metal3 pool and claim of no Cluster: another API's objects no lifecycle step of Tally's may touch.
    await client.create(METAL3_POOL_RESOURCE, {
      apiVersion: METAL3_IPAM_V1ALPHA1_API_VERSION,
      kind: 'IPPool',
      metadata: { name: 'static', namespace: NAMESPACE },
      spec: { namePrefix: 'static', pools: [{ start: '10.63.0.10', end: '10.63.0.19' }], prefix: 24 },
    });
    await client.create(METAL3_CLAIM_RESOURCE, {
      apiVersion: METAL3_IPAM_V1ALPHA1_API_VERSION,
      kind: 'IPClaim',
      metadata: { name: 'static-claim', namespace: NAMESPACE },
      spec: { pool: { name: 'static' } },
    });
    // A claim of no Cluster in the moved namespace, and one of a global pool in a namespace that is not moved.
    await client.create(CLAIM_RESOURCE, {
      apiVersion: `${IPAM_GROUP}/v1beta2`,
      kind: 'IPAddressClaim',
      metadata: { name: 'standalone', namespace: NAMESPACE },
      spec: { poolRef: ref('TallyIPPool', 'nodes') },
    });
    await client.create(CLAIM_RESOURCE, {
      apiVersion: `${IPAM_GROUP}/v1beta2`,
      kind: 'IPAddressClaim',
      metadata: { name: 'bystander', namespace: OTHER_NAMESPACE },
      spec: { poolRef: ref('GlobalTallyIPPool', 'fleet-v6') },
    });
  } finally {
    client.close();
  }
}

/** The fleet's inventory on `cluster`, read live. */
export async function inventory(cluster: FleetCluster): Promise<Inventory> {
  const client = new Client(cluster.kubeConfig(), { fieldManager: FIELD_MANAGER });
  try {
    return await readInventory(client, [NAMESPACE, OTHER_NAMESPACE]);
  } finally {
    client.close();
  }
}

/** Waits until every claim of the fleet is bound and the Cluster's control plane is initialized (move needs it). */
export async function fleetReady(cluster: FleetCluster): Promise<Inventory> {
  const ready = await eventually(
    'every claim of both APIs bound',
    async () => {
      const current = await inventory(cluster);
      return current.holdings.length === FLEET_ADDRESSES ? current : undefined;
    },
    { hint: cluster.logsHint() },
  );
  await eventually(
    "the Cluster's control plane initialized (what clusterctl move requires)",
    async () => {
      const client = new Client(cluster.kubeConfig(), { fieldManager: FIELD_MANAGER });
      try {
        const object = await client.get(CLUSTER_RESOURCE, { namespace: NAMESPACE, name: CLUSTER });
        return object.status?.conditions?.some(
          (condition) => condition.type === 'ControlPlaneInitialized' && condition.status === 'True',
        );
      } finally {
        client.close();
      }
    },
    { hint: cluster.logsHint() },
  );
  return ready;
}

export /**
 * Every IPAddress of either API has exactly one live ledger entry, naming its claim as it exists on that cluster (same
 * uid), and no live entry names a claim that is gone: a description of what is wrong, or undefined.
 */
async function ledgerMismatch(cluster: FleetCluster, inventory: Inventory): Promise<string | undefined> {
  const client = new Client(cluster.kubeConfig(), { fieldManager: FIELD_MANAGER });
  try {
    const live = inventory.ledger.filter((entry) => !entry.released);
    const problems: string[] = [];
    for (const holding of inventory.holdings) {
      const address =
        holding.api === 'metal3' || holding.prefix === undefined || !holding.pool.includes('Prefix')
          ? holding.address
          : `${holding.address}/${holding.prefix}`;
      const entries = live.filter((entry) => entry.address === address && entry.claimKind === holding.api);
      if (entries.length !== 1 || entries[0]?.claim !== holding.claim) {
        problems.push(`${holding.api} ${holding.claim} holds ${address}: entries ${JSON.stringify(entries)}`);
      }
    }
    for (const entry of live) {
      const [namespace = '', name = ''] = entry.claim.split('/');
      const resource = entry.claimKind === 'metal3' ? METAL3_CLAIM_RESOURCE : CLAIM_RESOURCE;
      const claim = await client.get(resource, { namespace, name }).catch(() => undefined);
      if (claim?.metadata.uid !== entry.claimUid) problems.push(`entry ${JSON.stringify(entry)} names no claim here`);
    }
    return problems.length > 0 ? `[${cluster.name}] ${problems.join('; ')}` : undefined;
  } finally {
    client.close();
  }
}

export /** No address (or prefix) is held twice across the two clusters. */
function heldTwice(inventories: readonly Inventory[]): string[] {
  const seen = inventories.flatMap((each) => each.holdings.map((holding) => `${holding.address}/${holding.prefix}`));
  return seen.filter((address, index) => seen.indexOf(address) !== index);
}
