import { CLAIM_RESOURCE, METAL3_IPAM_GROUP } from '@tally-ipam/api-types';
import type { Client } from '@tally-ipam/controller-kit/client';
import { METAL3_CLAIM_RESOURCE } from '@tally-ipam/metal3-ipam';
import { readAddresses, readEntries } from '../kube/holdings.js';
import { type ListScope, listIfServed, listPaged } from '../kube/list.js';
import { ageOf } from '../view/duration.js';
import { findLeaks, type Leak } from '../view/leaks.js';
import type { Listing } from '../view/output.js';

function ms(timestamp: string | undefined): number | undefined {
  const value = timestamp === undefined ? Number.NaN : Date.parse(timestamp);
  return Number.isNaN(value) ? undefined : value;
}

/**
 * The leaks in scope. Claims of both APIs are listed in the same scope as the IPAddresses; ledger entries are
 * cluster-wide and kept to the namespace in scope by their claim's namespace.
 */
export async function readLeaks(client: Client, scope: ListScope): Promise<Leak[]> {
  const addresses = await readAddresses(client, scope);
  const claims = new Set<string>();
  for (const claim of await listPaged(client, CLAIM_RESOURCE, scope))
    claims.add(`ipam.cluster.x-k8s.io/${claim.metadata.namespace}/${claim.metadata.name}`);
  for (const claim of (await listIfServed(client, METAL3_CLAIM_RESOURCE, scope)) ?? [])
    claims.add(`${METAL3_IPAM_GROUP}/${claim.metadata.namespace}/${claim.metadata.name}`);
  const entries = (await readEntries(client, { ...scope, namespace: undefined })).filter(
    (entry) => scope.namespace === undefined || entry.claim.namespace === scope.namespace,
  );
  // Claims are keyed by API group in the namespace: an IPAddress's claim is of its own API.
  return findLeaks(
    addresses.map((address) => ({
      namespace: address.namespace,
      name: address.name,
      address: address.address,
      claimName: address.claimName,
      claimKey:
        address.claimName === undefined ? undefined : `${address.apiGroup}/${address.namespace}/${address.claimName}`,
      pool: `${address.pool.kind}/${address.pool.name}`,
      createdMs: ms(address.createdAt),
    })),
    claims,
    entries.map((entry) => ({
      ledger: entry.ledger,
      key: entry.key,
      address: entry.address,
      namespace: entry.claim.namespace,
      claimName: entry.claim.name,
      pool: `${entry.pool.kind}/${entry.pool.name}`,
      heldSinceMs: ms(entry.heldSince),
      released: entry.releasedAt !== undefined,
    })),
  );
}

/** The `leaks` listing. */
export function leaksListing(leaks: readonly Leak[], nowMs: number, where: string): Listing {
  const headers = ['KIND', 'NAMESPACE', 'NAME', 'ADDRESS', 'POOL', 'CLAIM', 'AGE'];
  const rows = leaks.map((leak) => [
    leak.kind,
    leak.namespace,
    leak.name,
    leak.address,
    leak.pool,
    leak.claim,
    ageOf(leak.sinceMs === undefined ? undefined : new Date(leak.sinceMs).toISOString(), nowMs),
  ]);
  return {
    kind: 'LeakList',
    items: leaks.map((leak) => ({
      ...leak,
      since: leak.sinceMs === undefined ? null : new Date(leak.sinceMs).toISOString(),
      ageSeconds: leak.sinceMs === undefined ? null : Math.max(0, Math.round((nowMs - leak.sinceMs) / 1000)),
    })),
    headers,
    rows,
    wideHeaders: [...headers, 'WHY'],
    wideRows: leaks.map((leak, index) => [...(rows[index] ?? []), leak.why]),
    empty: `No leaks found ${where}.`,
  };
}
