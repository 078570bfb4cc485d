import {
  GLOBAL_IN_CLUSTER_IP_POOL_KIND,
  IN_CLUSTER_IP_POOL_KIND,
  IN_CLUSTER_IPAM_GROUP,
  IN_CLUSTER_PROTECT_ADDRESS_FINALIZER,
  IN_CLUSTER_RELEASE_ADDRESS_FINALIZER,
  IN_CLUSTER_V1ALPHA2_API_VERSION,
} from '@tally-ipam/api-types';
import { Client, type KubeObject } from '@tally-ipam/controller-kit';
import { POOL_RESOURCES } from '@tally-ipam/ipam-provider';
import { createTestNamespace, type TestNamespace, testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ensureReferenceProvider,
  type ReferenceProcess,
  type ReferenceProviderBinary,
  startReferenceProvider,
} from '../bench/reference-provider.js';
import { type ControllerProcess, servingPort, startController } from './controller-process.js';
import {
  ADDRESSES,
  CLAIMS,
  CLUSTERS,
  cluster,
  eventually,
  field,
  IPAM_API_VERSION,
  ipPool,
  LEDGERS,
  POOLS,
} from './support.js';

/**
 * Issue 37's take-over, run for real: the reference provider v1.1.0 (its binary, built by the prepare stage) serves an
 * InClusterIPPool and a GlobalInClusterIPPool, stops as `clusterctl delete` without `--include-crd` stops it, Tally's
 * built app takes over with `--enable-in-cluster-ipam`, and then the way back. One API server throughout; the CRDs are
 * the ones the global setup installed (api-types' `inClusterCRDDirectory()`), never replaced, so what this does not
 * cover is clusterctl itself (delete/init) and the CRD swap of the hand-over's step 3.
 */

const LOCAL_POOLS = POOL_RESOURCES[IN_CLUSTER_IP_POOL_KIND];
const GLOBAL_POOLS = POOL_RESOURCES[GLOBAL_IN_CLUSTER_IP_POOL_KIND];
const CLUSTER_NAME = 'workload';
const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';

/** An IPv4 range `first-last` within one /24, as the reference lists its addresses: ascending. */
interface PoolUnderTest {
  readonly kind: typeof IN_CLUSTER_IP_POOL_KIND | typeof GLOBAL_IN_CLUSTER_IP_POOL_KIND;
  readonly name: string;
  /** The claims' name prefix: the claims of one pool are told apart by it. */
  readonly claimPrefix: string;
  readonly base: string;
  readonly first: number;
  readonly last: number;
}

interface Held {
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly address: string;
  readonly finalizers: readonly string[];
  readonly ownerReferences: unknown;
}

interface LedgerEntry {
  readonly address: string;
  readonly claimRef: { readonly namespace: string; readonly name: string; readonly uid?: string };
  readonly releasedAt?: string;
}

function rangeOf(pool: PoolUnderTest): string[] {
  const addresses: string[] = [];
  for (let octet = pool.first; octet <= pool.last; octet += 1) addresses.push(`${pool.base}.${octet}`);
  return addresses;
}

/** The reference's order (LowestFree): the first `count` addresses of the range that no IPAddress holds. */
function lowestFree(pool: PoolUnderTest, held: ReadonlySet<string>, count: number): string[] {
  return rangeOf(pool)
    .filter((address) => !held.has(address))
    .slice(0, count);
}

function sorted(addresses: Iterable<string>): string[] {
  return [...addresses].sort((a, b) => Number(a.split('.')[3]) - Number(b.split('.')[3]));
}

function heldOf(object: KubeObject): Held {
  return {
    name: object.metadata.name,
    uid: String(object.metadata.uid),
    resourceVersion: String(object.metadata.resourceVersion),
    address: String(field(object, 'spec', 'address')),
    finalizers: object.metadata.finalizers ?? [],
    ownerReferences: object.metadata.ownerReferences,
  };
}

