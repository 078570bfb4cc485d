import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { METAL3_IP_POOL_FINALIZER, metal3CRDDirectory, WATCH_FILTER_LABEL } from '@tally-ipam/api-types';
import { Client, isNotFound } from '@tally-ipam/controller-kit/client';
import { LEDGER_RESOURCE } from '@tally-ipam/ledger';
import { METAL3_ADDRESS_RESOURCE, METAL3_CLAIM_RESOURCE, METAL3_POOL_RESOURCE } from '@tally-ipam/metal3-ipam';
import {
  CLUSTER_RESOURCE,
  MACHINE_RESOURCE,
  SIM_MACHINE_RESOURCE,
  SIM_V1ALPHA1_API_VERSION,
} from '@tally-ipam/sim-infra';
import { installCRDs, startWatchedProcess, type WatchedProcess } from '@tally-ipam/testenv';
import { testEnv, withTestNamespace } from '@tally-ipam/testenv/vitest';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { METAL3_PROVIDE_KEY } from './apps.js';
import {
  apiServerEndpoint,
  createClusterOnSim,
  createMachineOnSim,
  eventually,
  machineSpec,
  runningApps,
} from './harness.js';

const IPAM_MAIN_JS = fileURLToPath(new URL('../../apps/ipam-controller/dist/main.js', import.meta.url));
/** The Metal3 controller of this file serves only what carries this label (the suite's IPAM controller serves the rest). */
const WATCH_FILTER = 'e2e-metal3';
const MACHINES = ['m3-0', 'm3-1', 'm3-2'];

/**
 * What CAPM3's data templates do, next to Sim: for each Machine of a Cluster, an IPClaim owned by the Machine on the
 * Cluster's Metal3 IPPool; the address, prefix and gateway read from the IPAddress; deleting the Cluster deletes the
 * Machines, the garbage collector the claims, and the controller releases every address, then the pool goes.
 * Served by a second IPAM controller process, started here with `--enable-metal3-ipam` (the suite's own runs
 * without it), or, where the suite's controller serves Metal3 (the kind lane), by that one; the Metal3 CRDs installed
 * here.
 */
