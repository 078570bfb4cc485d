import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { metal3CRDDirectory, TALLY_GROUP, TALLY_V1ALPHA1_API_VERSION, WATCH_FILTER_LABEL } from '@tally-ipam/api-types';
import { Client, Manager } from '@tally-ipam/controller-kit';
import {
  CLAIM_RESOURCE,
  NAMESPACE_RESOURCE,
  POOL_RESOURCES,
  type StoredClaim,
  setupIPAMProvider,
} from '@tally-ipam/ipam-provider';
import { setupMetal3IPAM } from '@tally-ipam/metal3-ipam';
import { createTestNamespace, installCRDs, type TestNamespace, waitFor } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll } from 'vitest';

/** The plugin as kubectl runs it: the built bin, with the words after `kubectl tally`. */
export const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

const DAY_MS = 24 * 3600_000;

/** Each file serves only its own claims: its provider filters on this label value. */
export const FILE_WATCH_FILTER = `kubectl-tally-${randomBytes(4).toString('hex')}`;

export interface CliRun {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `kubectl-tally <args>` against the test control plane, its kubeconfig named by --kubeconfig, KUBECONFIG or not at all. */
export function runCli(
  args: readonly string[],
  options: { kubeconfig?: 'flag' | 'env' | 'none' } = {},
): Promise<CliRun> {
  const how = options.kubeconfig ?? 'flag';
  const withConfig = how === 'flag' ? [...args, '--kubeconfig', testEnv().kubeconfigPath] : [...args];
  // KUBECONFIG is set only when the test means it: the plugin must not find the developer's own cluster.
  const env = { ...process.env, KUBECONFIG: how === 'env' ? testEnv().kubeconfigPath : '', HOME: '/nonexistent' };
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...withConfig], { encoding: 'utf8', env }, (error, stdout, stderr) => {
      const status = error && typeof error.code === 'number' ? error.code : error ? -1 : 0;
      resolve({ status, stdout, stderr });
    });
  });
}

/** What a test file shares: a client, an IPAM provider serving its claims, and namespaces deleted after the file. */
export interface PluginTestFile {
  readonly client: Client;
  /** A fresh namespace named `<prefix>-<random>`, or exactly `prefix` with `exact` (the guide's examples). */
  namespace(prefix: string, exact?: boolean): Promise<string>;
}

/**
 * Starts Tally's IPAM provider for the file (in-process, on its own Manager) and stops it after. Orphaned ledger
 * entries are kept for a day: the tests plant one for `leaks` to find, and the provider's garbage collector would
 * otherwise remove it after a minute. With `metal3`, the file installs the ipam.metal3.io CRDs and Tally serves that
 * API too, as the IPAM controller composes them (one writer and entry view of the ledgers for both).
 */
export function usePluginTestFile(options: { metal3?: boolean } = {}): PluginTestFile {
  const client = new Client(testEnv().kubeConfig, { fieldManager: 'kubectl-tally-tests' });
  const namespaces: TestNamespace[] = [];
  const abort = new AbortController();
  let running: Promise<void> | undefined;
  beforeAll(async () => {
    const manager = new Manager({
      kubeConfig: testEnv().kubeConfig,
      name: 'tally-ipam',
      registry: new Registry(),
      logger: pino({ level: process.env.TALLY_TEST_LOG ?? 'silent' }),
      gracefulShutdownTimeoutMs: 20_000,
    });
    const provider = setupIPAMProvider(manager, { watchFilter: FILE_WATCH_FILTER, orphanEntrySafetyAgeMs: DAY_MS });
    if (options.metal3) {
      await installCRDs(testEnv().kubeConfig, [metal3CRDDirectory()]);
      const metal3 = setupMetal3IPAM(manager, {
        ledgers: provider.ledgers,
        ledgerEntries: provider.ledgerEntries,
        assumedEntries: provider.assumedEntries,
        watchFilter: FILE_WATCH_FILTER,
        orphanSafetyAgeMs: DAY_MS,
      });
      provider.addAllocationBarrier(() => metal3.addressesAdopted());
    }
    running = manager.start(abort.signal);
    running.catch(() => undefined);
    await manager.elected;
  });
  afterAll(async () => {
    abort.abort();
    await running;
    for (const namespace of namespaces.splice(0)) await namespace.delete();
    client.close();
  });
  return {
    client,
    namespace: async (prefix, exact = false) => {
      if (exact) {
        await client.create(NAMESPACE_RESOURCE, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: prefix } });
        namespaces.push({ name: prefix, delete: () => client.delete(NAMESPACE_RESOURCE, { name: prefix }) });
        return prefix;
      }
      const created = await createTestNamespace(testEnv().kubeConfig, prefix);
      namespaces.push(created);
      return created.name;
    },
  };
}

/** A TallyIPPool handing out `addresses` (a range or CIDR) with `prefix` and no gateway. */
export async function createIPPool(
  client: Client,
  namespace: string,
  name: string,
  addresses: string[],
  prefix = 24,
): Promise<void> {
  await client.create(POOL_RESOURCES.TallyIPPool, {
    apiVersion: TALLY_V1ALPHA1_API_VERSION,
    kind: 'TallyIPPool',
    metadata: { name, namespace },
    spec: { addresses, prefix },
  });
}

/** An IPAddressClaim of the file's provider, naming a TallyIPPool; `metadata` adds owners and labels. */
export async function createClaim(
  client: Client,
  namespace: string,
  name: string,
  pool: string,
  metadata: { ownerReferences?: unknown[]; labels?: Record<string, string> } = {},
): Promise<StoredClaim> {
  return client.create(CLAIM_RESOURCE, {
    apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
    kind: 'IPAddressClaim',
    metadata: {
      name,
      namespace,
      ...(metadata.ownerReferences ? { ownerReferences: metadata.ownerReferences } : {}),
      labels: { ...metadata.labels, [WATCH_FILTER_LABEL]: FILE_WATCH_FILTER },
    },
    spec: { poolRef: { apiGroup: TALLY_GROUP, kind: 'TallyIPPool', name: pool } },
  });
}

/** Waits until the claim's Ready condition has `reason` and returns the claim. */
export function waitForReason(client: Client, namespace: string, name: string, reason: string): Promise<StoredClaim> {
  return waitFor(`claim ${namespace}/${name} to be Ready with reason ${reason}`, async () => {
    const claim = await client.get(CLAIM_RESOURCE, { namespace, name });
    const ready = claim.status?.conditions?.find((condition) => condition.type === 'Ready');
    return ready?.reason === reason ? claim : undefined;
  });
}
