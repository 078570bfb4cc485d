import { randomBytes } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { TALLY_GROUP, TALLY_V1ALPHA1_API_VERSION, WATCH_FILTER_LABEL } from '@tally-ipam/api-types';
import { Client, isNotFound, Manager, type ObjectOf, type ResourceKind } from '@tally-ipam/controller-kit';
import { AddressLedgers, type Holding, holdingOfEntry, LEDGER_RESOURCE, ledgerNameOf } from '@tally-ipam/ledger';
import { createTestNamespace, type TestNamespace, waitFor } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll } from 'vitest';
import { heldUnitOfKey } from '../src/holds.js';
import {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  CLUSTER_RESOURCE,
  type IPAMProvider,
  type IPAMProviderOptions,
  POOL_RESOURCES,
  type PoolRef,
  type StoredAddress,
  type StoredClaim,
  type StoredPool,
  setupIPAMProvider,
} from '../src/index.js';
import { tallyPoolReference } from '../src/pool-ref.js';

/**
 * testenv's `waitFor`, with its default deadline: a bound for a hang. The suite's files run in parallel, each with its
 * own providers, against one shared control plane, which is what makes a shorter deadline one a busy machine reaches.
 * A wait whose work grows with a count (a burst, an adoption of many claims) names its own deadline, derived from it.
 */
export { waitFor } from '@tally-ipam/testenv';

/**
 * Test files share one control plane and run in parallel, each with its own providers. Each file labels its claims
 * with its own watch-filter value and its providers filter on it, so a file's claims are served only by the providers
 * that file started (unless a test passes another filter).
 */
export const FILE_WATCH_FILTER = `file-${randomBytes(4).toString('hex')}`;

/** A provider running in-process on its own kit Manager against the test control plane. */
export interface RunningProvider {
  readonly manager: Manager;
  readonly provider: IPAMProvider;
  readonly registry: Registry;
  stop(): Promise<void>;
}

export async function startProvider(
  options: IPAMProviderOptions = {},
  name = 'tally-ipam-test',
  kubeConfig: KubeConfig = testEnv().kubeConfig,
): Promise<RunningProvider> {
  const registry = new Registry();
  const manager = new Manager({
    kubeConfig,
    name,
    registry,
    logger: pino({ level: process.env.TALLY_TEST_LOG ?? 'silent' }),
    gracefulShutdownTimeoutMs: 20_000,
  });
  const provider = setupIPAMProvider(manager, { watchFilter: FILE_WATCH_FILTER, ...options });
  const abort = new AbortController();
  const running = manager.start(abort.signal);
  running.catch(() => undefined);
  await manager.elected;
  return {
    manager,
    provider,
    registry,
    stop: async () => {
      abort.abort();
      await running;
    },
  };
}

/**
 * Waits until the provider's own cache shows the object `key` (`namespace/name`, or `name` when cluster-scoped) of
 * `resource` as `seen` wants it. The provider reads Clusters and pools from its informers, one watch per resource and
 * in no set order with its claim watch: a test that changes one object (pauses a Cluster or a pool) and then acts on
 * another (creates or deletes a claim) waits here first, or the claim may be reconciled against the older object.
 * `scope` is the one the provider's informer has (its `namespace` option), so that the existing informer is read.
 */
export async function waitForProviderToSee<R extends ResourceKind>(
  running: RunningProvider,
  resource: R,
  key: string,
  seen: (object: ObjectOf<R>) => boolean,
  scope: { namespace?: string } = {},
): Promise<void> {
  const informer = running.manager.cache.informerFor(resource, scope);
  await waitFor(`the provider's cache to show ${resource.kind} ${key} as the test wrote it`, () => {
    const object = informer.store.get(key);
    return object !== undefined && seen(object);
  });
}

export function testClient(kubeConfig: KubeConfig = testEnv().kubeConfig): Client {
  return new Client(kubeConfig, { fieldManager: 'tally-ipam-tests' });
}

export async function newNamespace(
  prefix: string,
  kubeConfig: KubeConfig = testEnv().kubeConfig,
): Promise<TestNamespace> {
  return createTestNamespace(kubeConfig, prefix);
}

