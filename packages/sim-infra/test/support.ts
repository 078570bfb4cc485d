import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { CLUSTER_NAME_LABEL, IPAM_GROUP, TALLY_IP_POOL_KIND, TALLY_V1ALPHA1_API_VERSION } from '@tally-ipam/api-types';
import type { Condition } from '@tally-ipam/controller-kit/capi';
import { Client, type ResourceKind } from '@tally-ipam/controller-kit/client';
import { createLogger, type LogLevel, Manager } from '@tally-ipam/controller-kit/manager';
import { setupIPAMProvider } from '@tally-ipam/ipam-provider';
import { waitFor } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import {
  CLUSTER_RESOURCE,
  MACHINE_RESOURCE,
  type NetworkDevice,
  SECRET_RESOURCE,
  SIM_GROUP,
  SIM_MACHINE_KIND,
  SIM_MACHINE_RESOURCE,
  type SimMachine,
  type StoredCluster,
  type StoredMachine,
  setupSimInfraProvider,
} from '../src/index.js';

/** Log level of the in-process providers (`SIM_TEST_LOG_LEVEL=debug` to watch them work). */
const LOG_LEVEL = (process.env.SIM_TEST_LOG_LEVEL ?? 'error') as LogLevel;
const POLL_MS = 200;

export const TALLY_POOL_RESOURCE: ResourceKind = {
  apiVersion: TALLY_V1ALPHA1_API_VERSION,
  kind: TALLY_IP_POOL_KIND,
  plural: 'tallyippools',
  namespaced: true,
};

/** A short random suffix: Nodes are cluster-scoped, so machine names must differ across test namespaces. */
export function unique(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString('hex')}`;
}

/** Tally's IPAM provider and the Sim provider, each on its own kit Manager, as two controller processes would run. */
export interface RunningProviders {
  readonly client: Client;
  stop(): Promise<void>;
}

export async function startProviders(kubeConfig: KubeConfig = testEnv().kubeConfig): Promise<RunningProviders> {
  const controller = new AbortController();
  const ipam = new Manager({
    kubeConfig,
    name: 'tally-ipam-test',
    logger: createLogger({ name: 'tally-ipam', level: LOG_LEVEL }),
  });
  setupIPAMProvider(ipam);
  const sim = new Manager({
    kubeConfig,
    name: 'sim-infra-test',
    logger: createLogger({ name: 'sim-infra', level: LOG_LEVEL }),
  });
  setupSimInfraProvider(sim);
  const running = [ipam.start(controller.signal), sim.start(controller.signal)];
  const client = new Client(kubeConfig, { fieldManager: 'sim-infra-tests' });
  return {
    client,
    async stop() {
      controller.abort();
      await Promise.all(running);
      client.close();
    },
  };
}

/**
 * testenv's `waitFor` with this suite's interval: polls `probe` until it returns a value. The deadline is testenv's
 * default, a bound for a hang (no wait here is a speed); a wait that can legitimately take longer names its own.
 * `describe` is printed on timeout: the state that tells why the condition was not met.
 */
export function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  options: { readonly timeoutMs?: number; readonly describe?: () => unknown } = {},
): Promise<T> {
  return waitFor(what, probe, { ...options, intervalMs: POLL_MS });
}

export function conditionOf(
  object: { status?: { conditions?: readonly Condition[] | undefined } | undefined },
  type: string,
): Condition | undefined {
  return object.status?.conditions?.find((condition) => condition.type === type);
}

/** A TallyIPPool (the in-process IPAM provider serves it). */
export async function createPool(
  client: Client,
  namespace: string,
  name: string,
  spec: { addresses: string[]; prefix: number; gateway?: string },
): Promise<{ apiGroup: string; kind: string; name: string }> {
  await client.create(TALLY_POOL_RESOURCE, {
    apiVersion: TALLY_V1ALPHA1_API_VERSION,
    kind: TALLY_IP_POOL_KIND,
    metadata: { name, namespace },
    spec,
  });
  return { apiGroup: IPAM_GROUP, kind: TALLY_IP_POOL_KIND, name };
}

/**
 * A v1beta2 Cluster the way the CAPI Cluster controller leaves it for infrastructure providers: with
 * `status.initialization.infrastructureProvisioned` when asked (CAPI's own envtests patch it the same way), plus the
 * `<cluster>-kubeconfig` Secret pointing back at the test API server — the simulated workload cluster.
 */
export async function createCluster(
  client: Client,
  namespace: string,
  name: string,
  options: { infrastructureProvisioned?: boolean; paused?: boolean; kubeconfig?: boolean } = {},
): Promise<StoredCluster> {
  let cluster = await client.create(CLUSTER_RESOURCE, {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Cluster',
    metadata: { name, namespace },
    spec: {
      infrastructureRef: { apiGroup: SIM_GROUP, kind: 'SimCluster', name },
      ...(options.paused ? { paused: true } : {}),
    },
  });
  if (options.infrastructureProvisioned) {
    cluster = await client.mergePatch(
      CLUSTER_RESOURCE,
      { namespace, name },
      { status: { initialization: { infrastructureProvisioned: true } } },
      { subresource: 'status' },
    );
  }
  if (options.kubeconfig ?? true) {
    const kubeconfigYaml = await readFile(testEnv().kubeconfigPath, 'utf8');
    await client.create(SECRET_RESOURCE, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${name}-kubeconfig`, namespace, labels: { [CLUSTER_NAME_LABEL]: name } },
      type: 'cluster.x-k8s.io/secret',
      data: { value: Buffer.from(kubeconfigYaml).toString('base64') },
    });
  }
  return cluster;
}

