import type { KubeConfig } from '@kubernetes/client-node';
import {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  CLUSTER_RESOURCE,
  MACHINE_RESOURCE,
  PAUSED_ANNOTATION,
} from '@tally-ipam/api-types';
import type { Client } from '@tally-ipam/controller-kit/client';
import type { VcsimEndpoint } from '@tally-ipam/vsphere';
import { expect } from 'vitest';
import { watchAddresses } from './address-watch.js';
import type { IpamProviderUnderTest } from './providers.js';
import { MACHINE_DEPLOYMENT_RESOURCE, VSPHERE_MACHINE_RESOURCE, VSPHERE_VM_RESOURCE } from './resources.js';
import { BOOTSTRAP_SECRET, createCluster, createMachineDeployment, waitForPauseBarrier } from './setup.js';
import { checkState, claimName, type MachineState, type ScenarioSetup, scenarioVms } from './state.js';

export interface CapvScenarioContext {
  readonly kubeConfig: KubeConfig;
  readonly client: Client;
  readonly vcsim: VcsimEndpoint;
  readonly namespace: string;
  /** The namespace's random suffix, for cluster-scoped names. */
  readonly suffix: string;
  /** Cluster API's and CAPV's logs, for timeouts. */
  readonly hint: string;
  readonly eventually: <T>(what: string, probe: () => Promise<T | undefined>, describe?: () => unknown) => Promise<T>;
}

export interface ScenarioFigures {
  readonly provider: string;
  /** From "MachineDeployment created" to "all 3 Machines have addresses". */
  readonly firstAddressesMs: number;
  readonly phases: readonly string[];
}

const BOOTSTRAP_DATA = '#cloud-config\nruncmd:\n  - echo "bootstrap data given directly, no kubeadm"\n';

/**
 * Issue 32's scenario, the same steps for any IPAM provider: CAPV, unmodified, creates the claims of a
 * MachineDeployment's VMs (two devices: one from a namespaced IPv4 pool, one from a cluster-scoped IPv6 pool), the
 * provider binds them, CAPV configures and powers on the VMs with those addresses; scaled 3 → 6 (while the Cluster
 * carries the paused annotation, so the new claims wait until it is removed) → 1, then the Cluster is deleted; every
 * address is released, and the watch never saw one held twice. Nothing waits on time: each step waits for its
 * outcome, with a deadline only against a hang.
 */
