import { ADDRESS_RESOURCE, CLUSTER_RESOURCE, MACHINE_RESOURCE } from '@tally-ipam/api-types';
import type { Client } from '@tally-ipam/controller-kit';
import { POOL_RESOURCES } from '@tally-ipam/ipam-provider';
import { waitFor } from '@tally-ipam/testenv';
import { createClaim, createIPPool, waitForReason } from './support.js';

/** What the scene made: the namespace and the address each bound claim got, by claim name. */
export interface Scene {
  readonly namespace: string;
  readonly addresses: Readonly<Record<string, string>>;
}

/**
 * A small scene in `namespace`, inside `base` (e.g. `10.71`): Cluster `c1` owning Machine `m1`; pool `roomy`
 * (`<base>.0.10-13`, four addresses) with claim `web-0`, owned by m1, and `web-1`, owned by a Machine that does not
 * exist; pool `tiny` (`<base>.1.10`, one address) with `solo-0` bound and `solo-1` waiting, the pool exhausted. Returns
 * once every claim has its final reason and both pools count what they hold.
 */
export async function buildScene(client: Client, namespace: string, base: string): Promise<Scene> {
  const cluster = await client.create(CLUSTER_RESOURCE, {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Cluster',
    metadata: { name: 'c1', namespace },
    spec: { paused: false },
  });
  const machine = await client.create(MACHINE_RESOURCE, {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: {
      name: 'm1',
      namespace,
      ownerReferences: [
        { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', name: 'c1', uid: cluster.metadata.uid ?? '' },
      ],
    },
    spec: {
      clusterName: 'c1',
      bootstrap: { dataSecretName: 'm1-bootstrap' },
      infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'SimMachine', name: 'm1' },
    },
  });
  await createIPPool(client, namespace, 'roomy', [`${base}.0.10-${base}.0.13`]);
  await createIPPool(client, namespace, 'tiny', [`${base}.1.10`]);
  const owner = (kind: string, name: string, uid: string): { ownerReferences: unknown[] } => ({
    ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind, name, uid, controller: true }],
  });
  await createClaim(client, namespace, 'web-0', 'roomy', {
    ...owner('Machine', 'm1', machine.metadata.uid ?? ''),
    labels: { 'cluster.x-k8s.io/cluster-name': 'c1' },
  });
  await createClaim(
    client,
    namespace,
    'web-1',
    'roomy',
    owner('Machine', 'gone', '00000000-0000-4000-8000-000000000000'),
  );
  await createClaim(client, namespace, 'solo-0', 'tiny');
  const addresses: Record<string, string> = {};
  for (const name of ['web-0', 'web-1', 'solo-0']) {
    const claim = await waitForReason(client, namespace, name, 'AddressAllocated');
    const address = await client.get(ADDRESS_RESOURCE, { namespace, name: claim.status?.addressRef?.name ?? '' });
    addresses[name] = address.spec.address;
  }
  await createClaim(client, namespace, 'solo-1', 'tiny');
  await waitForReason(client, namespace, 'solo-1', 'PoolExhausted');
  for (const [pool, used] of [
    ['roomy', 2],
    ['tiny', 1],
  ] as const) {
    await waitFor(`pool ${namespace}/${pool} to count ${used} used`, async () => {
      const read = await client.get(POOL_RESOURCES.TallyIPPool, { namespace, name: pool });
      const status = read.status as { ipAddresses?: { used?: number } } | undefined;
      return status?.ipAddresses?.used === used;
    });
  }
  return { namespace, addresses };
}
