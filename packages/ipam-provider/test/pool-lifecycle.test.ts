import { describe, expect, it } from 'vitest';
import { CLAIM_RESOURCE, POOL_FINALIZER, POOL_RESOURCES, type StoredPool } from '../src/index.js';
import {
  createClaim,
  createPool,
  readyCondition,
  useTestFile,
  waitFor,
  waitForAddress,
  waitForGone,
  waitForReason,
} from './support.js';

const { client, namespace, running } = useTestFile({ provider: {} });

interface PoolStatusView {
  ipAddresses?: { total: number; used: number; free: number; outOfRange: number };
  conditions?: { type: string; status: string; reason: string; message: string; observedGeneration?: number }[];
  observedGeneration?: number;
}

function statusOf(pool: StoredPool): PoolStatusView {
  return (pool.status ?? {}) as PoolStatusView;
}

async function waitForPool(ns: string, name: string, test: (status: PoolStatusView, pool: StoredPool) => boolean) {
  return waitFor(`pool ${ns}/${name} status`, async () => {
    const pool = await client.get(POOL_RESOURCES.TallyIPPool, { namespace: ns, name });
    return test(statusOf(pool), pool) ? pool : undefined;
  });
}

describe('pools', () => {
  it('a pool with allocations is deleted only after its last address is released', async () => {
    const ns = await namespace('pool-delete');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.50.0.0/24'], prefix: 24 });
    await createClaim(client, ns, 'a', { kind: 'TallyIPPool', name: 'pool' });
    await waitForAddress(client, ns, 'a');
    await waitForPool(ns, 'pool', (_, pool) => pool.metadata.finalizers?.includes(POOL_FINALIZER) ?? false);

    await client.delete(POOL_RESOURCES.TallyIPPool, { namespace: ns, name: 'pool' });
    const deleting = await waitForPool(
      ns,
      'pool',
      (status) => status.conditions?.find((c) => c.type === 'Ready')?.reason === 'Deleting',
    );
    expect(deleting.metadata.deletionTimestamp).toBeDefined();
    expect(statusOf(deleting).conditions?.[0]?.message).toContain(`${ns}/a`);

    await createClaim(client, ns, 'b', { kind: 'TallyIPPool', name: 'pool' });
    const refused = await waitForReason(client, ns, 'b', 'PoolNotReady');
    expect(readyCondition(refused)?.message).toContain('being deleted');

    await client.delete(CLAIM_RESOURCE, { namespace: ns, name: 'a' });
    await waitForGone('pool', () => client.get(POOL_RESOURCES.TallyIPPool, { namespace: ns, name: 'pool' }));
  });

  it('an unusable spec makes the pool InvalidSpec and its claims PoolNotReady; fixing it allocates', async () => {
    const ns = await namespace('pool-invalid');
    await createPool(client, 'TallyIPPool', 'pool', ns, {
      addresses: ['10.51.0.10-10.51.0.20'],
      prefix: 24,
      reservations: [{ claimName: 'cp', address: '10.51.0.99' }],
    });
    const invalid = await waitForPool(
      ns,
      'pool',
      (status) => status.conditions?.find((c) => c.type === 'Ready')?.reason === 'InvalidSpec',
    );
    expect(statusOf(invalid).conditions?.[0]?.message).toContain('10.51.0.99');
    await createClaim(client, ns, 'a', { kind: 'TallyIPPool', name: 'pool' });
    const claim = await waitForReason(client, ns, 'a', 'PoolNotReady');
    expect(readyCondition(claim)?.message).toMatch(/invalid spec.*spec\.reservations\[0\].*10\.51\.0\.99/);

    await client.mergePatch(
      POOL_RESOURCES.TallyIPPool,
      { namespace: ns, name: 'pool' },
      {
        spec: { reservations: [{ claimName: 'cp', address: '10.51.0.20' }] },
      },
    );
    expect((await waitForAddress(client, ns, 'a')).spec.address).toBe('10.51.0.10');
    await waitForPool(
      ns,
      'pool',
      (status) => status.conditions?.find((c) => c.type === 'Ready')?.reason === 'PoolReady',
    );
  });

  it('status counts follow spec changes: shrinking counts out-of-range addresses, growing frees waiting claims', async () => {
    const ns = await namespace('pool-resize');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.52.0.1-10.52.0.2'], prefix: 24 });
    for (const name of ['a', 'b']) {
      await createClaim(client, ns, name, { kind: 'TallyIPPool', name: 'pool' });
      await waitForAddress(client, ns, name);
    }
    await createClaim(client, ns, 'c', { kind: 'TallyIPPool', name: 'pool' });
    await waitForReason(client, ns, 'c', 'PoolExhausted');

    // Grow: the waiting claim gets one of the new addresses.
    await client.mergePatch(
      POOL_RESOURCES.TallyIPPool,
      { namespace: ns, name: 'pool' },
      {
        spec: { addresses: ['10.52.0.1-10.52.0.4'] },
      },
    );
    expect((await waitForAddress(client, ns, 'c')).spec.address).toBe('10.52.0.3');

    // Shrink below an allocated address: it is counted out of range and keeps its IPAddress.
    const patched = await client.mergePatch(
      POOL_RESOURCES.TallyIPPool,
      { namespace: ns, name: 'pool' },
      {
        spec: { addresses: ['10.52.0.2-10.52.0.4'] },
      },
    );
    const pool = await waitForPool(
      ns,
      'pool',
      (status) => status.observedGeneration === patched.metadata.generation && status.ipAddresses?.outOfRange === 1,
    );
    expect(statusOf(pool).ipAddresses).toEqual({ total: 3, used: 3, free: 1, outOfRange: 1 });
    expect(statusOf(pool).conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'True',
      observedGeneration: patched.metadata.generation,
      message: expect.stringContaining('outside the current spec'),
    });
    const metrics = await running().registry.getSingleMetricAsString('tally_ipam_pool_addresses');
    expect(metrics).toContain(
      `tally_ipam_pool_addresses{kind="TallyIPPool",namespace="${ns}",name="pool",state="free"} 1`,
    );
  });
});
