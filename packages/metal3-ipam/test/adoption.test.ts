/**
 * The start-up adoption barrier: Tally takes over from Metal3's IPAM controller. Metal3 IPAddresses exist for the
 * lowest addresses of an IPPool, with no ledger entry, their IPClaims paused (so no claim reconcile adopts them); new IPClaims on a second IPPool over the same range (it reads
 * only its own IPAddresses) and new IPAddressClaims on a TallyIPPool over it (they read only the ledgers) wait when
 * two processes start at once. Both APIs pick the lowest free address, so without the barrier they take the existing
 * addresses; with it, each existing address is entered for its IPClaim first and none is handed out again.
 */
import { ADDRESS_RESOURCE, CLAIM_RESOURCE, TALLY_GROUP, TALLY_V1ALPHA1_API_VERSION } from '@tally-ipam/api-types';
import { POOL_RESOURCES } from '@tally-ipam/ipam-provider';
import { describe, expect, it } from 'vitest';
import { ipAddressName, METAL3_ADDRESS_RESOURCE, METAL3_CLAIM_RESOURCE } from '../src/index.js';
import {
  addressesOf,
  createClaim,
  createPool,
  ledgerEntries,
  startMetal3,
  useMetal3TestFile,
  waitFor,
  waitForAddress,
} from './support.js';

const BLOCK = '10.78.0';
const PAUSED = 'cluster.x-k8s.io/paused';
const EXISTING = 10;
const NEW_PER_API = 8;
const file = useMetal3TestFile();