/** The namespaces a test file creates, deleted together when the file is done (call `deleteAll` in `afterAll`). */
export class TestNamespaces {
  private readonly created: TestNamespace[] = [];

  /** A fresh namespace named after `prefix`; returns its name. */
  async create(prefix: string): Promise<string> {
    const created = await newNamespace(prefix);
    this.created.push(created);
    return created.name;
  }

  async deleteAll(): Promise<void> {
    for (const namespace of this.created.splice(0)) await namespace.delete();
  }
}

/** What a test file shares: one client, the namespaces it creates and, if asked for, one provider started for it. */
export interface TestFile {
  /** The file's client, closed after the file. */
  readonly client: Client;
  /** A fresh namespace named after `prefix`, deleted after the file; returns its name. */
  namespace(prefix: string): Promise<string>;
  /** The provider started for the whole file (only when `useTestFile` was given `provider`). */
  running(): RunningProvider;
}

/**
 * Registers a test file's `beforeAll` / `afterAll`: starts the file's provider when `setup.provider` is given, and
 * after the file stops it, deletes the namespaces the file created and closes the client.
 */
export function useTestFile(setup: { provider?: IPAMProviderOptions; providerName?: string } = {}): TestFile {
  const client = testClient();
  const namespaces = new TestNamespaces();
  let running: RunningProvider | undefined;
  const providerOptions = setup.provider;
  if (providerOptions) {
    beforeAll(async () => {
      running = await startProvider(providerOptions, setup.providerName);
    });
  }
  afterAll(async () => {
    await running?.stop();
    await namespaces.deleteAll();
    client.close();
  });
  return {
    client,
    namespace: (prefix) => namespaces.create(prefix),
    running: () => {
      if (!running) throw new Error('this test file started no provider: pass `provider` to useTestFile');
      return running;
    },
  };
}

export type PoolKind = keyof typeof POOL_RESOURCES;

export async function createPool(
  client: Client,
  kind: PoolKind,
  name: string,
  namespace: string | undefined,
  spec: Record<string, unknown>,
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): Promise<StoredPool> {
  return client.create(POOL_RESOURCES[kind], {
    apiVersion: TALLY_V1ALPHA1_API_VERSION,
    kind,
    metadata: { name, ...(namespace ? { namespace } : {}), ...metadata },
    spec,
  });
}

export async function createCluster(client: Client, namespace: string, name: string, paused = false): Promise<void> {
  await client.create(CLUSTER_RESOURCE, {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Cluster',
    metadata: { name, namespace },
    spec: { paused },
  });
}

export async function createClaim(
  client: Client,
  namespace: string,
  name: string,
  pool: { kind: PoolKind; name: string },
  options: { clusterName?: string; annotations?: Record<string, string>; labels?: Record<string, string> } = {},
): Promise<StoredClaim> {
  return client.create(CLAIM_RESOURCE, {
    apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
    kind: 'IPAddressClaim',
    metadata: {
      name,
      namespace,
      ...(options.annotations ? { annotations: options.annotations } : {}),
      labels: { [WATCH_FILTER_LABEL]: FILE_WATCH_FILTER, ...options.labels },
    },
    spec: {
      ...(options.clusterName ? { clusterName: options.clusterName } : {}),
      poolRef: { apiGroup: TALLY_GROUP, kind: pool.kind, name: pool.name },
    },
  });
}

export async function getOrUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

export function readyCondition(
  claim: StoredClaim,
): { status: string; reason: string; message: string; observedGeneration?: number | undefined } | undefined {
  return claim.status?.conditions?.find((condition) => condition.type === 'Ready');
}

/**
 * Waits for the claim's IPAddress (status.addressRef set and Ready=True) and returns it; by default within testenv's
 * deadline for a hang, or `timeoutMs` for a wait that must outlast something (an API server restart).
 */
