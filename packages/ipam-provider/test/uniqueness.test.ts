import { WATCH_FILTER_LABEL } from '@tally-ipam/api-types';
import { addressEntryKey } from '@tally-ipam/ledger';
import { describe, expect, it } from 'vitest';
import { ADDRESS_RESOURCE, CLAIM_RESOURCE, POOL_RESOURCES, type StoredAddress } from '../src/index.js';
import {
  createClaim,
  createPool,
  dropHolding,
  getHolding,
  holdAsAnotherWriter,
  holdingsOfNamespace,
  readyCondition,
  startProvider,
  useTestFile,
  waitFor,
  waitForAddress,
} from './support.js';

const { client, namespace } = useTestFile();

async function addressesOf(ns: string): Promise<StoredAddress[]> {
  return (await client.listAll(ADDRESS_RESOURCE, { namespace: ns })).items;
}

function expectNoDuplicates(addresses: readonly StoredAddress[]): void {
  const texts = addresses.map((address) => address.spec.address);
  expect(new Set(texts).size, `duplicates in ${texts.join(', ')}`).toBe(texts.length);
}

describe('uniqueness enforced by the API server', () => {
  it('two pools with overlapping ranges never hand out the same address', async () => {
    const ns = await namespace('uniq-overlap');
    const running = await startProvider();
    try {
      await createPool(client, 'TallyIPPool', 'left', ns, { addresses: ['10.40.0.1-10.40.0.6'], prefix: 24 });
      await createPool(client, 'TallyIPPool', 'right', ns, { addresses: ['10.40.0.4-10.40.0.9'], prefix: 24 });
      const claims: string[] = [];
      for (let index = 0; index < 6; index += 1) {
        for (const pool of ['left', 'right']) {
          const name = `${pool}-${index}`;
          claims.push(name);
          await createClaim(client, ns, name, { kind: 'TallyIPPool', name: pool });
        }
      }
      // What a timeout of either wait prints: every claim's Ready condition and the addresses handed out.
      const state = async () => ({
        claims: (await Promise.all(claims.map((name) => client.get(CLAIM_RESOURCE, { namespace: ns, name })))).map(
          (claim) => `${claim.metadata.name}: ${readyCondition(claim)?.reason ?? 'no Ready'}`,
        ),
        addresses: (await addressesOf(ns)).map((address) => `${address.spec.poolRef.name} ${address.spec.address}`),
      });
      // 9 distinct addresses for 12 claims: 9 are served, 3 wait.
      await waitFor('9 claims served', async () => ((await addressesOf(ns)).length === 9 ? true : undefined), {
        describe: state,
      });
      const addresses = await addressesOf(ns);
      expectNoDuplicates(addresses);
      for (const address of addresses) {
        const range = address.spec.poolRef.name === 'left' ? [1, 6] : [4, 9];
        const last = Number(address.spec.address.split('.')[3]);
        expect(last).toBeGreaterThanOrEqual(range[0] as number);
        expect(last).toBeLessThanOrEqual(range[1] as number);
      }
      // The ninth IPAddress can land before the last waiting claims have their status written: wait for the three.
      await waitFor(
        '3 claims told their pool is exhausted',
        async () => {
          const listed = await Promise.all(claims.map((name) => client.get(CLAIM_RESOURCE, { namespace: ns, name })));
          return listed.filter((claim) => readyCondition(claim)?.reason === 'PoolExhausted').length === 3 || undefined;
        },
        { describe: state },
      );
      const settled = await addressesOf(ns);
      expect(settled.length).toBe(9);
      expectNoDuplicates(settled);
    } finally {
      await running.stop();
    }
  });

  it('respects an address another replica holds in the ledger: the claim gets the next address', async () => {
    const ns = await namespace('uniq-409');
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.41.0.1-10.41.0.3'], prefix: 24 });
    // "Another replica" took 10.41.0.1 for a claim this process has not seen: one of another watch filter. The claim
    // exists, so that no provider collects the entry as an orphan (those of the other test files run beside this one,
    // contract-corners' with a safety age of 1 s).
    const elsewhere = await createClaim(
      client,
      ns,
      'elsewhere',
      { kind: 'TallyIPPool', name: 'pool' },
      { labels: { [WATCH_FILTER_LABEL]: 'another-replica' } },
    );
    await holdAsAnotherWriter(
      client,
      addressEntryKey('10.41.0.1'),
      { kind: 'TallyIPPool', name: 'pool', namespace: ns },
      { namespace: ns, name: 'elsewhere', uid: elsewhere.metadata.uid ?? '' },
    );
    const running = await startProvider({ orphanEntrySafetyAgeMs: 3_600_000 });
    try {
      await createClaim(client, ns, 'a', { kind: 'TallyIPPool', name: 'pool' });
      expect((await waitForAddress(client, ns, 'a')).spec.address).toBe('10.41.0.2');
      const foreign = await getHolding(client, addressEntryKey('10.41.0.1'));
      expect(foreign.spec.claimRef.name).toBe('elsewhere');
    } finally {
      await running.stop();
      await dropHolding(client, addressEntryKey('10.41.0.1'));
    }
  });

  it('two providers racing on one pool (no leader election) hand out every address once', async () => {
    const ns = await namespace('uniq-race');
    const first = await startProvider({ concurrency: 4 }, 'replica-a');
    const second = await startProvider({ concurrency: 4 }, 'replica-b');
    try {
      await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.42.0.1-10.42.0.30'], prefix: 24 });
      const names = Array.from({ length: 30 }, (_, index) => `m-${index}`);
      await Promise.all(names.map((name) => createClaim(client, ns, name, { kind: 'TallyIPPool', name: 'pool' })));
      const addresses = await Promise.all(names.map((name) => waitForAddress(client, ns, name)));
      expectNoDuplicates(addresses);
      const listed = await addressesOf(ns);
      expect(listed.length).toBe(30);
      expectNoDuplicates(listed);
      // Every IPAddress is backed by the holding of its address, held by its claim; no stray holdings are left behind.
      const claims = await Promise.all(names.map((name) => client.get(CLAIM_RESOURCE, { namespace: ns, name })));
      const uidOf = new Map(claims.map((claim) => [claim.metadata.name, claim.metadata.uid]));
      await waitFor('one held entry per address', async () => {
        const holdings = (await holdingsOfNamespace(client, ns)).filter(
          (holding) => holding.spec.releasedAt === undefined,
        );
        return holdings.length === 30 ? holdings : undefined;
      });
      for (const address of listed) {
        const holding = await getHolding(client, addressEntryKey(address.spec.address));
        expect(holding.spec.claimRef.uid).toBe(uidOf.get(address.metadata.name));
      }
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
  });

  it('a restarted provider rebuilds the same state from specs: nothing is re-allocated', async () => {
    const ns = await namespace('uniq-restart');
    let running = await startProvider();
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.43.0.1-10.43.0.10'], prefix: 24 });
    for (const name of ['a', 'b', 'c']) await createClaim(client, ns, name, { kind: 'TallyIPPool', name: 'pool' });
    const before = await Promise.all(['a', 'b', 'c'].map((name) => waitForAddress(client, ns, name)));
    await running.stop();

    running = await startProvider();
    try {
      await createClaim(client, ns, 'd', { kind: 'TallyIPPool', name: 'pool' });
      const d = await waitForAddress(client, ns, 'd');
      expect(d.spec.address).toBe('10.43.0.4');
      const after = await Promise.all(
        ['a', 'b', 'c'].map((name) => client.get(ADDRESS_RESOURCE, { namespace: ns, name })),
      );
      expect(after.map((address) => [address.metadata.uid, address.spec.address])).toEqual(
        before.map((address) => [address.metadata.uid, address.spec.address]),
      );
    } finally {
      await running.stop();
    }
  });

  it('clusterctl move: ledger entries and statuses gone, the provider holds the addresses again and moves nothing', async () => {
    const ns = await namespace('uniq-move');
    let running = await startProvider();
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.44.0.1-10.44.0.10'], prefix: 24 });
    for (const name of ['a', 'b', 'c']) await createClaim(client, ns, name, { kind: 'TallyIPPool', name: 'pool' });
    const before = await Promise.all(['a', 'b', 'c'].map((name) => waitForAddress(client, ns, name)));
    await running.stop();

    // What a move leaves in the target cluster: the objects without status, and no cluster-scoped holdings.
    for (const holding of await holdingsOfNamespace(client, ns)) await dropHolding(client, holding.metadata.name);
    for (const name of ['a', 'b', 'c']) {
      const claim = await client.get(CLAIM_RESOURCE, { namespace: ns, name });
      await client.mergePatch(CLAIM_RESOURCE, claim.metadata, { status: null }, { subresource: 'status' });
    }
    const pool = await client.get(POOL_RESOURCES.TallyIPPool, { namespace: ns, name: 'pool' });
    await client.mergePatch(POOL_RESOURCES.TallyIPPool, pool.metadata, { status: null }, { subresource: 'status' });

    running = await startProvider();
    try {
      const after = await Promise.all(['a', 'b', 'c'].map((name) => waitForAddress(client, ns, name)));
      expect(after.map((address) => [address.metadata.uid, address.spec.address])).toEqual(
        before.map((address) => [address.metadata.uid, address.spec.address]),
      );
      const claims = await Promise.all(
        ['a', 'b', 'c'].map((name) => client.get(CLAIM_RESOURCE, { namespace: ns, name })),
      );
      for (const [index, address] of after.entries()) {
        const holding = await waitFor(`holding of ${address.spec.address}`, async () => {
          const holdings = await holdingsOfNamespace(client, ns);
          return holdings.find((candidate) => candidate.spec.address === address.spec.address);
        });
        expect(holding.spec.claimRef.uid).toBe(claims[index]?.metadata.uid);
      }
      await createClaim(client, ns, 'd', { kind: 'TallyIPPool', name: 'pool' });
      expect((await waitForAddress(client, ns, 'd')).spec.address).toBe('10.44.0.4');
    } finally {
      await running.stop();
    }
  });
});