export async function createBootstrapSecret(client: Client, namespace: string, name: string): Promise<void> {
  await client.create(SECRET_RESOURCE, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace },
    type: 'cluster.x-k8s.io/secret',
    data: {
      value: Buffer.from('#cloud-config\n').toString('base64'),
      format: Buffer.from('cloud-config').toString('base64'),
    },
  });
}

export interface MachinePair {
  readonly machine: StoredMachine;
  readonly simMachine: SimMachine;
}

/**
 * A Machine and its SimMachine, linked as CAPI's Machine controller links them: `Machine.spec.infrastructureRef`
 * names the SimMachine, the SimMachine gets a controller owner reference to the Machine and the cluster-name label.
 */
export async function createMachine(
  client: Client,
  namespace: string,
  options: {
    name: string;
    clusterName: string;
    dataSecretName?: string | undefined;
    failureDomain?: string;
    version?: string;
    devices: NetworkDevice[];
  },
): Promise<MachinePair> {
  const machine = await client.create(MACHINE_RESOURCE, {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: { name: options.name, namespace, labels: { [CLUSTER_NAME_LABEL]: options.clusterName } },
    spec: {
      clusterName: options.clusterName,
      bootstrap: options.dataSecretName ? { dataSecretName: options.dataSecretName } : {},
      infrastructureRef: { apiGroup: SIM_GROUP, kind: SIM_MACHINE_KIND, name: options.name },
      ...(options.failureDomain ? { failureDomain: options.failureDomain } : {}),
      ...(options.version ? { version: options.version } : {}),
    },
  });
  const simMachine = await client.create(SIM_MACHINE_RESOURCE, {
    apiVersion: `${SIM_GROUP}/v1alpha1`,
    kind: SIM_MACHINE_KIND,
    metadata: {
      name: options.name,
      namespace,
      labels: { [CLUSTER_NAME_LABEL]: options.clusterName },
      ownerReferences: [
        {
          apiVersion: 'cluster.x-k8s.io/v1beta2',
          kind: 'Machine',
          name: machine.metadata.name,
          uid: machine.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { network: { devices: options.devices } },
  });
  return { machine, simMachine };
}