describe('taking over from the reference in-cluster provider, and the way back', () => {
  let binary: ReferenceProviderBinary;
  let namespace: TestNamespace;
  let client: Client;
  let kubeconfigPath = '';
  let reference: ReferenceProcess | undefined;
  let tally: ControllerProcess | undefined;
  let local: PoolUnderTest;
  let global: PoolUnderTest;
  /** Every IPAddress the reference wrote in step 1, by claim name. */
  const byReference = new Map<string, Held>();
  /** Every IPAddress Tally wrote in step 3, by claim name. */
  const byTally = new Map<string, Held>();

  const ns = (): string => namespace.name;

  const startReference = async (): Promise<ReferenceProcess> => {
    const started = startReferenceProvider({ binary: binary.path, kubeconfigPath, namespace: ns() });
    reference = started;
    await started.synced;
    return started;
  };

  const createClaim = async (pool: PoolUnderTest, name: string): Promise<void> => {
    // As Cluster API's machine controllers write them: the Cluster by spec.clusterName and by the label.
    await client.create(CLAIMS, {
      apiVersion: IPAM_API_VERSION,
      kind: 'IPAddressClaim',
      metadata: { name, namespace: ns(), labels: { [CLUSTER_NAME_LABEL]: CLUSTER_NAME } },
      spec: {
        clusterName: CLUSTER_NAME,
        poolRef: { apiGroup: IN_CLUSTER_IPAM_GROUP, kind: pool.kind, name: pool.name },
      },
    });
  };

  /** Waits until the claim points at its IPAddress, and returns the IPAddress. */
  const boundAddress = async (name: string): Promise<KubeObject> =>
    eventually(`claim ${name} bound`, async () => {
      const object = await client.get(CLAIMS, { namespace: ns(), name });
      const addressName = field(object, 'status', 'addressRef', 'name');
      if (typeof addressName !== 'string' || addressName === '') throw new Error('no addressRef yet');
      return client.get(ADDRESSES, { namespace: ns(), name: addressName });
    });

  const addressesOf = async (pool: PoolUnderTest): Promise<KubeObject[]> =>
    (await client.list(ADDRESSES, { namespace: ns() })).items.filter(
      (object) =>
        field(object, 'spec', 'poolRef', 'kind') === pool.kind &&
        field(object, 'spec', 'poolRef', 'name') === pool.name,
    );

  const heldAddresses = async (pool: PoolUnderTest): Promise<Set<string>> =>
    new Set((await addressesOf(pool)).map((object) => String(field(object, 'spec', 'address'))));

  /** Deletes claims and waits until they and their IPAddresses are gone: released by whoever runs. */
  const deleteClaims = async (names: readonly string[]): Promise<void> => {
    for (const name of names) await client.delete(CLAIMS, { namespace: ns(), name });
    await eventually(`${names.join(', ')} and their IPAddresses gone`, async () => {
      const [claims, addresses] = await Promise.all([
        client.list(CLAIMS, { namespace: ns() }),
        client.list(ADDRESSES, { namespace: ns() }),
      ]);
      const left = [...claims.items, ...addresses.items]
        .map((object) => object.metadata.name)
        .filter((name) => names.includes(name));
      if (left.length > 0) throw new Error(`still there: ${left.join(', ')}`);
    });
  };

  const ledgerEntries = async (): Promise<LedgerEntry[]> =>
    (await client.listAll(LEDGERS)).items
      .flatMap((ledger) => (field(ledger, 'spec', 'entries') as LedgerEntry[] | undefined) ?? [])
      .filter((entry) => entry.claimRef.namespace === ns());

  const poolStatus = async (pool: PoolUnderTest): Promise<unknown> => {
    const object =
      pool.kind === IN_CLUSTER_IP_POOL_KIND
        ? await client.get(LOCAL_POOLS, { namespace: ns(), name: pool.name })
        : await client.get(GLOBAL_POOLS, { name: pool.name });
    return field(object, 'status', 'ipAddresses');
  };

  beforeAll(async () => {
    binary = await ensureReferenceProvider({ onProgress: (line) => console.log(`reference provider: ${line}`) });
    const env = testEnv();
    kubeconfigPath = env.kubeconfigPath;
    client = new Client(env.kubeConfig, { fieldManager: 'in-cluster-takeover-test' });
    namespace = await createTestNamespace(env.kubeConfig, 'takeover');
    local = {
      kind: IN_CLUSTER_IP_POOL_KIND,
      name: 'nodes',
      claimPrefix: 'node',
      base: '10.230.0',
      first: 10,
      last: 40,
    };
    // Cluster-scoped: the namespace's name keeps it apart from another run's on the same API server.
    global = {
      kind: GLOBAL_IN_CLUSTER_IP_POOL_KIND,
      name: `takeover-${ns()}`,
      claimPrefix: 'vip',
      base: '10.231.0',
      first: 10,
      last: 40,
    };
    await client.create(CLUSTERS, cluster(ns(), CLUSTER_NAME));
    const spec = (pool: PoolUnderTest) => ({
      addresses: [`${pool.base}.${pool.first}-${pool.base}.${pool.last}`],
      prefix: 24,
      gateway: `${pool.base}.1`,
    });
    await client.create(LOCAL_POOLS, {
      apiVersion: IN_CLUSTER_V1ALPHA2_API_VERSION,
      kind: IN_CLUSTER_IP_POOL_KIND,
      metadata: { name: local.name, namespace: ns() },
      spec: spec(local),
    });
    await client.create(GLOBAL_POOLS, {
      apiVersion: IN_CLUSTER_V1ALPHA2_API_VERSION,
      kind: GLOBAL_IN_CLUSTER_IP_POOL_KIND,
      metadata: { name: global.name },
      spec: spec(global),
    });
  });

  afterAll(async () => {
    if (tally && tally.child.exitCode === null) await tally.stop('SIGKILL');
    await reference?.stop();
    // Only reached with objects left when a step failed: nobody runs to remove the finalizers then.
    await client?.delete(GLOBAL_POOLS, { name: global?.name ?? '' }).catch(() => {});
    await namespace?.delete();
  });

  it('1. the reference binds 6 claims of each pool, lowest addresses first', async () => {
    await startReference();
    for (const pool of [local, global]) {
      for (let index = 0; index < 6; index += 1) await createClaim(pool, `${pool.claimPrefix}-${index}`);
    }
    for (const pool of [local, global]) {
      for (let index = 0; index < 6; index += 1) {
        const address = await boundAddress(`${pool.claimPrefix}-${index}`);
        byReference.set(address.metadata.name, heldOf(address));
      }
      const addresses = [...byReference.values()].filter((held) => held.name.startsWith(`${pool.claimPrefix}-`));
      expect(sorted(addresses.map((held) => held.address))).toEqual(rangeOf(pool).slice(0, 6));
    }
    for (const held of byReference.values()) expect(held.finalizers).toEqual([IN_CLUSTER_PROTECT_ADDRESS_FINALIZER]);

    // A hole below the highest held address, freed by the reference itself: Tally must fill it first.
    await deleteClaims(['node-2', 'vip-2']);
    byReference.delete('node-2');
    byReference.delete('vip-2');
  });

  it('2. with the reference stopped and Tally not started, new claims wait', async () => {
    await reference?.stop();
    reference = undefined;
    await createClaim(local, 'node-waiting');
    await createClaim(global, 'vip-waiting');
    // Neither controller runs, so nothing can have answered them; this is the state Tally starts from.
    const names = (await client.list(ADDRESSES, { namespace: ns() })).items.map((object) => object.metadata.name);
    expect(names).not.toContain('node-waiting');
    expect(names).not.toContain('vip-waiting');
    const waiting = await client.get(CLAIMS, { namespace: ns(), name: 'node-waiting' });
    expect(field(waiting, 'status', 'addressRef')).toBeUndefined();
  });

  it('3. Tally takes over: held addresses untouched, new claims get the lowest free ones, counts match', async () => {
    tally = startController([
      '--kubeconfig',
      kubeconfigPath,
      '--namespace',
      ns(),
      '--enable-in-cluster-ipam',
      '--metrics-bind-address=127.0.0.1:0',
      '--health-probe-bind-address=127.0.0.1:0',
      '--webhook-port=0',
    ]);
    await servingPort(tally, 'metrics');

    for (const pool of [local, global]) {
      const held = new Set(
        [...byReference.values()].filter((h) => h.name.startsWith(`${pool.claimPrefix}-`)).map((h) => h.address),
      );
      const waiting = await boundAddress(`${pool.claimPrefix}-waiting`);
      byTally.set(waiting.metadata.name, heldOf(waiting));
      for (let index = 6; index < 9; index += 1) await createClaim(pool, `${pool.claimPrefix}-${index}`);
      for (let index = 6; index < 9; index += 1) {
        const address = await boundAddress(`${pool.claimPrefix}-${index}`);
        byTally.set(address.metadata.name, heldOf(address));
      }
      const given = [...byTally.values()]
        .filter((h) => h.name.startsWith(`${pool.claimPrefix}-`))
        .map((h) => h.address);
      // The hole the reference left (.12) first, then above its highest (.16, .17, .18): LowestFree around held ones.
      expect(sorted(given)).toEqual(lowestFree(pool, held, 4));
      for (const address of given) expect(held.has(address)).toBe(false);
    }
    for (const written of byTally.values()) {
      expect(written.finalizers).toEqual([IN_CLUSTER_PROTECT_ADDRESS_FINALIZER]);
      // The reference's shape: the claim as controller, the pool with blockOwnerDeletion (row 22).
      const claimObject = await client.get(CLAIMS, { namespace: ns(), name: written.name });
      expect(claimObject.metadata.finalizers).toEqual([IN_CLUSTER_RELEASE_ADDRESS_FINALIZER]);
    }

    // Every IPAddress the reference wrote is exactly as it was: adopted without a write (uid, resourceVersion too).
    for (const before of byReference.values()) {
      const now = await client.get(ADDRESSES, { namespace: ns(), name: before.name });
      expect(heldOf(now)).toEqual(before);
      const claimObject = await client.get(CLAIMS, { namespace: ns(), name: before.name });
      expect(claimObject.metadata.finalizers).toEqual([IN_CLUSTER_RELEASE_ADDRESS_FINALIZER]);
    }
    // The adopted ones are in Tally's ledgers for their claims: the uniqueness guarantee covers them.
    const entries = await ledgerEntries();
    for (const before of byReference.values()) {
      expect(entries.filter((entry) => entry.releasedAt === undefined && entry.claimRef.name === before.name)).toEqual([
        expect.objectContaining({ address: before.address }),
      ]);
    }

    // 31 addresses in each range, 9 IPAddresses: the reference's counts.
    for (const pool of [local, global]) {
      await eventually(`${pool.kind} status counts`, async () => {
        expect(await poolStatus(pool)).toEqual({ total: 31, used: 9, free: 22, outOfRange: 0 });
      });
    }
  });

  it('3b. Tally releases deleted claims, reference-bound and its own, and reuses their addresses', async () => {
    const released = [byReference.get('node-0'), byTally.get('node-6')].map((held) => held?.address ?? '');
    await deleteClaims(['node-0', 'node-6']);
    byReference.delete('node-0');
    byTally.delete('node-6');
    // The ledger releases finish after the claim's finalizer is off (batched, about a second): waited for.
    await eventually('the ledger entries of node-0 and node-6 released', async () => {
      const entries = await ledgerEntries();
      expect(
        entries.filter((entry) => entry.releasedAt === undefined && ['node-0', 'node-6'].includes(entry.claimRef.name)),
      ).toEqual([]);
    });
    const held = await heldAddresses(local);
    for (const address of released) expect(held.has(address)).toBe(false);

    await createClaim(local, 'node-9');
    const reused = await boundAddress('node-9');
    byTally.set('node-9', heldOf(reused));
    expect(field(reused, 'spec', 'address')).toBe(lowestFree(local, held, 1)[0]);
    expect(released).toContain(field(reused, 'spec', 'address'));
    await eventually('InClusterIPPool status counts after the releases', async () => {
      expect(await poolStatus(local)).toEqual({ total: 31, used: 8, free: 23, outOfRange: 0 });
    });
  });

  it('3c. an overlapping TallyIPPool never hands out an address the in-cluster pool holds', async () => {
    // The same first 11 addresses as the InClusterIPPool, 8 of which its IPAddresses hold.
    await client.create(POOLS, ipPool(ns(), 'overlap', { addresses: ['10.230.0.10-10.230.0.20'], prefix: 24 }));
    await client.create(CLAIMS, {
      apiVersion: IPAM_API_VERSION,
      kind: 'IPAddressClaim',
      metadata: { name: 'overlap-0', namespace: ns() },
      spec: { poolRef: { apiGroup: IN_CLUSTER_IPAM_GROUP, kind: 'TallyIPPool', name: 'overlap' } },
    });
    const address = String(field(await boundAddress('overlap-0'), 'spec', 'address'));
    const held = await heldAddresses(local);
    expect(held.has(address)).toBe(false);
    expect(rangeOf(local)).toContain(address);
    // Gone before the way back: the reference knows nothing of TallyIPPools and would hand this address out again.
    await deleteClaims(['overlap-0']);
    await eventually('the ledger entry of overlap-0 released', async () => {
      const entries = await ledgerEntries();
      expect(entries.filter((entry) => entry.releasedAt === undefined && entry.claimRef.name === 'overlap-0')).toEqual(
        [],
      );
    });
  });

  it('4. the way back: the reference serves a new claim with a free address and releases a claim Tally bound', async () => {
    expect(await tally?.stop('SIGTERM')).toBe(0);
    tally = undefined;
    await startReference();

    const held = await heldAddresses(local);
    const tallyHeld = [...byTally.values()].filter((h) => h.name.startsWith('node-')).map((h) => h.address);
    for (const address of tallyHeld) expect(held.has(address)).toBe(true);
    await createClaim(local, 'node-back');
    const back = await boundAddress('node-back');
    const address = String(field(back, 'spec', 'address'));
    expect(address).toBe(lowestFree(local, held, 1)[0]);
    expect(held.has(address)).toBe(false);
    expect(back.metadata.finalizers).toEqual([IN_CLUSTER_PROTECT_ADDRESS_FINALIZER]);

    // Tally wrote node-waiting's IPAddress and put the finalizers on; the reference finishes its release.
    await deleteClaims(['node-waiting', 'vip-waiting']);
    const after = await heldAddresses(local);
    expect(after.has(byTally.get('node-waiting')?.address ?? '')).toBe(false);
    await eventually('InClusterIPPool status counted by the reference', async () => {
      // 8 held before, node-back added, node-waiting released.
      expect(await poolStatus(local)).toEqual({ total: 31, used: 8, free: 23, outOfRange: 0 });
    });
  });

  it('5. everything is released at the end; Tally’s ledger keeps only entries of claims the reference released', async () => {
    const tallyReleasedByReference = new Set(
      (await ledgerEntries()).filter((entry) => entry.releasedAt === undefined).map((entry) => entry.claimRef.name),
    );
    const claims = (await client.list(CLAIMS, { namespace: ns() })).items.map((object) => object.metadata.name);
    await deleteClaims(claims);
    await client.delete(LOCAL_POOLS, { namespace: ns(), name: local.name });
    await client.delete(GLOBAL_POOLS, { name: global.name });
    await eventually('both pools gone (the reference removes ProtectPool)', async () => {
      const localLeft = (await client.list(LOCAL_POOLS, { namespace: ns() })).items.length;
      const globalLeft = (await client.list(GLOBAL_POOLS)).items.filter((p) => p.metadata.name === global.name).length;
      if (localLeft + globalLeft > 0) throw new Error('pools still there');
    });
    expect((await client.list(ADDRESSES, { namespace: ns() })).items).toEqual([]);
    await reference?.stop();
    reference = undefined;

    // Tally is not running, so the entries of the claims it held when it stopped stay unreleased: the ledger's orphan
    // rule drops them (their claims are gone) the next time a Tally runs. Nothing else is left.
    const left = (await ledgerEntries()).filter((entry) => entry.releasedAt === undefined);
    // The claims Tally held when it stopped: the reference's it adopted and its own (node-back is the reference's).
    const expected = [...byReference.keys(), ...byTally.keys()];
    expect(new Set(left.map((entry) => entry.claimRef.name))).toEqual(new Set(expected));
    expect(tallyReleasedByReference).toEqual(new Set(expected));
    console.log(`take-over: ${left.length} ledger entries of deleted claims left for the orphan rule`);
  });
});
