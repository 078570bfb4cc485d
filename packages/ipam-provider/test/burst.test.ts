import { EVENTS_RESOURCE } from '@tally-ipam/controller-kit';
import { describe, expect, it } from 'vitest';
import { ADDRESS_RESOURCE, EVENT_ADDRESS_ALLOCATED, EVENT_ADDRESSES_ALLOCATED, POOL_RESOURCES } from '../src/index.js';
import { createClaim, createPool, startProvider, useTestFile, waitFor, waitForAddress } from './support.js';

const { client, namespace } = useTestFile();

interface RecordedEvent {
  reason?: string;
  note?: string;
  regarding?: { kind?: string; name?: string };
  /** Repeats of an identical Event become a series on the first one (the recorder's correlation). */
  series?: { count?: number };
}

async function eventsOf(ns: string, reason: string): Promise<RecordedEvent[]> {
  const list = await client.list(EVENTS_RESOURCE, { namespace: ns });
  return (list.items as unknown as RecordedEvent[]).filter((event) => event.reason === reason);
}

describe('a burst of claims', () => {
  it('binds every claim with distinct addresses; AddressAllocated Events past the budget are summed up on the pool; the pool status ends exact', async () => {
    const ns = await namespace('burst');
    // A range no other file of the shared control plane uses: an address another file's pool holds (10.70.0.15 of
    // contract-corners, before) counts as neither used nor free here, and the exact counts below would not hold.
    await createPool(client, 'TallyIPPool', 'pool', ns, { addresses: ['10.76.0.1-10.76.0.40'], prefix: 24 });
    const running = await startProvider({
      namespace: ns,
      concurrency: 4,
      // Two Events on claims, then (practically) none: every later allocation must show up in a pool summary.
      allocationEvents: { burst: 2, perSecond: 1e-9, summaryIntervalMs: 0 },
    });
    const claimCount = 24;
    try {
      const names = Array.from({ length: claimCount }, (_, index) => `claim-${index}`);
      await Promise.all(names.map((name) => createClaim(client, ns, name, { kind: 'TallyIPPool', name: 'pool' })));
      const addresses = await Promise.all(names.map((name) => waitForAddress(client, ns, name)));
      expect(new Set(addresses.map((address) => address.spec.address)).size).toBe(claimCount);

      const pool = await waitFor('pool status counting every claim', async () => {
        const current = await client.get(POOL_RESOURCES.TallyIPPool, { namespace: ns, name: 'pool' });
        const counts = (current.status as { ipAddresses?: { used?: number; free?: number } } | undefined)?.ipAddresses;
        return counts?.used === claimCount ? counts : undefined;
      });
      expect(pool).toEqual({ total: 40, used: claimCount, free: 40 - claimCount, outOfRange: 0 });

      // The provider records Events without waiting for them (fire and forget, beside the claim's status write): the
      // two on claims may still be in flight when every claim is bound.
      const onClaims = await waitFor('the AddressAllocated Events on claims', async () => {
        const recorded = await eventsOf(ns, EVENT_ADDRESS_ALLOCATED);
        return recorded.length >= 2 ? recorded : undefined;
      });
      expect(onClaims).toHaveLength(2);
      expect(onClaims.every((event) => event.regarding?.kind === 'IPAddressClaim')).toBe(true);
      const summed = await waitFor('pool summaries covering every other allocation', async () => {
        const summaries = await eventsOf(ns, EVENT_ADDRESSES_ALLOCATED);
        const total = summaries.reduce(
          (sum, event) => sum + Number(/^(\d+) more/.exec(event.note ?? '')?.[1]) * (event.series?.count ?? 1),
          0,
        );
        return total === claimCount - 2 ? summaries : undefined;
      });
      expect(summed.every((event) => event.regarding?.kind === 'TallyIPPool' && event.regarding.name === 'pool')).toBe(
        true,
      );
      const listed = await client.list(ADDRESS_RESOURCE, { namespace: ns });
      expect(listed.items).toHaveLength(claimCount);
    } finally {
      await running.stop();
    }
  });
});