describe('start-up adoption of Metal3 IPAddresses left by Metal3’s controller', () => {
  it('enters every existing IPAddress into the ledgers before new claims of either API get an address', async () => {
    const namespace = await file.namespaces.create('adoption');
    const range = { start: `${BLOCK}.10`, end: `${BLOCK}.39` };
    const legacy = await createPool(file.client, namespace, 'legacy', {
      namePrefix: 'legacy',
      pools: [range],
      prefix: 24,
    });
    await createPool(file.client, namespace, 'fresh', { namePrefix: 'fresh', pools: [range], prefix: 24 });
    await file.client.create(POOL_RESOURCES.TallyIPPool, {
      apiVersion: TALLY_V1ALPHA1_API_VERSION,
      kind: 'TallyIPPool',
      metadata: { name: 'tally', namespace },
      spec: { addresses: [`${range.start}-${range.end}`], prefix: 24, allocationStrategy: 'LowestFree' },
    });

    // What Metal3's controller left: IPClaims served with the lowest addresses, their IPAddresses, no ledger entry.
    const existing = new Map<string, { address: string; uid: string }>();
    for (let index = 0; index < EXISTING; index += 1) {
      const name = `legacy-${index}`;
      const address = `${BLOCK}.${10 + index}`;
      // Paused (its Cluster being moved, say): its own reconcile adopts nothing, so only the barrier enters its address.
      const claim = await createClaim(file.client, namespace, name, 'legacy', { annotations: { [PAUSED]: 'true' } });
      const ipAddress = ipAddressName('legacy', address);
      await file.client.create(METAL3_ADDRESS_RESOURCE, {
        apiVersion: 'ipam.metal3.io/v1alpha1',
        kind: 'IPAddress',
        metadata: {
          name: ipAddress,
          namespace,
          finalizers: ['ipaddress.ipam.metal3.io'],
          ownerReferences: [
            { apiVersion: 'ipam.metal3.io/v1alpha1', kind: 'IPPool', name: 'legacy', uid: legacy.metadata.uid ?? '' },
            { apiVersion: 'ipam.metal3.io/v1alpha1', kind: 'IPClaim', name, uid: claim.metadata.uid ?? '' },
          ],
        },
        spec: { address, prefix: 24, pool: { name: 'legacy', namespace }, claim: { name, namespace } },
      });
      existing.set(name, { address, uid: claim.metadata.uid ?? '' });
    }
    // (Read through waitFor: on a fresh control plane the ledger CRD's storage may still be initializing.)
    const before = await waitFor('the ledgers listed', () => ledgerEntries(file.client));
    expect(before.filter((entry) => entry.address.startsWith(`${BLOCK}.`))).toEqual([]);

    // New claims of both APIs, waiting before any controller runs; then two processes start at once.
    for (let index = 0; index < NEW_PER_API; index += 1) {
      await createClaim(file.client, namespace, `fresh-${index}`, 'fresh');
      await file.client.create(CLAIM_RESOURCE, {
        apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
        kind: 'IPAddressClaim',
        metadata: { name: `capi-${index}`, namespace },
        spec: { poolRef: { apiGroup: TALLY_GROUP, kind: 'TallyIPPool', name: 'tally' } },
      });
    }
    file.running.push(
      ...(await Promise.all(
        ['replica-a', 'replica-b'].map((name) => startMetal3({ namespace, tally: { namespace }, name })),
      )),
    );

    await waitFor(
      'every claim of both APIs served',
      async () => {
        const metal3 = (await file.client.list(METAL3_CLAIM_RESOURCE, { namespace })).items;
        const capi = (await file.client.list(CLAIM_RESOURCE, { namespace })).items;
        const metal3Addresses = (await addressesOf(file.client, namespace)).length;
        const capiAddresses = (await file.client.list(ADDRESS_RESOURCE, { namespace })).items.length;
        return (
          metal3.filter((claim) => claim.status?.address?.name).length === NEW_PER_API &&
          capi.filter((claim) => claim.status?.addressRef?.name).length === NEW_PER_API &&
          metal3Addresses === EXISTING + NEW_PER_API &&
          capiAddresses === NEW_PER_API
        );
      },
      { timeoutMs: 180_000 },
    );

    const metal3Addresses = await addressesOf(file.client, namespace);
    const capiAddresses = (await file.client.list(ADDRESS_RESOURCE, { namespace })).items;
    const all = [
      ...metal3Addresses.map((address) => address.spec.address ?? ''),
      ...capiAddresses.map((address) => address.spec.address),
    ];
    // No address twice across both APIs, and no new claim got one of the existing addresses.
    expect(all.filter((text, index) => all.indexOf(text) !== index)).toEqual([]);
    const existingAddresses = new Set([...existing.values()].map((held) => held.address));
    const newlyGiven = [
      ...metal3Addresses
        .filter((address) => address.spec.pool?.name === 'fresh')
        .map((address) => address.spec.address),
      ...capiAddresses.map((address) => address.spec.address),
    ];
    expect(newlyGiven.filter((text) => existingAddresses.has(text ?? ''))).toEqual([]);
    // The existing IPAddresses are untouched and each is backed by the entry of its IPClaim (name and uid).
    const entries = await ledgerEntries(file.client);
    for (const [name, held] of existing) {
      const ipAddress = metal3Addresses.find((address) => address.spec.claim?.name === name);
      expect(ipAddress?.metadata.name).toBe(ipAddressName('legacy', held.address));
      expect(ipAddress?.spec.address).toBe(held.address);
      const backing = entries.filter((entry) => entry.address === held.address && entry.releasedAt === undefined);
      expect(backing.map((entry) => entry.claimRef)).toEqual([
        { apiGroup: 'ipam.metal3.io', kind: 'IPClaim', namespace, name, uid: held.uid },
      ]);
    }

    // Unpaused, each existing claim adopts its own IPAddress: the one Metal3 created, at the same address.
    for (const name of existing.keys()) {
      const claim = await file.client.get(METAL3_CLAIM_RESOURCE, { namespace, name });
      await file.client.update(METAL3_CLAIM_RESOURCE, { ...claim, metadata: { ...claim.metadata, annotations: {} } });
    }
    for (const [name, held] of existing) {
      const ipAddress = await waitForAddress(file.client, namespace, name);
      expect(ipAddress.spec.address).toBe(held.address);
    }
    expect(await addressesOf(file.client, namespace)).toHaveLength(EXISTING + NEW_PER_API);
  });
});