describe('a Metal3-style consumer next to Sim', () => {
  it('gets an address per Sim Machine from the Cluster’s Metal3 IPPool and releases all of them with the Cluster', async () => {
    runningApps();
    const env = testEnv();
    await installCRDs(env.kubeConfig, [metal3CRDDirectory()]);
    const ns = await withTestNamespace(env.kubeConfig, 'e2e-metal3');
    const namespace = ns.name;
    const key = (name: string): { namespace: string; name: string } => ({ namespace, name });
    const client = new Client(env.kubeConfig, { fieldManager: 'tally-e2e-metal3' });
    onTestFinished(() => client.close());
    // Where the suite's IPAM controller serves Metal3's API already (the kind lane's Pods), it is the one under test: a
    // second controller serving the same pool would contend with it (that one serves every object, labelled or not).
    const servedBySuite = inject(METAL3_PROVIDE_KEY);
    const controller: WatchedProcess | undefined = servedBySuite
      ? undefined
      : startWatchedProcess({
          name: 'ipam-controller-metal3',
          command: process.execPath,
          args: (stateDir) => {
            const kubeconfig = join(stateDir, 'kubeconfig');
            copyFileSync(env.kubeconfigPath, kubeconfig);
            return [
              IPAM_MAIN_JS,
              `--kubeconfig=${kubeconfig}`,
              `--namespace=${namespace}`,
              `--watch-filter=${WATCH_FILTER}`,
              '--enable-metal3-ipam',
              '--metrics-bind-address=127.0.0.1:0',
              '--health-probe-bind-address=127.0.0.1:0',
              '--webhook-port=0',
            ];
          },
        });
    if (controller) onTestFinished(() => controller.stop());
    const hint = controller
      ? `the Metal3 IPAM controller's log: ${controller.logPath}`
      : "the suite's IPAM controller's log (on the kind lane, its Pods' logs in e2e/kind/logs/)";

    await createClusterOnSim(client, env, key('metal3'), { controlPlaneEndpoint: apiServerEndpoint(env) });
    await client.create(METAL3_POOL_RESOURCE, {
      apiVersion: 'ipam.metal3.io/v1alpha1',
      kind: 'IPPool',
      metadata: { name: 'provisioning', namespace, labels: { [WATCH_FILTER_LABEL]: WATCH_FILTER } },
      spec: {
        clusterName: 'metal3',
        namePrefix: 'provisioning',
        pools: [{ start: '10.90.0.10', end: '10.90.0.19', gateway: '10.90.0.1' }],
        prefix: 24,
      },
    });
    // The helper writes the bootstrap Secret with the first Machine; the others are written as it writes them.
    const [first = '', ...others] = MACHINES;
    await createMachineOnSim(client, key(first), 'metal3', {});
    for (const machine of others) {
      await client.create(SIM_MACHINE_RESOURCE, {
        apiVersion: SIM_V1ALPHA1_API_VERSION,
        kind: 'SimMachine',
        metadata: key(machine),
        spec: {},
      });
      await client.create(MACHINE_RESOURCE, {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Machine',
        metadata: key(machine),
        spec: machineSpec('metal3', 'SimMachine', machine),
      });
    }

    const rendered: { machine: string; address: string; prefix: number | undefined; gateway: unknown }[] = [];
    for (const machineName of MACHINES) {
      const machine = await eventually('the Machine', () => client.get(MACHINE_RESOURCE, key(machineName)), { hint });
      await client.create(METAL3_CLAIM_RESOURCE, {
        apiVersion: 'ipam.metal3.io/v1alpha1',
        kind: 'IPClaim',
        metadata: {
          name: `${machineName}-provisioning`,
          namespace,
          labels: { [WATCH_FILTER_LABEL]: WATCH_FILTER, 'cluster.x-k8s.io/cluster-name': 'metal3' },
          ownerReferences: [
            {
              apiVersion: 'cluster.x-k8s.io/v1beta2',
              kind: 'Machine',
              name: machineName,
              uid: machine.metadata.uid ?? '',
            },
          ],
        },
        spec: { pool: { name: 'provisioning' } },
      });
    }
    for (const machineName of MACHINES) {
      const address = await eventually(
        `the IPAddress of ${machineName}`,
        async () => {
          const claim = await client.get(METAL3_CLAIM_RESOURCE, key(`${machineName}-provisioning`));
          const name = claim.status?.address?.name;
          return name ? client.get(METAL3_ADDRESS_RESOURCE, key(name)) : undefined;
        },
        { hint },
      );
      const spec = address.spec as { address: string; prefix?: number; gateway?: string };
      rendered.push({ machine: machineName, address: spec.address, prefix: spec.prefix, gateway: spec.gateway });
    }
    expect(rendered.map((entry) => entry.address).sort()).toEqual(['10.90.0.10', '10.90.0.11', '10.90.0.12']);
    for (const entry of rendered) expect(entry).toMatchObject({ prefix: 24, gateway: '10.90.0.1' });
    // The pool joined the Cluster's owner chain (what clusterctl move follows).
    const cluster = await client.get(CLUSTER_RESOURCE, key('metal3'));
    const pool = await eventually(
      'the IPPool owned by its Cluster',
      async () => {
        const current = await client.get(METAL3_POOL_RESOURCE, key('provisioning'));
        return current.metadata.ownerReferences?.some((ref) => ref.uid === cluster.metadata.uid) ? current : undefined;
      },
      { hint },
    );
    expect(pool.metadata.finalizers).toEqual([METAL3_IP_POOL_FINALIZER]);

    await client.delete(CLUSTER_RESOURCE, key('metal3'));
    // What is left of the Cluster's tree: each kind's names (and each entry's address and claim), the pool's
    // finalizers and deletion mark. Empty lists and `pool: undefined` mean all gone.
    const left = async (): Promise<Record<string, unknown>> => {
      const names = async (
        resource: typeof MACHINE_RESOURCE | typeof METAL3_CLAIM_RESOURCE | typeof METAL3_ADDRESS_RESOURCE,
      ) => (await client.list(resource, { namespace })).items.map((item) => item.metadata.name);
      const entries = (await client.list(LEDGER_RESOURCE)).items.flatMap((ledger) =>
        (ledger.spec.entries ?? [])
          .filter((entry) => entry.claimRef.namespace === namespace)
          .map((entry) => `${ledger.metadata.name}: ${JSON.stringify(entry)}`),
      );
      let pool: unknown;
      try {
        const current = await client.get(METAL3_POOL_RESOURCE, key('provisioning'));
        pool = {
          finalizers: current.metadata.finalizers,
          deletionTimestamp: current.metadata.deletionTimestamp,
          ownerReferences: current.metadata.ownerReferences?.map((ref) => `${ref.kind}/${ref.name}`),
          status: current.status,
        };
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
      return {
        machines: await names(MACHINE_RESOURCE),
        claims: await names(METAL3_CLAIM_RESOURCE),
        addresses: await names(METAL3_ADDRESS_RESOURCE),
        entries,
        pool,
      };
    };
    await eventually(
      'Machines, IPClaims, IPAddresses, ledger entries and the IPPool gone with the Cluster',
      async () => {
        const now = await left();
        const lists = [now.machines, now.claims, now.addresses, now.entries] as unknown[][];
        return lists.every((list) => list.length === 0) && now.pool === undefined ? true : undefined;
      },
      { hint, describe: left },
    );
  });
});