export async function waitForAddress(
  client: Client,
  namespace: string,
  name: string,
  timeoutMs?: number,
): Promise<StoredAddress> {
  return waitFor(
    `IPAddress for claim ${namespace}/${name}`,
    async () => {
      const claim = await client.get(CLAIM_RESOURCE, { namespace, name });
      if (!claim.status?.addressRef?.name || readyCondition(claim)?.status !== 'True') return undefined;
      return client.get(ADDRESS_RESOURCE, { namespace, name: claim.status.addressRef.name });
    },
    timeoutMs === undefined ? {} : { timeoutMs },
  );
}

/** Waits until the claim's Ready condition has this reason, and returns the claim. */
export async function waitForReason(
  client: Client,
  namespace: string,
  name: string,
  reason: string,
): Promise<StoredClaim> {
  return waitFor(`claim ${namespace}/${name} Ready reason ${reason}`, async () => {
    const claim = await client.get(CLAIM_RESOURCE, { namespace, name });
    return readyCondition(claim)?.reason === reason ? claim : undefined;
  });
}

export async function waitForGone(description: string, read: () => Promise<unknown>): Promise<void> {
  await waitFor(description, async () => (await getOrUndefined(read)) === undefined);
}

/**
 * The holding of an address (its entry key) as the API server has it now: the entry of its
 * TallyAddressLedger, seen as a holding (`holdingOfEntry`); undefined when no entry holds it.
 */
export async function findHolding(client: Client, key: string): Promise<Holding | undefined> {
  const unit = heldUnitOfKey(key);
  if (!unit) throw new Error(`"${key}" names no address`);
  const ledger = await getOrUndefined(() => client.get(LEDGER_RESOURCE, { name: ledgerNameOf(unit) }));
  const entry = ledger?.spec.entries?.find((candidate) => candidate.key === key);
  return ledger && entry ? holdingOfEntry(entry, ledger) : undefined;
}

/** `findHolding`, failing when no entry holds the key. */
export async function getHolding(client: Client, key: string): Promise<Holding> {
  const holding = await findHolding(client, key);
  if (!holding) throw new Error(`no TallyAddressLedger entry holds ${key}`);
  return holding;
}

export async function waitForNoHolding(description: string, client: Client, key: string): Promise<void> {
  await waitFor(description, async () => (await findHolding(client, key)) === undefined);
}

/** Every ledger entry in the cluster (as a holding) whose claim lives in `namespace`. */
export async function holdingsOfNamespace(client: Client, namespace: string): Promise<Holding[]> {
  const ledgers = (await client.listAll(LEDGER_RESOURCE)).items;
  return ledgers.flatMap((ledger) =>
    (ledger.spec.entries ?? [])
      .filter((entry) => entry.claimRef.namespace === namespace)
      .map((entry) => holdingOfEntry(entry, ledger)),
  );
}

/**
 * Holds an address for a claim as another replica (or a crashed reconcile) would have: through a ledger writer of
 * its own. Returns the holding, or throws when another claim holds the address.
 */
export async function holdAsAnotherWriter(
  client: Client,
  key: string,
  pool: PoolRef,
  holder: { namespace: string; name: string; uid: string },
): Promise<Holding> {
  const unit = heldUnitOfKey(key);
  if (!unit) throw new Error(`"${key}" names no address`);
  const result = await new AddressLedgers({ client, now: Date.now }).hold(unit, tallyPoolReference(pool), holder, 0);
  if (!result.ok)
    throw new Error(`${key} is held by ${result.holder.claimRef.namespace}/${result.holder.claimRef.name}`);
  return getHolding(client, key);
}

/** Removes the holding of a key whatever holds it (an entry deleted behind the provider's back). */
export async function dropHolding(client: Client, key: string): Promise<void> {
  const unit = heldUnitOfKey(key);
  if (!unit) throw new Error(`"${key}" names no address`);
  const writer = new AddressLedgers({ client, now: Date.now });
  const entry = await writer.liveEntry(ledgerNameOf(unit), key);
  if (entry) await writer.submit(ledgerNameOf(unit), { kind: 'drop', observed: entry });
}

// Bursts of creates and deletes as a client would send them: testenv's, re-exported for the files that import support.
export { forEachLimited } from '@tally-ipam/testenv';
