/**
 * Pod-level chaos: a 2,000-claim burst into two overlapping Tally pools while the IPAM controller's leader Pod is
 * deleted. The other replica takes the Lease over and finishes; every claim is bound, no address is handed out twice,
 * and deleting everything leaves no IPAddress and no TallyAddressLedger entry. Prints the takeover time and the controller
 * containers' peak cgroup memory during the burst (figures, not assertions).
 */

import { setTimeout as delay } from 'node:timers/promises';
import { CoordinationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { ADDRESS_RESOURCE, CLAIM_RESOURCE } from '@tally-ipam/api-types';
import { Cache } from '@tally-ipam/controller-kit/cache';
import {
  Client,
  isAlreadyExists,
  isNotFound,
  KubeApiError,
  KubeRequestError,
  type ResourceKind,
} from '@tally-ipam/controller-kit/client';
import { POOL_RESOURCES } from '@tally-ipam/ipam-provider';
import { LEDGER_RESOURCE, type StoredLedger } from '@tally-ipam/ledger';
import { forEachLimited } from '@tally-ipam/testenv';
import { createTestNamespace, type TestNamespace, testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { CLUSTER_V1BETA2, eventually, logsHint, Objects, SIM_CLUSTER } from '../../test/harness.js';
import { awaitWebhooksAnswer } from '../../test/webhooks.js';
import {
  type ContainerCgroup,
  managerContainers,
  mebibytes,
  memoryUsageIfPresent,
  resetPeakMemory,
} from '../lane/memory.js';
import { LANE_CLUSTER_PROVIDE_KEY } from '../lane/provided.js';
import { awaitRollout } from '../lane/rollout.js';

const CLAIM_COUNT = 2_000;
/** The leader Pod is deleted once this many claims are bound: in the middle of the burst. */
const DELETE_LEADER_AT = 600;
const LEASE_NAME = 'tally-ipam-controller-leader-election';
const POOLS_UNDER_TEST = [
  { name: 'left', addresses: ['10.128.0.0-10.128.7.255'] },
  { name: 'right', addresses: ['10.128.4.0-10.128.11.255'] },
] as const;

// Plain objects: written and read without the provider's stored-object schemas.
const loose = ({ apiVersion, kind, plural, namespaced }: ResourceKind): ResourceKind => ({
  apiVersion,
  kind,
  plural,
  namespaced,
});
const CLAIMS = loose(CLAIM_RESOURCE);

/** Cluster API's webhook could not be called: its Pod is restarting (its liveness probe on a loaded machine). */
function isWebhookUnavailable(error: unknown): boolean {
  return error instanceof KubeApiError && error.statusCode === 500 && /failed calling webhook/.test(error.message);
}

/**
 * The test's own delete of a claim. Docker's port forwarding to the kind API server now and then drops a connection
 * during this burst (`socket hang up`: no HTTP answer at all), so such a delete is asked again, up to 5 times, and
 * NotFound on a repeat (the first one had landed) counts as done. Cluster API's claim webhook, whose Pod a loaded
 * machine restarts now and then, is waited for as a user's client would, for up to 5 minutes, as the creates are. Any
 * other answer with a status fails at once; what the controllers do is never retried.
 */
async function deleteClaim(client: Client, namespace: string, name: string): Promise<void> {
  const webhookDeadline = Date.now() + 300_000;
  for (let attempt = 1; ; attempt += 1) {
    try {
      await client.delete(CLAIMS, { namespace, name });
      return;
    } catch (error) {
      if (attempt > 1 && isNotFound(error)) return;
      const dropped = error instanceof KubeRequestError && attempt < 5;
      const waitForWebhook = isWebhookUnavailable(error) && Date.now() < webhookDeadline;
      if (!dropped && !waitForWebhook) throw error;
      await delay(1_000);
    }
  }
}
const ADDRESSES = loose(ADDRESS_RESOURCE);
const LEDGERS = loose(LEDGER_RESOURCE);
const POOLS = loose(POOL_RESOURCES.TallyIPPool);

function field(object: unknown, ...path: string[]): unknown {
  let value: unknown = object;
  for (const key of path) {
    value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  }
  return value;
}

/** The Pod name in a controller-kit leader identity (`<hostname>_<random>`; a Pod's hostname is its name). */
const podOfHolder = (holder: string | undefined): string | undefined => holder?.split('_')[0];

describe('Pod chaos: the leader Pod deleted during a 2,000-claim burst', () => {
  let namespace: TestNamespace | undefined;
  let stopWatching: (() => Promise<void>) | undefined;
  afterAll(async () => {
    await stopWatching?.();
    await namespace?.delete();
  });

  it('binds every claim to a distinct address after the takeover and releases every address and ledger entry', async () => {
    const env = testEnv();
    const lane = inject(LANE_CLUSTER_PROVIDE_KEY);
    const hint = logsHint(env);
    const client = new Client(env.kubeConfig, { fieldManager: 'tally-lane-chaos' });
    const leases = env.kubeConfig.makeApiClient(CoordinationV1Api);
    const core = env.kubeConfig.makeApiClient(CoreV1Api);
    namespace = await createTestNamespace(env.kubeConfig, 'lane-chaos');
    const ns = namespace.name;

    // A Cluster Cluster API took over, for the claims' clusterName (as ipam-controller.test.ts).
    const objects = new Objects(env.kubeConfig, ns);
    await objects.create(SIM_CLUSTER, {
      apiVersion: `${SIM_CLUSTER.group}/${SIM_CLUSTER.version}`,
      kind: 'SimCluster',
      metadata: { name: 'chaos' },
      spec: { controlPlaneEndpoint: { host: '192.0.2.10', port: 6443 } },
    });
    await objects.create(CLUSTER_V1BETA2, {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { name: 'chaos' },
      spec: { infrastructureRef: { apiGroup: SIM_CLUSTER.group, kind: 'SimCluster', name: 'chaos' } },
    });
    for (const pool of POOLS_UNDER_TEST) {
      await client.create(POOLS, {
        apiVersion: POOLS.apiVersion,
        kind: POOLS.kind,
        metadata: { name: pool.name, namespace: ns },
        spec: { addresses: [...pool.addresses], prefix: 16, allocationStrategy: 'Random' },
      });
    }

    const watching = new AbortController();
    const cache = new Cache({ kubeConfig: env.kubeConfig });
    const claimStore = cache.informerFor(CLAIMS, { namespace: ns }).store;
    const addressStore = cache.informerFor(ADDRESSES, { namespace: ns }).store;
    const ledgerStore = cache.informerFor(LEDGERS).store;
    /** Ledger entries held for this test's claims (ledgers are cluster-wide, one per address block). */
    const entriesOf = (ledgers: readonly unknown[]): number =>
      ledgers
        .flatMap((ledger) => (ledger as Pick<StoredLedger, 'spec'>).spec.entries ?? [])
        .filter((entry) => entry.claimRef.namespace === ns).length;
    const cacheRun = cache.start(watching.signal);
    stopWatching = async () => {
      watching.abort();
      await cacheRun;
    };
    const bound = (): number => claimStore.list().filter((o) => field(o, 'status', 'addressRef', 'name')).length;

    // Peak memory from here on, for every replica (and the Pod that replaces the deleted leader, from its start).
    const measured = new Map<string, ContainerCgroup>();
    for (const container of await managerContainers(env.kubeConfig, lane.ipam.namespace, lane.ipam.podSelector)) {
      await resetPeakMemory(container);
      measured.set(container.pod, container);
    }
    expect(measured.size).toBe(lane.ipamReplicas);

    const started = Date.now();
    let random = 1;
    let webhookUnavailable = 0;
    const names = Array.from({ length: CLAIM_COUNT }, (_, index) => `claim-${index}`);
    const creating = forEachLimited(names, 16, async (name) => {
      random = (random * 48_271) % 2_147_483_647;
      const pool = POOLS_UNDER_TEST[random % POOLS_UNDER_TEST.length] as (typeof POOLS_UNDER_TEST)[number];
      const body = {
        apiVersion: CLAIMS.apiVersion,
        kind: CLAIMS.kind,
        metadata: { name, namespace: ns, labels: { 'cluster.x-k8s.io/cluster-name': 'chaos' } },
        spec: {
          clusterName: 'chaos',
          poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: pool.name },
        },
      };
      // A claim passes Cluster API's webhook; a user's client retries a create its Pod could not answer (restarted by
      // its liveness probe on a loaded machine). Any other refusal fails the test.
      await eventually(
        `claim ${name} created`,
        async () => {
          try {
            await client.create(CLAIMS, body);
            return true;
          } catch (error) {
            if (isAlreadyExists(error)) return true;
            if (isWebhookUnavailable(error)) {
              webhookUnavailable += 1;
              return undefined;
            }
            throw error;
          }
        },
        { hint, timeoutMs: 300_000, intervalMs: 1_000 },
      );
    });

    await eventually(`${DELETE_LEADER_AT} claims bound`, async () => (bound() >= DELETE_LEADER_AT ? true : undefined), {
      hint,
      timeoutMs: 900_000,
      intervalMs: 100,
      describe: () => `${bound()} bound`,
    });
    const lease = await leases.readNamespacedLease({ namespace: lane.ipam.namespace, name: LEASE_NAME });
    const leader = podOfHolder(lease.spec?.holderIdentity);
    if (!leader || !measured.has(leader)) {
      throw new Error(
        `the Lease's holder ${lease.spec?.holderIdentity} is none of the replicas ${[...measured.keys()]}`,
      );
    }
    const boundAtDeletion = bound();
    const deleted = Date.now();
    await core.deleteNamespacedPod({ namespace: lane.ipam.namespace, name: leader });
    const newHolder = await eventually(
      'another replica to hold the Lease',
      async () => {
        const current = await leases.readNamespacedLease({ namespace: lane.ipam.namespace, name: LEASE_NAME });
        const holder = podOfHolder(current.spec?.holderIdentity);
        return holder && holder !== leader ? holder : undefined;
      },
      { hint, timeoutMs: 300_000, intervalMs: 100 },
    );
    const tookOver = Date.now();
    const boundAtTakeover = bound();
    await eventually('a claim bound after the takeover', async () => (bound() > boundAtTakeover ? true : undefined), {
      hint,
      timeoutMs: 300_000,
      intervalMs: 50,
      describe: () => `${bound()} bound`,
    });
    const firstBindAfter = Date.now();
    await creating;
    await eventually(`all ${CLAIM_COUNT} claims bound`, async () => (bound() === CLAIM_COUNT ? true : undefined), {
      hint,
      timeoutMs: 1_800_000,
      intervalMs: 500,
      describe: () => `${bound()} bound`,
    });
    const allBound = Date.now();

    // The replacement Pod, measured from its start (its cgroup is new).
    for (const container of await managerContainers(env.kubeConfig, lane.ipam.namespace, lane.ipam.podSelector)) {
      if (!measured.has(container.pod)) measured.set(container.pod, container);
    }
    const memory: string[] = [];
    for (const container of measured.values()) {
      if (container.pod === leader) continue; // Its cgroup went with it.
      const usage = await memoryUsageIfPresent(container);
      if (!usage) {
        // Restarted during the burst (the run's summary lists restarts and their reasons): no peak to give.
        memory.push(`${container.pod}: restarted since measured (its cgroup is gone)`);
        continue;
      }
      memory.push(
        `${container.pod}${container.pod === newHolder ? ' (new leader)' : ''}: peak ${mebibytes(usage.peak)}, now ${mebibytes(usage.usage)} (rss ${mebibytes(usage.rss)}), limit ${mebibytes(usage.limit)}`,
      );
    }

    const claims = (await client.listAll(CLAIMS, { namespace: ns })).items;
    const addresses = (await client.listAll(ADDRESSES, { namespace: ns })).items;
    const byName = new Map(addresses.map((object) => [object.metadata.name, object]));
    const unboundOrDangling = claims.filter((object) => {
      const name = field(object, 'status', 'addressRef', 'name');
      return typeof name !== 'string' || !byName.has(name);
    });
    expect(unboundOrDangling.map((object) => object.metadata.name)).toEqual([]);
    const texts = addresses.map((object) => String(field(object, 'spec', 'address')));
    expect(texts.filter((text, index) => texts.indexOf(text) !== index)).toEqual([]);
    expect(addresses).toHaveLength(CLAIM_COUNT);

    const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
    console.error(
      `[tally-lane] chaos: leader ${leader} deleted at ${boundAtDeletion}/${CLAIM_COUNT} bound, ` +
        `${seconds(deleted - started)} into the burst; Lease held by ${newHolder} ${seconds(tookOver - deleted)} later; ` +
        `first claim bound after the takeover ${seconds(firstBindAfter - tookOver)} after that ` +
        `(takeover, deletion → first bind: ${seconds(firstBindAfter - deleted)}); all ${CLAIM_COUNT} bound ` +
        `${seconds(allBound - started)} after the first create (${webhookUnavailable} creates retried while Cluster ` +
        `API's webhook was unavailable)\n[tally-lane] chaos memory: ${memory.join('; ')}`,
    );

    await forEachLimited(
      claims.map((object) => object.metadata.name),
      16,
      (name) => deleteClaim(client, ns, name),
    );
    await eventually(
      'every claim, IPAddress and ledger entry gone',
      async () => {
        const left = claimStore.list().length + addressStore.list().length + entriesOf(ledgerStore.list());
        return left === 0 ? true : undefined;
      },
      {
        hint,
        timeoutMs: 600_000,
        intervalMs: 1_000,
        describe: () => ({
          claims: claimStore.list().length,
          addresses: addressStore.list().length,
          entries: entriesOf(ledgerStore.list()),
        }),
      },
    );
    const left = {
      claims: (await client.listAll(CLAIMS, { namespace: ns })).items.length,
      addresses: (await client.listAll(ADDRESSES, { namespace: ns })).items.length,
      entries: entriesOf((await client.listAll(LEDGERS)).items),
    };
    expect(left).toEqual({ claims: 0, addresses: 0, entries: 0 });
    console.error(`[tally-lane] chaos: released everything ${seconds(Date.now() - allBound)} after the last bind`);

    // The lane as this file found it, for the files after it: the deleted leader's replacement (and any replica that
    // restarted during the burst) available, and the webhooks answering through their Service again.
    await awaitRollout(env.kubeConfig, lane.ipam.namespace, lane.ipam.deployment);
    await awaitWebhooksAnswer(env.kubeConfig, ['ipam']);
  });
});