export async function runCapvScenario(
  context: CapvScenarioContext,
  provider: IpamProviderUnderTest,
): Promise<ScenarioFigures> {
  const { client, namespace } = context;
  const hint = `${provider.logHint}; ${context.hint}`;
  const eventually = <T>(what: string, probe: () => Promise<T | undefined>, describe?: () => unknown): Promise<T> =>
    context.eventually(`${provider.name}: ${what}`, probe, describe);
  const phases: string[] = [];
  let phaseStart = performance.now();
  const phaseDone = (what: string): void => {
    phases.push(`${what} ${((performance.now() - phaseStart) / 1000).toFixed(1)} s`);
    phaseStart = performance.now();
  };

  const pools = await provider.createPools(client, namespace, context.suffix);
  const watch = watchAddresses(context.kubeConfig, client, namespace);
  const setup: ScenarioSetup = {
    client,
    vcsim: context.vcsim,
    provider,
    namespace,
    clusterName: 'capv',
    deploymentName: `workers-${context.suffix}`,
    pools,
    networks: [context.vcsim.networks[0], context.vcsim.networks[1]],
    bootstrapSecret: BOOTSTRAP_SECRET,
  };
  try {
    let lastProblems: readonly string[] = [];
    const converged = (replicas: number, what: string): Promise<ReadonlyMap<string, MachineState>> =>
      eventually(
        what,
        async () => {
          const check = await checkState(setup, replicas);
          lastProblems = check.problems;
          return check.problems.length === 0 ? check.machines : undefined;
        },
        () => ({ problems: lastProblems, hint }),
      );

    await createCluster(setup, context.vcsim, BOOTSTRAP_DATA);
    await eventually('the Cluster infrastructure to be provisioned (VSphereCluster ready)', async () => {
      const cluster = await client.get(CLUSTER_RESOURCE, { namespace, name: setup.clusterName });
      return cluster.status?.initialization?.infrastructureProvisioned === true ? true : undefined;
    });
    phaseDone('Cluster provisioned');

    // --- 3 Machines. The figure: from the MachineDeployment's creation to every Machine reporting both addresses.
    const created = performance.now();
    await createMachineDeployment(setup, context.vcsim, 3);
    await eventually('all 3 Machines to report their addresses', async () => {
      const machines = (await client.list(MACHINE_RESOURCE, { namespace })).items;
      const withBoth = machines.filter(
        (m) => (m.status?.addresses ?? []).filter((a) => a.type === 'ExternalIP').length >= 2,
      );
      return machines.length === 3 && withBoth.length === 3 ? true : undefined;
    });
    const firstAddressesMs = performance.now() - created;
    phaseDone('3 Machines with addresses');
    const three = await converged(3, 'the 3 Machines, their claims, addresses and VMs to be consistent');
    phaseDone('3 consistent');

    // --- Pause: the Cluster's paused annotation pauses the IPAM provider's handling of its claims (the IPAM
    // contract: spec.paused or the annotation), while Cluster API and CAPV go on, so CAPV creates claims meanwhile.
    await client.mergePatch(
      CLUSTER_RESOURCE,
      { namespace, name: setup.clusterName },
      {
        metadata: { annotations: { [PAUSED_ANNOTATION]: 'true' } },
      },
    );
    const [firstKept] = three.values();
    if (!firstKept) throw new Error('no Machine to poke');
    await waitForPauseBarrier(setup, claimName(firstKept.vm, 0), eventually);
    await client.mergePatch(
      MACHINE_DEPLOYMENT_RESOURCE,
      { namespace, name: setup.deploymentName },
      { spec: { replicas: 6 } },
    );
    const waiting = await eventually('CAPV to create the 6 claims of the 3 new VMs while paused', async () => {
      const vms = (await client.list(VSPHERE_VM_RESOURCE, { namespace })).items.map((vm) => vm.metadata.name);
      const fresh = vms.filter((vm) => ![...three.values()].some((kept) => kept.vm === vm));
      const claims = new Set((await client.list(CLAIM_RESOURCE, { namespace })).items.map((c) => c.metadata.name));
      const names = fresh.flatMap((vm) => [claimName(vm, 0), claimName(vm, 1)]);
      return fresh.length === 3 && names.every((name) => claims.has(name)) ? names : undefined;
    });
    // The barrier instead of a sleep: the provider decided on every new claim, and its log says it skipped it.
    await eventually('the provider to skip every new claim as paused', async () => {
      const skipped = await Promise.all(waiting.map((name) => provider.loggedPausedSkip({ namespace, name })));
      return skipped.every(Boolean) ? true : undefined;
    });
    const claimsWhilePaused = (await client.list(CLAIM_RESOURCE, { namespace })).items;
    const addressesWhilePaused = (await client.list(ADDRESS_RESOURCE, { namespace })).items;
    for (const name of waiting) {
      const claim = claimsWhilePaused.find((c) => c.metadata.name === name);
      expect(claim?.status?.addressRef?.name, `${name} stays unbound while paused`).toBeUndefined();
      expect(
        addressesWhilePaused.filter((a) => a.spec.claimRef.name === name),
        `no IPAddress for ${name}`,
      ).toEqual([]);
    }
    expect(addressesWhilePaused.length, 'only the 3 first VMs hold addresses while paused').toBe(6);
    for (const target of [pools.v4, pools.v6]) {
      const held = await provider.heldAddresses(client, target);
      if (held) expect(held.length, `${provider.name} holds only the first 3 addresses of ${target.ref.name}`).toBe(3);
    }
    phaseDone('paused: 6 new claims skipped');
    await client.mergePatch(
      CLUSTER_RESOURCE,
      { namespace, name: setup.clusterName },
      {
        metadata: { annotations: { [PAUSED_ANNOTATION]: null } },
      },
    );
    const six = await converged(6, 'the 6 Machines to be consistent once unpaused');
    for (const kept of three.values()) {
      expect(six.get(kept.machine), `${kept.machine} keeps its addresses`).toEqual(kept);
    }
    phaseDone('unpaused, 6 consistent');

    // --- Scale down to 1: 5 VMs destroyed, their 10 addresses released; the one left keeps its addresses.
    await client.mergePatch(
      MACHINE_DEPLOYMENT_RESOURCE,
      { namespace, name: setup.deploymentName },
      { spec: { replicas: 1 } },
    );
    const one = await converged(1, 'the MachineDeployment to be consistent at 1');
    const [left] = one.values();
    if (!left) throw new Error('no Machine left at 1 replica');
    expect(six.get(left.machine), 'the Machine left kept its addresses').toEqual(left);
    phaseDone('scaled to 1');

    // --- Delete the Cluster: everything goes, every address is released.
    await client.delete(CLUSTER_RESOURCE, { namespace, name: setup.clusterName });
    await eventually(
      'the Cluster to be deleted with every Machine, VM, claim and address',
      async () => {
        const left = await leftovers(setup);
        lastProblems = left;
        return left.length === 0 ? true : undefined;
      },
      () => ({ left: lastProblems, hint }),
    );
    phaseDone('deleted');
    expect(watch.events(), 'the address watch saw the scenario').toBeGreaterThan(0);
    expect(watch.doubles, 'no address was ever held twice').toEqual([]);
    return { provider: provider.name, firstAddressesMs, phases };
  } finally {
    watch.stop();
    await provider.deletePools(client, pools);
  }
}

/** What is left after the Cluster's deletion, in words: nothing, once it is done. */
async function leftovers(setup: ScenarioSetup): Promise<string[]> {
  const { client, namespace } = setup;
  const left: string[] = [];
  const counted = async (what: string, items: Promise<{ items: readonly unknown[] }>): Promise<void> => {
    const n = (await items).items.length;
    if (n > 0) left.push(`${n} ${what}`);
  };
  await counted('Clusters', client.list(CLUSTER_RESOURCE, { namespace }));
  await counted('Machines', client.list(MACHINE_RESOURCE, { namespace }));
  await counted('VSphereMachines', client.list(VSPHERE_MACHINE_RESOURCE, { namespace }));
  await counted('VSphereVMs', client.list(VSPHERE_VM_RESOURCE, { namespace }));
  await counted('IPAddressClaims', client.list(CLAIM_RESOURCE, { namespace }));
  await counted('IPAddresses', client.list(ADDRESS_RESOURCE, { namespace }));
  const vms = scenarioVms(await setup.vcsim.vms(), setup.deploymentName);
  if (vms.length > 0) left.push(`VMs in the simulator: ${vms.map((vm) => vm.name)}`);
  for (const target of [setup.pools.v4, setup.pools.v6]) {
    const held = await setup.provider.heldAddresses(client, target);
    if (held && held.length > 0) left.push(`${target.ref.name}: the provider still holds ${held}`);
    const pool = await client.get(target.resource, { namespace: target.namespace, name: target.ref.name });
    if (pool.status?.ipAddresses?.used !== 0) left.push(`${target.ref.name}: ${pool.status?.ipAddresses?.used} used`);
  }
  return left;
}
