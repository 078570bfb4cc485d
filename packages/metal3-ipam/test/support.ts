import {
  type AddressLedgerEntry,
  METAL3_IP_CLAIM_KIND,
  METAL3_IP_POOL_KIND,
  METAL3_IPAM_V1ALPHA1_API_VERSION,
} from '@tally-ipam/api-types';
import { AssumedObjects } from '@tally-ipam/controller-kit/cache';
import { Client } from '@tally-ipam/controller-kit/client';
import { Manager } from '@tally-ipam/controller-kit/manager';
import { type IPAMProviderOptions, setupIPAMProvider } from '@tally-ipam/ipam-provider';
import { AddressLedgers, type Holding, LEDGER_RESOURCE, LedgerEntryView } from '@tally-ipam/ledger';
import {
  createTestNamespace,
  type TestNamespace,
  waitFor as testenvWaitFor,
  type WaitOptions,
} from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll } from 'vitest';
import {
  METAL3_ADDRESS_RESOURCE,
  METAL3_CLAIM_RESOURCE,
  METAL3_POOL_RESOURCE,
  type Metal3IPAMOptions,
  type StoredMetal3Address,
  type StoredMetal3Claim,
  type StoredMetal3Pool,
  setupMetal3IPAM,
} from '../src/index.js';

/** testenv's `waitFor` with 60 s: the package's files run in parallel against one control plane. */
export function waitFor<T>(
  description: string,
  attempt: () => Promise<T | undefined | false> | T | undefined | false,
  options: WaitOptions = {},
): Promise<T> {
  return testenvWaitFor(description, attempt, { timeoutMs: 60_000, ...options });
}

export function testClient(): Client {
  return new Client(testEnv().kubeConfig, { fieldManager: 'metal3-ipam-tests' });
}

/** The namespaces a test file creates, deleted together at its end. */
export class TestNamespaces {
  private readonly created: TestNamespace[] = [];

  async create(prefix: string): Promise<string> {
    const created = await createTestNamespace(testEnv().kubeConfig, prefix);
    this.created.push(created);
    return created.name;
  }

  async deleteAll(): Promise<void> {
    for (const namespace of this.created.splice(0)) await namespace.delete();
  }
}

/** What a test file shares: one client, the processes it started and the namespaces it made. */
export interface Metal3TestFile {
  /** The file's client, made before its first test. */
  readonly client: Client;
  readonly namespaces: TestNamespaces;
  /** Processes to stop after the file's tests. */
  readonly running: RunningMetal3[];
}

/** Registers the file's beforeAll/afterAll: the client made first; processes stopped, namespaces deleted at the end. */
export function useMetal3TestFile(): Metal3TestFile {
  let client: Client | undefined;
  const file: Metal3TestFile = {
    get client(): Client {
      if (!client) throw new Error('the test file has not started: use the client inside tests and hooks only');
      return client;
    },
    namespaces: new TestNamespaces(),
    running: [],
  };
  beforeAll(() => {
    client = testClient();
  });
  afterAll(async () => {
    for (const process of file.running.splice(0)) await process.stop();
    await file.namespaces.deleteAll();
    client?.close();
  });
  return file;
}

/** A process serving the Metal3 API (and, with `tally`, Tally's own claims) on a Manager of its own. */
export interface RunningMetal3 {
  readonly manager: Manager;
  readonly ledgers: AddressLedgers;
  /** The process's overlay of its own ledger writes over the entry view (the provider's, with `tally`). */
  readonly assumedEntries: AssumedObjects<Holding>;
  /** Holds of the process's ledger writer answered "held by another claim" so far (both APIs, with `tally`). */
  readonly refusedHolds: () => number;
  /**
   * Of those, the holds of an entry this process had itself won (and not released since) a full turn of the event
   * loop before the hold was submitted: a choice that did not read the process's own acknowledged write.
   */
  readonly refusedAfterOwnWin: () => number;
  stop(): Promise<void>;
}

