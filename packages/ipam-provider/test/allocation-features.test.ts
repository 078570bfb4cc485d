import type { Client } from '@tally-ipam/controller-kit';
import { addressEntryKey, type Holding, prefixEntryKey } from '@tally-ipam/ledger';
import type { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { CLAIM_RESOURCE, POOL_RESOURCES, REQUESTED_ADDRESS_ANNOTATION } from '../src/index.js';
import {
  createClaim,
  createPool,
  findHolding,
  getHolding,
  readyCondition,
  startProvider,
  useTestFile,
  waitFor,
  waitForAddress,
  waitForGone,
  waitForReason,
} from './support.js';

/** The entry of `key` kept as released (with `releasedAt`): written in the background once its claim is gone. */
async function waitForReleased(client: Client, key: string): Promise<Holding> {
  return waitFor(`the entry of ${key} kept as released`, async () => {
    const holding = await findHolding(client, key);
    return holding?.spec.releasedAt === undefined ? undefined : holding;
  });
}

const { client, namespace, running } = useTestFile({ provider: {} });
const globalPools: { kind: 'GlobalTallyIPPool' | 'GlobalTallyPrefixPool'; name: string }[] = [];

// Registered after useTestFile, so it runs before the provider stops: the provider releases the pools' finalizers.
afterAll(async () => {
  for (const pool of globalPools)
    await client.delete(POOL_RESOURCES[pool.kind], { name: pool.name }).catch(() => undefined);
});

/** The sum of a metric's values for one controller or queue (label `controller` or `name`) in a provider's registry. */
async function metricValues(registry: Registry, metric: string, owner: string): Promise<number> {
  const values = (await registry.getSingleMetric(metric)?.get())?.values ?? [];
  return values
    .filter((value) => value.labels.controller === owner || value.labels.name === owner)
    .reduce((sum, value) => sum + value.value, 0);
}

async function deleteClaim(ns: string, name: string): Promise<void> {
  await client.delete(CLAIM_RESOURCE, { namespace: ns, name });
  await waitForGone(`claim ${ns}/${name}`, () => client.get(CLAIM_RESOURCE, { namespace: ns, name }));
}

describe('allocation features', () => {
  it('IPv6: canonical addresses, gateway and subnet-router anycast skipped', async () => {
    const ns = await namespace('feat-v6');
    await createPool(client, 'TallyIPPool', 'v6', ns, {
      addresses: ['fd00:10::/120'],
      prefix: 64,
      gateway: 'fd00:10::1',
    });
    await createClaim(client, ns, 'a', { kind: 'TallyIPPool', name: 'v6' });
    const address = await waitForAddress(client, ns, 'a');
    expect(address.spec).toMatchObject({ address: 'fd00:10::2', prefix: 64, gateway: 'fd00:10::1' });
    expect((await getHolding(client, addressEntryKey('fd00:10::2'))).metadata.name).toBe('ip6-fd00-10--2');
  });

  it('Random hands out distinct addresses from the pool', async () => {
    const ns = await namespace('feat-random');
    await createPool(client, 'TallyIPPool', 'r', ns, {
      addresses: ['10.30.0.0/16'],
      prefix: 16,
      allocationStrategy: 'Random',
    });
    const names = ['a', 'b', 'c', 'd', 'e'];
    for (const name of names) await createClaim(client, ns, name, { kind: 'TallyIPPool', name: 'r' });
    const addresses = await Promise.all(names.map((name) => waitForAddress(client, ns, name)));
    const texts = addresses.map((address) => address.spec.address);
    expect(new Set(texts).size).toBe(names.length);
    for (const text of texts) expect(text.startsWith('10.30.')).toBe(true);
  });

  it('LeastRecentlyReleased reuses the address released longest ago, after never-used ones', async () => {
    const ns = await namespace('feat-lrr');
    await createPool(client, 'TallyIPPool', 'lrr', ns, {
      addresses: ['10.31.0.1-10.31.0.3'],
      prefix: 24,
      allocationStrategy: 'LeastRecentlyReleased',
    });
    for (const name of ['a', 'b']) {
      await createClaim(client, ns, name, { kind: 'TallyIPPool', name: 'lrr' });
      await waitForAddress(client, ns, name);
    }
    await deleteClaim(ns, 'b'); // .2 released first
    await deleteClaim(ns, 'a'); // then .1
    // Releases are written in the background, within a few seconds of the claims going (README, "Releases").
    await waitForReleased(client, addressEntryKey('10.31.0.2'));
    await waitForReleased(client, addressEntryKey('10.31.0.1'));
    await createClaim(client, ns, 'c', { kind: 'TallyIPPool', name: 'lrr' });
    expect((await waitForAddress(client, ns, 'c')).spec.address).toBe('10.31.0.3'); // never used
    await createClaim(client, ns, 'd', { kind: 'TallyIPPool', name: 'lrr' });
    expect((await waitForAddress(client, ns, 'd')).spec.address).toBe('10.31.0.2'); // released longest ago
    await createClaim(client, ns, 'e', { kind: 'TallyIPPool', name: 'lrr' });
    expect((await waitForAddress(client, ns, 'e')).spec.address).toBe('10.31.0.1');
  });

  it('keeps a released entry of a LeastRecentlyReleased pool while the pool spec does not build', async () => {
    const ns = await namespace('feat-lrr-invalid');
    await createPool(client, 'TallyIPPool', 'lrr', ns, {
      addresses: ['10.36.0.1-10.36.0.3'],
      prefix: 24,
      allocationStrategy: 'LeastRecentlyReleased',
    });
    await createClaim(client, ns, 'a', { kind: 'TallyIPPool', name: 'lrr' });
    expect((await waitForAddress(client, ns, 'a')).spec.address).toBe('10.36.0.1');
    await deleteClaim(ns, 'a');
    await waitForReleased(client, addressEntryKey('10.36.0.1'));
    // A reservation outside the pool's range: the CRD cannot see it, the pool state does not build.
    const invalid = { reservations: [{ claimName: 'elsewhere', address: '10.37.0.9' }] };
    await client.mergePatch(POOL_RESOURCES.TallyIPPool, { namespace: ns, name: 'lrr' }, { spec: invalid });
    await waitFor('the pool reported InvalidSpec', async () => {
      const read = await client.get(POOL_RESOURCES.TallyIPPool, { namespace: ns, name: 'lrr' });
      const conditions = (read.status as { conditions?: { type?: string; reason?: string }[] } | undefined)?.conditions;
      return conditions?.some((condition) => condition.type === 'Ready' && condition.reason === 'InvalidSpec');
    });
    // A provider started now looks at every entry once, this one included, while the pool is invalid.
    const second = await startProvider({ namespace: ns }, 'tally-ipam-lrr-invalid');
    try {
      await waitFor('the second provider to have looked at every entry once', async () => {
        const reconciles = await metricValues(
          second.registry,
          'controller_runtime_reconcile_total',
          'tally-ledger-collector',
        );
        const depth = await metricValues(second.registry, 'workqueue_depth', 'tally-ledger-collector');
        return reconciles >= 1 && depth === 0;
      });
    } finally {
      await second.stop();
    }
    expect((await getHolding(client, addressEntryKey('10.36.0.1'))).spec.releasedAt).toBeDefined();
    // The pool fixed, the release time still orders reuse: the never-used addresses go first.
    await client.mergePatch(
      POOL_RESOURCES.TallyIPPool,
      { namespace: ns, name: 'lrr' },
      { spec: { reservations: null } },
    );
    await createClaim(client, ns, 'b', { kind: 'TallyIPPool', name: 'lrr' });
    expect((await waitForAddress(client, ns, 'b')).spec.address).toBe('10.36.0.2');
  });

  it('a reuse grace period keeps a released address out of reach, then hands it out again', async () => {
    const ns = await namespace('feat-grace');
    // The release is written 1–3 s after the claim goes (batched with its block's other releases) carrying the time it
    // was decided, and the entry is dropped once the grace period from that time is over: the grace period must be
    // long enough for a poll to see the released entry on a loaded machine (with 3 s, CI once never saw it in 60 s).
    const graceSeconds = 10;
    await createPool(client, 'TallyIPPool', 'g', ns, {
      addresses: ['10.32.0.1-10.32.0.2'],
      prefix: 24,
      addressReuseGracePeriodSeconds: graceSeconds,
    });
    await createClaim(client, ns, 'a', { kind: 'TallyIPPool', name: 'g' });
    await waitForAddress(client, ns, 'a');
    await createClaim(client, ns, 'b', { kind: 'TallyIPPool', name: 'g' });
    await waitForAddress(client, ns, 'b');
    await deleteClaim(ns, 'a');
    const holding = await waitForReleased(client, addressEntryKey('10.32.0.1'));
    await createClaim(client, ns, 'c', { kind: 'TallyIPPool', name: 'g' });
    const waiting = await client.get(CLAIM_RESOURCE, { namespace: ns, name: 'c' });
    const condition = readyCondition(waiting);
    // Either still being looked at, or told to wait; never given the address inside the grace period.
    if (condition) expect(condition.reason).toBe('PoolExhausted');
    const c = await waitForAddress(client, ns, 'c');
    expect(c.spec.address).toBe('10.32.0.1');
    const retaken = await getHolding(client, addressEntryKey('10.32.0.1'));
    expect(retaken.spec.releasedAt).toBeUndefined();
    expect(Date.parse(retaken.metadata.creationTimestamp ?? '')).toBeGreaterThanOrEqual(
      Date.parse(holding.spec.releasedAt ?? '') + graceSeconds * 1_000 - 1_000,
    );
  });

  it('static reservations: the named claim gets its address, others never do', async () => {
    const ns = await namespace('feat-reservation');
    await createPool(client, 'TallyIPPool', 'res', ns, {
      addresses: ['10.33.0.10-10.33.0.12'],
      prefix: 24,
      reservations: [{ claimName: 'cp-0', address: '10.33.0.10' }],
    });
    await createClaim(client, ns, 'worker-0', { kind: 'TallyIPPool', name: 'res' });
    expect((await waitForAddress(client, ns, 'worker-0')).spec.address).toBe('10.33.0.11');
    await createClaim(client, ns, 'worker-1', { kind: 'TallyIPPool', name: 'res' });
    expect((await waitForAddress(client, ns, 'worker-1')).spec.address).toBe('10.33.0.12');
    await createClaim(client, ns, 'worker-2', { kind: 'TallyIPPool', name: 'res' });
    await waitForReason(client, ns, 'worker-2', 'PoolExhausted');
    await createClaim(client, ns, 'cp-0', { kind: 'TallyIPPool', name: 'res' });
    expect((await waitForAddress(client, ns, 'cp-0')).spec.address).toBe('10.33.0.10');
    // The reservation survives a release: cp-0 gets the same address back, the waiting worker does not get it.
    await deleteClaim(ns, 'cp-0');
    await createClaim(client, ns, 'cp-0', { kind: 'TallyIPPool', name: 'res' });
    expect((await waitForAddress(client, ns, 'cp-0')).spec.address).toBe('10.33.0.10');
    expect(readyCondition(await client.get(CLAIM_RESOURCE, { namespace: ns, name: 'worker-2' }))?.reason).toBe(
      'PoolExhausted',
    );
  });

  it('the requested-address annotation is honoured, and a clear AllocationFailed says why when it cannot be', async () => {
    const ns = await namespace('feat-requested');
    await createPool(client, 'TallyIPPool', 'req', ns, {
      addresses: ['10.34.0.0/24'],
      prefix: 24,
      gateway: '10.34.0.1',
    });
    await createClaim(
      client,
      ns,
      'want-50',
      { kind: 'TallyIPPool', name: 'req' },
      {
        annotations: { [REQUESTED_ADDRESS_ANNOTATION]: '10.34.0.50' },
      },
    );
    expect((await waitForAddress(client, ns, 'want-50')).spec.address).toBe('10.34.0.50');

    await createClaim(
      client,
      ns,
      'want-50-too',
      { kind: 'TallyIPPool', name: 'req' },
      {
        annotations: { [REQUESTED_ADDRESS_ANNOTATION]: '10.34.0.50' },
      },
    );
    const taken = await waitForReason(client, ns, 'want-50-too', 'AllocationFailed');
    expect(readyCondition(taken)?.message).toContain('10.34.0.50');
    expect(readyCondition(taken)?.message).toContain('already allocated');

    await createClaim(
      client,
      ns,
      'want-outside',
      { kind: 'TallyIPPool', name: 'req' },
      {
        annotations: { [REQUESTED_ADDRESS_ANNOTATION]: '192.168.1.1' },
      },
    );
    const outside = await waitForReason(client, ns, 'want-outside', 'AllocationFailed');
    expect(readyCondition(outside)?.message).toMatch(/requested address 192\.168\.1\.1 .* cannot be allocated/);

    await createClaim(
      client,
      ns,
      'want-gateway',
      { kind: 'TallyIPPool', name: 'req' },
      {
        annotations: { [REQUESTED_ADDRESS_ANNOTATION]: '10.34.0.1' },
      },
    );
    const gateway = await waitForReason(client, ns, 'want-gateway', 'AllocationFailed');
    expect(readyCondition(gateway)?.message).toContain('gateway');
  });

  it('prefix pools hand out the next free /allocationPrefixLength (IPv4 and IPv6)', async () => {
    const ns = await namespace('feat-prefix');
    await createPool(client, 'TallyPrefixPool', 'v4', ns, { prefixes: ['172.20.0.0/24'], allocationPrefixLength: 28 });
    await createPool(client, 'TallyPrefixPool', 'v6', ns, {
      prefixes: ['fd00:200::/48'],
      allocationPrefixLength: 64,
      gateway: 'fd00:200::1',
      excludedPrefixes: ['fd00:200::/64'],
    });
    await createClaim(client, ns, 'p4-a', { kind: 'TallyPrefixPool', name: 'v4' });
    await createClaim(client, ns, 'p4-b', { kind: 'TallyPrefixPool', name: 'v4' });
    await createClaim(client, ns, 'p6-a', { kind: 'TallyPrefixPool', name: 'v6' });
    const p4 = [await waitForAddress(client, ns, 'p4-a'), await waitForAddress(client, ns, 'p4-b')];
    expect(p4.map((a) => `${a.spec.address}/${a.spec.prefix}`).sort()).toEqual(['172.20.0.0/28', '172.20.0.16/28']);
    const p6 = await waitForAddress(client, ns, 'p6-a');
    expect(p6.spec).toMatchObject({ address: 'fd00:200:0:1::', prefix: 64, gateway: 'fd00:200::1' });
    const holding = await getHolding(client, prefixEntryKey('fd00:200:0:1::', 64));
    expect(holding.spec).toMatchObject({ address: 'fd00:200:0:1::', prefix: 64 });
    const pool = await waitFor('prefix pool counts', async () => {
      const current = await client.get(POOL_RESOURCES.TallyPrefixPool, { namespace: ns, name: 'v4' });
      const status = current.status as { prefixes?: { used: number } } | undefined;
      return status?.prefixes?.used === 2 ? current : undefined;
    });
    expect(pool.status).toMatchObject({ prefixes: { total: 16, used: 2, free: 14, outOfRange: 0 } });
  });

  it('a global pool serves claims of every namespace without handing out an address twice', async () => {
    const ns1 = await namespace('feat-global-a');
    const ns2 = await namespace('feat-global-b');
    const name = `global-${ns1.slice(-8)}`;
    globalPools.push({ kind: 'GlobalTallyIPPool', name });
    await createPool(client, 'GlobalTallyIPPool', name, undefined, { addresses: ['10.35.0.1-10.35.0.4'], prefix: 24 });
    await createClaim(client, ns1, 'a', { kind: 'GlobalTallyIPPool', name });
    await createClaim(client, ns2, 'a', { kind: 'GlobalTallyIPPool', name });
    const first = await waitForAddress(client, ns1, 'a');
    const second = await waitForAddress(client, ns2, 'a');
    expect(first.spec.address).not.toBe(second.spec.address);
    // allocatedAddresses reads the provider's IPAddress informer, which may not have the second IPAddress's create
    // event yet when its claim is already Ready.
    const seen = await waitFor('the provider to list both IPAddresses of the global pool', () => {
      const listed = running().provider.allocatedAddresses({ kind: 'GlobalTallyIPPool', name });
      return listed.length >= 2 ? listed : undefined;
    });
    expect(seen.map((a) => a.address).sort()).toEqual([first.spec.address, second.spec.address].sort());
  });
});
