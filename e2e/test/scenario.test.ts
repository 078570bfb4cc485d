import { parseIP, parseIPRange } from '@tally-ipam/allocator';
import {
  CLUSTER_NAME_LABEL,
  IPAM_GROUP,
  MACHINEPOOL_NAME_LABEL,
  PAUSED_ANNOTATION,
  PAUSED_CONDITION,
  TALLY_IP_POOL_KIND,
  TALLY_V1ALPHA1_API_VERSION,
  TallyIPPoolStatus,
} from '@tally-ipam/api-types';
import type { Condition } from '@tally-ipam/controller-kit/capi';
import { Client, isNotFound } from '@tally-ipam/controller-kit/client';
import { POOL_RESOURCES } from '@tally-ipam/ipam-provider';
import { LEDGER_RESOURCE } from '@tally-ipam/ledger';
import { formatLabelValue, MACHINE_POOL_RESOURCE } from '@tally-ipam/machinepool';
import {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  CLUSTER_RESOURCE,
  MACHINE_RESOURCE,
  NODE_RESOURCE,
  SIM_CLUSTER_RESOURCE,
  SIM_MACHINE_POOL_RESOURCE,
  SIM_MACHINE_RESOURCE,
  SIM_V1ALPHA1_API_VERSION,
} from '@tally-ipam/sim-infra';
import { testEnv, withTestNamespace } from '@tally-ipam/testenv/vitest';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createClusterOnSim, createMachineOnSim, eventually, logsHint, machineSpec, runningApps } from './harness.js';

const POOL_RESOURCE = POOL_RESOURCES[TALLY_IP_POOL_KIND];

/** The three pools and the ranges the assertions check addresses against. */
const POOLS = {
  vips: { addresses: ['10.80.0.10-10.80.0.19'], prefix: 24 },
  machines: { addresses: ['10.80.1.10-10.80.1.19'], prefix: 24, gateway: '10.80.1.1' },
  workers: { addresses: ['10.80.2.10-10.80.2.29'], prefix: 24, gateway: '10.80.2.1' },
} as const;
type PoolName = keyof typeof POOLS;

function inPool(pool: PoolName, address: string): boolean {
  const value = parseIP(address).value;
  return POOLS[pool].addresses.some((range) => {
    const { first, last } = parseIPRange(range);
    return value >= first && value <= last;
  });
}

function conditionOf(
  object: { status?: { conditions?: readonly Condition[] | undefined } | undefined },
  type: string,
): Condition | undefined {
  return object.status?.conditions?.find((condition) => condition.type === type);
}

/** The object reports `Paused=True` for its current generation: its controller saw it paused, as it is now. */
function reportsPaused(object: {
  metadata: { generation?: number | undefined };
  status?: { conditions?: readonly Condition[] | undefined } | undefined;
}): boolean {
  const condition = conditionOf(object, PAUSED_CONDITION);
  return (
    condition?.status === 'True' &&
    condition.observedGeneration !== undefined &&
    condition.observedGeneration === object.metadata.generation
  );
}