export async function startMetal3(
  options: Partial<Omit<Metal3IPAMOptions, 'ledgers' | 'ledgerEntries'>> & {
    readonly tally?: IPAMProviderOptions | undefined;
    readonly name?: string | undefined;
  } = {},
): Promise<RunningMetal3> {
  const { tally, name, ...metal3 } = options;
  const manager = new Manager({
    kubeConfig: testEnv().kubeConfig,
    name: name ?? 'metal3-ipam-test',
    registry: new Registry(),
    logger: pino({ level: process.env.TALLY_TEST_LOG ?? 'silent' }),
    gracefulShutdownTimeoutMs: 20_000,
  });
  // As the IPAM controller composes them: with Tally's provider, its writer, entry view and migration gate; alone, a
  // writer and a view of the Metal3 controllers' own on the manager's ledger informer.
  const provider = tally ? setupIPAMProvider(manager, tally) : undefined;
  const ledgerInformer = manager.cache.informerFor(LEDGER_RESOURCE);
  const ledgers =
    provider?.ledgers ?? new AddressLedgers({ client: manager.client, store: ledgerInformer.store, now: Date.now });
  const ledgerEntries = provider?.ledgerEntries ?? new LedgerEntryView(ledgerInformer);
  const assumedEntries = provider?.assumedEntries ?? new AssumedObjects(ledgerEntries);
  // Every hold and release goes through `submit` (AddressLedgers.hold too): count the refused holds. An entry won is
  // noted a macrotask after its answer, once the microtasks of the winning reconcile (which assume it) have run.
  let refused = 0;
  let refusedAfterOwnWin = 0;
  const won = new Set<string>();
  const submit = ledgers.submit.bind(ledgers);
  ledgers.submit = async (...args) => {
    const operation = args[1];
    const key = operation.kind === 'hold' ? operation.entry.key : operation.kind === 'release' ? operation.key : '';
    if (operation.kind === 'release') won.delete(key);
    const wonBefore = operation.kind === 'hold' && won.has(key);
    const result = await submit(...args);
    if (operation.kind === 'hold' && !result.ok) {
      refused += 1;
      if (wonBefore) refusedAfterOwnWin += 1;
    }
    if (operation.kind === 'hold' && result.ok) setImmediate(() => won.add(key));
    return result;
  };
  const served = setupMetal3IPAM(manager, {
    ledgers,
    ledgerEntries,
    assumedEntries,
    ...metal3,
  });
  provider?.addAllocationBarrier(() => served.addressesAdopted());
  const abort = new AbortController();
  const running = manager.start(abort.signal);
  running.catch(() => undefined);
  await manager.elected;
  return {
    manager,
    ledgers,
    assumedEntries,
    refusedHolds: () => refused,
    refusedAfterOwnWin: () => refusedAfterOwnWin,
    stop: async () => {
      abort.abort();
      await running;
    },
  };
}

export async function createPool(
  client: Client,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): Promise<StoredMetal3Pool> {
  return client.create(METAL3_POOL_RESOURCE, {
    apiVersion: METAL3_IPAM_V1ALPHA1_API_VERSION,
    kind: METAL3_IP_POOL_KIND,
    metadata: { name, namespace, ...metadata },
    spec,
  });
}

export async function createClaim(
  client: Client,
  namespace: string,
  name: string,
  pool: string,
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string>; finalizers?: string[] } = {},
): Promise<StoredMetal3Claim> {
  return client.create(METAL3_CLAIM_RESOURCE, {
    apiVersion: METAL3_IPAM_V1ALPHA1_API_VERSION,
    kind: METAL3_IP_CLAIM_KIND,
    metadata: { name, namespace, ...metadata },
    spec: { pool: { name: pool } },
  });
}

/** Waits for the claim's `status.address` and returns the IPAddress it names. */
export async function waitForAddress(client: Client, namespace: string, name: string): Promise<StoredMetal3Address> {
  return waitFor(`IPAddress of IPClaim ${namespace}/${name}`, async () => {
    const claim = await client.get(METAL3_CLAIM_RESOURCE, { namespace, name });
    const reference = claim.status?.address?.name;
    if (!reference) return undefined;
    return client.get(METAL3_ADDRESS_RESOURCE, { namespace, name: reference });
  });
}

/** Waits until the claim's `status.errorMessage` contains `text`; returns the message. */
export async function waitForError(client: Client, namespace: string, name: string, text: string): Promise<string> {
  return waitFor(`errorMessage containing "${text}" on IPClaim ${namespace}/${name}`, async () => {
    const claim = await client.get(METAL3_CLAIM_RESOURCE, { namespace, name });
    const message = claim.status?.errorMessage;
    return message?.includes(text) ? message : undefined;
  });
}

/** Every entry of every ledger, as the API server has them now. */
export async function ledgerEntries(client: Client): Promise<AddressLedgerEntry[]> {
  const ledgers = await client.list(LEDGER_RESOURCE);
  return ledgers.items.flatMap((ledger) => ledger.spec.entries ?? []);
}

export async function addressesOf(client: Client, namespace: string): Promise<StoredMetal3Address[]> {
  return (await client.list(METAL3_ADDRESS_RESOURCE, { namespace })).items;
}
