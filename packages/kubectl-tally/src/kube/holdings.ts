import { ADDRESS_RESOURCE, IPADDRESSCLAIM_KIND, IPAM_GROUP } from '@tally-ipam/api-types';
import type { Client } from '@tally-ipam/controller-kit/client';
import { LEDGER_RESOURCE } from '@tally-ipam/ledger';
import { METAL3_ADDRESS_RESOURCE } from '@tally-ipam/metal3-ipam';
import type { HeldAddress, HeldEntry } from '../view/holdings.js';
import { type ListScope, listIfServed, listPaged } from './list.js';

/** Every entry of every TallyAddressLedger (cluster-scoped: entries of all namespaces), read page by page. */
export async function readEntries(client: Client, scope: ListScope): Promise<HeldEntry[]> {
  const ledgers = await listPaged(client, LEDGER_RESOURCE, scope);
  return ledgers.flatMap((ledger) =>
    (ledger.spec.entries ?? []).map((entry) => ({
      ledger: ledger.metadata.name,
      key: entry.key,
      address: entry.address,
      prefix: entry.prefix,
      pool: entry.poolRef,
      claim: {
        apiGroup: entry.claimRef.apiGroup ?? IPAM_GROUP,
        kind: entry.claimRef.kind ?? IPADDRESSCLAIM_KIND,
        namespace: entry.claimRef.namespace,
        name: entry.claimRef.name,
        uid: entry.claimRef.uid,
      },
      heldSince: entry.heldSince,
      releasedAt: entry.releasedAt,
    })),
  );
}

/** Cluster API's IPAddresses in scope, and Metal3's when that API is served. */
export async function readAddresses(client: Client, scope: ListScope): Promise<HeldAddress[]> {
  const capi: HeldAddress[] = (await listPaged(client, ADDRESS_RESOURCE, scope)).map((address) => ({
    apiGroup: IPAM_GROUP,
    namespace: address.metadata.namespace ?? '',
    name: address.metadata.name,
    address: address.spec.address,
    prefix: address.spec.prefix,
    claimName: address.spec.claimRef.name || undefined,
    pool: { kind: address.spec.poolRef.kind, name: address.spec.poolRef.name },
    createdAt: address.metadata.creationTimestamp,
  }));
  const metal3 = (await listIfServed(client, METAL3_ADDRESS_RESOURCE, scope)) ?? [];
  return [
    ...capi,
    ...metal3.flatMap((address): HeldAddress[] =>
      address.spec.address === undefined
        ? []
        : [
            {
              apiGroup: METAL3_ADDRESS_RESOURCE.apiVersion.split('/')[0] ?? '',
              namespace: address.metadata.namespace ?? '',
              name: address.metadata.name,
              address: address.spec.address,
              prefix: undefined,
              claimName: address.spec.claim?.name || undefined,
              pool: { kind: 'IPPool', name: address.spec.pool?.name ?? '' },
              createdAt: address.metadata.creationTimestamp,
            },
          ],
    ),
  ];
}
