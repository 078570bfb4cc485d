import type { KubeConfig } from '@kubernetes/client-node';
import { ADDRESS_RESOURCE, CLAIM_RESOURCE, CLUSTER_RESOURCE, MACHINE_RESOURCE } from '@tally-ipam/api-types';
import type { Client } from '@tally-ipam/controller-kit/client';
import type { VcsimEndpoint } from '@tally-ipam/vsphere';
import { type AddressWatch, watchAddresses } from './address-watch.js';
import type { IpamProviderUnderTest } from './providers.js';
import { MACHINE_DEPLOYMENT_RESOURCE, VSPHERE_MACHINE_RESOURCE, VSPHERE_VM_RESOURCE } from './resources.js';
import { BOOTSTRAP_SECRET, createCluster, createMachineDeployment } from './setup.js';
import { checkState, type MachineState, type ScenarioSetup, scenarioVms } from './state.js';

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
 * The steps the scenarios are made of, on one namespace's Cluster and MachineDeployment. Each waits for its outcome,
 * with the context's deadline only against a hang; `phaseDone` records how long each phase took, for the timing line.
 */
export interface ScenarioRun {
  /** What the scenario set up, with the provider serving it now. */
  setup(): ScenarioSetup;
  readonly watch: AddressWatch;
  readonly phases: readonly string[];
  /** Where to look when a wait times out: the provider's log, Cluster API's, CAPV's and the simulator's. */
  hint(): string;
  eventually<T>(what: string, probe: () => Promise<T | undefined>, describe?: () => unknown): Promise<T>;
  phaseDone(what: string): void;
  /** Waits until `checkState` finds nothing wrong at `replicas`; returns the Machines. */
  converged(replicas: number, what: string): Promise<ReadonlyMap<string, MachineState>>;
  /** The Cluster's objects, until its infrastructure is provisioned (CAPV reached the simulator). */
  createCluster(): Promise<void>;
  /** The MachineDeployment, until its `replicas` Machines report both addresses; returns how long that took. */
  createMachines(replicas: number): Promise<number>;
  scale(replicas: number): Promise<void>;
  /** Deletes the Cluster and waits until nothing of it is left (`leftovers`). */
  deleteCluster(): Promise<void>;
  /** From now on `provider` serves the claims (a take-over): its bookkeeping and log are the ones checked. */
  handOver(provider: IpamProviderUnderTest): void;
}

/**
 * Creates `provider`'s pools and starts the address watch, runs `body`, then stops the watch and deletes the pools
 * (with the provider serving them at that point).
 */
export async function withScenario<T>(
  context: CapvScenarioContext,
  provider: IpamProviderUnderTest,
  body: (run: ScenarioRun) => Promise<T>,
): Promise<T> {
  const { client, namespace } = context;
  const pools = await provider.createPools(client, namespace, context.suffix);
  const watch = watchAddresses(context.kubeConfig, client, namespace);
  let setup: ScenarioSetup = {
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
  const phases: string[] = [];
  let phaseStart = performance.now();
  const hint = (): string => `${setup.provider.logHint}; ${context.hint}`;
  const eventually = <T>(what: string, probe: () => Promise<T | undefined>, describe?: () => unknown): Promise<T> =>
    context.eventually(`${setup.provider.name}: ${what}`, probe, describe);
  let lastProblems: readonly string[] = [];
  const run: ScenarioRun = {
    setup: () => setup,
    watch,
    phases,
    hint,
    eventually,
    phaseDone: (what) => {
      phases.push(`${what} ${((performance.now() - phaseStart) / 1000).toFixed(1)} s`);
      phaseStart = performance.now();
    },
    converged: (replicas, what) =>
      eventually(
        what,
        async () => {
          const check = await checkState(setup, replicas);
          lastProblems = check.problems;
          return check.problems.length === 0 ? check.machines : undefined;
        },
        () => ({ problems: lastProblems, hint: hint() }),
      ),
    createCluster: async () => {
      await createCluster(setup, context.vcsim, BOOTSTRAP_DATA);
      await eventually('the Cluster infrastructure to be provisioned (VSphereCluster ready)', async () => {
        const cluster = await client.get(CLUSTER_RESOURCE, { namespace, name: setup.clusterName });
        return cluster.status?.initialization?.infrastructureProvisioned === true ? true : undefined;
      });
    },
    createMachines: async (replicas) => {
      const created = performance.now();
      await createMachineDeployment(setup, context.vcsim, replicas);
      await eventually(`all ${replicas} Machines to report their addresses`, async () => {
        const machines = (await client.list(MACHINE_RESOURCE, { namespace })).items;
        const withBoth = machines.filter(
          (m) => (m.status?.addresses ?? []).filter((a) => a.type === 'ExternalIP').length >= 2,
        );
        return machines.length === replicas && withBoth.length === replicas ? true : undefined;
      });
      return performance.now() - created;
    },
    scale: async (replicas) => {
      await client.mergePatch(
        MACHINE_DEPLOYMENT_RESOURCE,
        { namespace, name: setup.deploymentName },
        { spec: { replicas } },
      );
    },
    deleteCluster: async () => {
      await client.delete(CLUSTER_RESOURCE, { namespace, name: setup.clusterName });
      await eventually(
        'the Cluster to be deleted with every Machine, VM, claim and address',
        async () => {
          const left = await leftovers(setup);
          lastProblems = left;
          return left.length === 0 ? true : undefined;
        },
        () => ({ left: lastProblems, hint: hint() }),
      );
    },
    handOver: (next) => {
      setup = { ...setup, provider: next };
    },
  };
  try {
    return await body(run);
  } finally {
    watch.stop();
    await setup.provider.deletePools(client, pools);
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