describe('Sim and Tally driven by the real Cluster API manager', () => {
  it('provisions a Cluster, a Machine and a MachinePool with IPAM addresses, scales, pauses, and deletes cleanly', async () => {
    // Phase durations, printed at the end for the README's figures (never asserted on).
    const scenarioStart = performance.now();
    let phaseStart = scenarioStart;
    const phases: string[] = [];
    const phaseDone = (what: string): void => {
      const now = performance.now();
      phases.push(`${what} ${((now - phaseStart) / 1000).toFixed(1)} s`);
      phaseStart = now;
    };
    runningApps();
    const env = testEnv();
    const ns = await withTestNamespace(env.kubeConfig, 'e2e-scenario');
    const namespace = ns.name;
    const hint = logsHint(env);
    const client = new Client(env.kubeConfig, { fieldManager: 'tally-e2e' });
    onTestFinished(() => client.close());
    // Nodes are cluster-scoped and named after SimMachines: names carry the namespace's random suffix.
    const suffix = namespace.split('-').pop() ?? namespace;
    const clusterName = 'scenario';
    const machineName = `worker-${suffix}`;
    const poolName = `workers-${suffix}`;
    const key = (name: string): { namespace: string; name: string } => ({ namespace, name });
    const poolRefs = {} as Record<PoolName, { apiGroup: string; kind: string; name: string }>;
    for (const [name, spec] of Object.entries(POOLS) as [PoolName, (typeof POOLS)[PoolName]][]) {
      await client.create(POOL_RESOURCE, {
        apiVersion: TALLY_V1ALPHA1_API_VERSION,
        kind: TALLY_IP_POOL_KIND,
        metadata: { name, namespace },
        spec,
      });
      poolRefs[name] = { apiGroup: IPAM_GROUP, kind: TALLY_IP_POOL_KIND, name };
    }
    const poolCounts = async (name: PoolName): Promise<TallyIPPoolStatus['ipAddresses']> => {
      const pool = await client.get(POOL_RESOURCE, key(name));
      return TallyIPPoolStatus.parse(pool.status ?? {}).ipAddresses;
    };
    // The pool's status follows its allocations asynchronously (the pool reconciler).
    const poolCountsUsed = (pool: PoolName, used: number): Promise<true> =>
      eventually(
        `the ${pool} pool to count ${used} used addresses`,
        async () => ((await poolCounts(pool))?.used === used ? true : undefined),
        { hint },
      );
    const claimsOf = async (pool: PoolName) =>
      (await client.list(CLAIM_RESOURCE, { namespace })).items.filter((claim) => claim.spec.poolRef.name === pool);
    const addressesOf = async (pool: PoolName) =>
      (await client.list(ADDRESS_RESOURCE, { namespace })).items.filter(
        (address) => address.spec.poolRef.name === pool,
      );
    /** The TallyAddressLedger entries held for the pool's claims (one ledger per address block, cluster-wide). */
    const entriesOf = async (pool: PoolName) =>
      (await client.list(LEDGER_RESOURCE)).items
        .flatMap((ledger) => ledger.spec.entries ?? [])
        .filter((entry) => entry.poolRef.namespace === namespace && entry.poolRef.name === pool);

    // --- A Cluster on a SimCluster whose control-plane endpoint comes from the vips pool.
    await createClusterOnSim(client, env, key(clusterName), {
      controlPlaneEndpointPoolRef: poolRefs.vips,
      failureDomains: [{ name: 'fd-a', controlPlane: true }],
    });
    const provisioned = await eventually(
      'the Cluster to become Provisioned',
      async () => {
        const cluster = await client.get(CLUSTER_RESOURCE, key(clusterName));
        return cluster.status?.phase === 'Provisioned' ? cluster : undefined;
      },
      { hint },
    );
    const endpointHost = provisioned.spec?.controlPlaneEndpoint?.host ?? '';
    expect(inPool('vips', endpointHost), `endpoint ${endpointHost} in the vips pool`).toBe(true);
    expect(provisioned.spec?.controlPlaneEndpoint?.port).toBe(6443);
    expect(provisioned.status?.initialization?.infrastructureProvisioned).toBe(true);
    const [vipAddress] = await addressesOf('vips');
    expect(vipAddress?.spec.address).toBe(endpointHost);
    phaseDone('Cluster Provisioned');
    await poolCountsUsed('vips', 1);

    // --- A Machine on a SimMachine with an address from the machines pool.
    await createMachineOnSim(client, key(machineName), clusterName, {
      network: { devices: [{ name: 'eth0', addressesFromPools: [poolRefs.machines] }] },
    });
    const machine = await eventually(
      'the Machine to be Running with a nodeRef',
      async () => {
        const current = await client.get(MACHINE_RESOURCE, key(machineName));
        return current.status?.phase === 'Running' && current.status.nodeRef ? current : undefined;
      },
      { hint },
    );
    const [machineAddress, ...extraMachineAddresses] = await addressesOf('machines');
    expect(extraMachineAddresses).toEqual([]);
    expect(inPool('machines', machineAddress?.spec.address ?? '')).toBe(true);
    expect(machine.spec.providerID).toBe(`sim://${namespace}/${machineName}`);
    expect(machine.status?.addresses).toEqual([
      { type: 'Hostname', address: machineName },
      { type: 'InternalIP', address: machineAddress?.spec.address },
    ]);
    phaseDone('Machine Running');
    await poolCountsUsed('machines', 1);

    // --- A MachinePool of 3 on a SimMachinePool whose instances take addresses from the workers pool.
    await client.create(SIM_MACHINE_POOL_RESOURCE, {
      apiVersion: SIM_V1ALPHA1_API_VERSION,
      kind: 'SimMachinePool',
      metadata: { name: poolName, namespace },
      spec: { template: { network: { devices: [{ name: 'eth0', addressesFromPools: [poolRefs.workers] }] } } },
    });
    await client.create(MACHINE_POOL_RESOURCE, {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'MachinePool',
      metadata: { name: poolName, namespace },
      spec: {
        clusterName,
        replicas: 3,
        template: { spec: machineSpec(clusterName, 'SimMachinePool', poolName) },
      },
    });
    const poolMachineSelector = `${MACHINEPOOL_NAME_LABEL}=${formatLabelValue(poolName)}`;

    /**
     * Waits until the MachinePool is Running with `replicas` Nodes and exactly `replicas` Running Machines and
     * SimMachines exist, then checks the IPAM side: one bound claim, one IPAddress and one ledger entry per instance, all
     * addresses distinct and in the workers pool, each Machine carrying its instance's address, the pool's counts.
     */
    const convergedTo = async (replicas: number): Promise<Set<string>> => {
      const machines = await eventually(
        `the MachinePool to be Running with ${replicas} replicas and ${replicas} Running Machines`,
        async () => {
          const machinePool = await client.get(MACHINE_POOL_RESOURCE, key(poolName));
          const poolMachines = await client.list(MACHINE_RESOURCE, { namespace, labelSelector: poolMachineSelector });
          const simMachines = await client.list(SIM_MACHINE_RESOURCE, {
            namespace,
            labelSelector: poolMachineSelector,
          });
          const converged =
            machinePool.status?.phase === 'Running' &&
            machinePool.status.replicas === replicas &&
            machinePool.status.nodeRefs?.length === replicas &&
            machinePool.spec.providerIDList?.length === replicas &&
            poolMachines.items.length === replicas &&
            simMachines.items.length === replicas &&
            poolMachines.items.every(
              (m) => m.status?.phase === 'Running' && !m.metadata.deletionTimestamp && m.status.addresses?.length,
            );
          return converged ? poolMachines.items : undefined;
        },
        { hint, timeoutMs: 300_000 },
      );
      const addresses = await eventually(
        `${replicas} IPAddresses, claims and ledger entries of the workers pool and its status counting them`,
        async () => {
          const [claims, found, entries, counts] = await Promise.all([
            claimsOf('workers'),
            addressesOf('workers'),
            entriesOf('workers'),
            poolCounts('workers'),
          ]);
          const settled =
            claims.length === replicas &&
            claims.every((claim) => claim.status?.addressRef?.name && !claim.metadata.deletionTimestamp) &&
            found.length === replicas &&
            entries.length === replicas &&
            counts?.used === replicas;
          return settled ? { claims, found, counts } : undefined;
        },
        { hint },
      );
      const values = addresses.found.map((address) => address.spec.address);
      expect(new Set(values).size, `distinct addresses ${values.join(', ')}`).toBe(replicas);
      for (const value of values) expect(inPool('workers', value), `${value} in the workers pool`).toBe(true);
      expect(addresses.counts).toMatchObject({ total: 20, used: replicas, free: 20 - replicas, outOfRange: 0 });
      const machineAddresses = machines.map(
        (m) => m.status?.addresses?.find((address) => address.type === 'InternalIP')?.address ?? '',
      );
      expect(new Set(machineAddresses)).toEqual(new Set(values));
      for (const m of machines) {
        expect(m.metadata.labels?.[CLUSTER_NAME_LABEL]).toBe(clusterName);
        expect(m.spec.providerID).toBe(`sim://${namespace}/${m.metadata.name}`);
      }
      return new Set(values);
    };

    const three = await convergedTo(3);
    phaseDone('MachinePool Running with 3');
    await client.mergePatch(MACHINE_POOL_RESOURCE, key(poolName), { spec: { replicas: 5 } });
    const five = await convergedTo(5);
    phaseDone('scaled to 5');
    // Scaling up allocates two more addresses and keeps the three in use.
    expect([...three].every((address) => five.has(address))).toBe(true);
    await client.mergePatch(MACHINE_POOL_RESOURCE, key(poolName), { spec: { replicas: 2 } });
    const two = await convergedTo(2);
    phaseDone('scaled to 2');
    // Scaling down releases three: the remaining two were all in use before.
    expect([...two].every((address) => five.has(address))).toBe(true);

    // --- Pausing the Cluster stops every change.
    await client.mergePatch(CLUSTER_RESOURCE, key(clusterName), { spec: { paused: true } });
    const everythingObservedPause = async (): Promise<true | undefined> => {
      const [cluster, simCluster, machinePool, simMachinePool, machines, simMachines] = await Promise.all([
        client.get(CLUSTER_RESOURCE, key(clusterName)),
        client.get(SIM_CLUSTER_RESOURCE, key(clusterName)),
        client.get(MACHINE_POOL_RESOURCE, key(poolName)),
        client.get(SIM_MACHINE_POOL_RESOURCE, key(poolName)),
        client.list(MACHINE_RESOURCE, { namespace }),
        client.list(SIM_MACHINE_RESOURCE, { namespace }),
      ]);
      const all = [cluster, simCluster, machinePool, simMachinePool, ...machines.items, ...simMachines.items];
      return all.every((object) => reportsPaused(object)) ? true : undefined;
    };
    await eventually('every object to report Paused for its current generation', everythingObservedPause, { hint });
    const snapshot = async () => {
      const names = async (items: Promise<{ items: { metadata: { name: string } }[] }>) =>
        (await items).items.map((item) => item.metadata.name).sort();
      const machinePool = await client.get(MACHINE_POOL_RESOURCE, key(poolName));
      return {
        machines: await names(client.list(MACHINE_RESOURCE, { namespace })),
        simMachines: await names(client.list(SIM_MACHINE_RESOURCE, { namespace })),
        claims: await names(client.list(CLAIM_RESOURCE, { namespace })),
        addresses: await names(client.list(ADDRESS_RESOURCE, { namespace })),
        workers: await poolCounts('workers'),
        providerIDList: machinePool.spec.providerIDList,
        replicas: machinePool.status?.replicas,
      };
    };
    const beforeChange = await snapshot();
    const scaled = await client.mergePatch(MACHINE_POOL_RESOURCE, key(poolName), { spec: { replicas: 4 } });
    // Barriers instead of waiting and hoping: Cluster API has reconciled the new MachinePool generation (its Paused
    // condition observed it), and Sim has reconciled its SimMachinePool after the change (the annotation below
    // changes the message of its Paused condition).
    await client.mergePatch(SIM_MACHINE_POOL_RESOURCE, key(poolName), {
      metadata: { annotations: { [PAUSED_ANNOTATION]: 'true' } },
    });
    await eventually(
      'Cluster API and Sim to observe the scale request while paused',
      async () => {
        const [machinePool, simMachinePool] = await Promise.all([
          client.get(MACHINE_POOL_RESOURCE, key(poolName)),
          client.get(SIM_MACHINE_POOL_RESOURCE, key(poolName)),
        ]);
        const capiObserved =
          reportsPaused(machinePool) &&
          conditionOf(machinePool, PAUSED_CONDITION)?.observedGeneration === scaled.metadata.generation;
        const simObserved = conditionOf(simMachinePool, PAUSED_CONDITION)?.message?.includes(PAUSED_ANNOTATION);
        return capiObserved && simObserved ? true : undefined;
      },
      { hint },
    );
    expect(await snapshot()).toEqual(beforeChange);
    phaseDone('paused, scale request observed, nothing changed');

    // --- Unpausing: it converges on the replicas asked for meanwhile.
    await client.jsonPatch(SIM_MACHINE_POOL_RESOURCE, key(poolName), [
      { op: 'remove', path: `/metadata/annotations/${PAUSED_ANNOTATION.replace('/', '~1')}` },
    ]);
    await client.mergePatch(CLUSTER_RESOURCE, key(clusterName), { spec: { paused: false } });
    const four = await convergedTo(4);
    phaseDone('unpaused, converged on 4');
    expect([...two].every((address) => four.has(address))).toBe(true);

    // --- Deleting the Cluster removes every Machine, SimMachine, claim and IPAddress and empties the pools.
    const nodeNames = (await client.list(SIM_MACHINE_RESOURCE, { namespace })).items.map((m) => m.metadata.name);
    await client.delete(CLUSTER_RESOURCE, key(clusterName));
    await eventually(
      'the Cluster and everything of it to be gone',
      async () => {
        const remaining = await Promise.all([
          client.list(CLUSTER_RESOURCE, { namespace }),
          client.list(SIM_CLUSTER_RESOURCE, { namespace }),
          client.list(MACHINE_POOL_RESOURCE, { namespace }),
          client.list(SIM_MACHINE_POOL_RESOURCE, { namespace }),
          client.list(MACHINE_RESOURCE, { namespace }),
          client.list(SIM_MACHINE_RESOURCE, { namespace }),
          client.list(CLAIM_RESOURCE, { namespace }),
          client.list(ADDRESS_RESOURCE, { namespace }),
        ]);
        return remaining.every((list) => list.items.length === 0) ? true : undefined;
      },
      { hint, timeoutMs: 300_000 },
    );
    for (const pool of Object.keys(POOLS) as PoolName[]) {
      const counts = await eventually(
        `the ${pool} pool to count no used address and hold no ledger entry`,
        async () => {
          const [current, entries] = await Promise.all([poolCounts(pool), entriesOf(pool)]);
          return current?.used === 0 && entries.length === 0 ? current : undefined;
        },
        { hint },
      );
      expect(counts.free).toBe(counts.total);
    }
    for (const name of nodeNames) {
      await expect(client.get(NODE_RESOURCE, { name })).rejects.toSatisfy(isNotFound);
    }
    phaseDone('deleted, pools empty');
    const total = ((performance.now() - scenarioStart) / 1000).toFixed(1);
    console.error(`[tally-e2e] scenario: ${total} s (${phases.join('; ')})`);
  });
});
