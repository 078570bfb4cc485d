/**
 * One address space for both APIs: a Metal3 IPPool and a TallyIPPool with the same range, Metal3 IPClaims and Cluster
 * API IPAddressClaims created at once, served by Tally's real claim controller (ledger mode) and the Metal3
 * controllers — on one manager, then by two processes at once. No address is held twice, every claim is served, and
 * every allocation is one ledger entry naming its claim's API.
 */
import {
  ADDRESS_RESOURCE,
  type AddressLedgerEntry,
  CLAIM_RESOURCE,
  TALLY_GROUP,
  TALLY_V1ALPHA1_API_VERSION,
} from '@tally-ipam/api-types';
import { POOL_RESOURCES } from '@tally-ipam/ipam-provider';
import { describe, expect, it } from 'vitest';
import { METAL3_CLAIM_RESOURCE } from '../src/index.js';
import {
  addressesOf,
  createClaim,
  createPool,
  ledgerEntries,
  startMetal3,
  useMetal3TestFile,
  waitFor,
} from './support.js';

const CLAIMS_PER_API = 40;
const file = useMetal3TestFile();

/** Both pools over `first`..`first + 99` of the /24 `block` (e.g. `10.70.0`): every address is contended. */
async function overlappingPools(namespace: string, block: string): Promise<void> {
  await file.client.create(POOL_RESOURCES.TallyIPPool, {
    apiVersion: TALLY_V1ALPHA1_API_VERSION,
    kind: 'TallyIPPool',
    metadata: { name: 'tally', namespace },
    spec: { addresses: [`${block}.60-${block}.159`], prefix: 24 },
  });
  await createPool(file.client, namespace, 'metal3', {
    namePrefix: 'metal3',
    pools: [{ start: `${block}.60`, end: `${block}.159` }],
    prefix: 24,
  });
}

async function createClaimsAtOnce(namespace: string): Promise<void> {
  const names = Array.from({ length: CLAIMS_PER_API }, (_, index) => `claim-${index}`);
  await Promise.all([
    ...names.map((name) =>
      file.client.create(CLAIM_RESOURCE, {
        apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
        kind: 'IPAddressClaim',
        metadata: { name, namespace },
        spec: { poolRef: { apiGroup: TALLY_GROUP, kind: 'TallyIPPool', name: 'tally' } },
      }),
    ),
    // The same names: a Metal3 IPClaim and an IPAddressClaim of one namespace and name are two claims.
    ...names.map((name) => createClaim(file.client, namespace, name, 'metal3')),
  ]);
}

interface Served {
  readonly addresses: string[];
  readonly entries: AddressLedgerEntry[];
}

async function waitForAllServed(namespace: string): Promise<Served> {
  await waitFor(
    `${CLAIMS_PER_API} IPAddressClaims and ${CLAIMS_PER_API} IPClaims served`,
    async () => {
      const capi = (await file.client.list(CLAIM_RESOURCE, { namespace })).items;
      const metal3 = (await file.client.list(METAL3_CLAIM_RESOURCE, { namespace })).items;
      const capiServed = capi.filter((claim) => claim.status?.addressRef?.name).length;
      const metal3Served = metal3.filter((claim) => claim.status?.address?.name).length;
      // Settled: two replicas that both allocated for one claim leave a second IPAddress until one of them removes it.
      const capiAddresses = (await file.client.list(ADDRESS_RESOURCE, { namespace })).items.length;
      const metal3Addresses = (await addressesOf(file.client, namespace)).length;
      return (
        capiServed === CLAIMS_PER_API &&
        metal3Served === CLAIMS_PER_API &&
        capiAddresses === CLAIMS_PER_API &&
        metal3Addresses === CLAIMS_PER_API
      );
    },
    { timeoutMs: 150_000 },
  );
  const capiAddresses = (await file.client.list(ADDRESS_RESOURCE, { namespace })).items.map(
    (address) => address.spec.address,
  );
  const metal3Addresses = (await addressesOf(file.client, namespace)).map((address) => address.spec.address ?? '');
  const addresses = [...capiAddresses, ...metal3Addresses];
  const inUse = new Set(addresses);
  return { addresses, entries: (await ledgerEntries(file.client)).filter((entry) => inUse.has(entry.address)) };
}

function expectOneAddressSpace(served: Served, namespace: string): void {
  // Every claim of both APIs has exactly one IPAddress, and no address appears twice across the two APIs.
  expect(served.addresses).toHaveLength(2 * CLAIMS_PER_API);
  expect(new Set(served.addresses).size).toBe(2 * CLAIMS_PER_API);
  // Each address is one ledger entry, of the API whose IPAddress carries it.
  expect(served.entries).toHaveLength(2 * CLAIMS_PER_API);
  const metal3Entries = served.entries.filter((entry) => entry.claimRef.apiGroup === 'ipam.metal3.io');
  const capiEntries = served.entries.filter((entry) => entry.claimRef.apiGroup === undefined);
  expect(metal3Entries).toHaveLength(CLAIMS_PER_API);
  expect(capiEntries).toHaveLength(CLAIMS_PER_API);
  for (const entry of metal3Entries) {
    expect(entry.claimRef).toMatchObject({ kind: 'IPClaim', namespace });
    expect(entry.poolRef).toMatchObject({ apiGroup: 'ipam.metal3.io', kind: 'IPPool', name: 'metal3' });
  }
  for (const entry of capiEntries) expect(entry.poolRef).toMatchObject({ kind: 'TallyIPPool', name: 'tally' });
}

describe('a Metal3 IPPool and a TallyIPPool over the same range', () => {
  it('one manager: 40 + 40 claims created at once get 80 distinct addresses, one ledger entry each', async () => {
    const namespace = await file.namespaces.create('one-space');
    const process = await startMetal3({ namespace, tally: { namespace }, name: 'one-manager' });
    file.running.push(process);
    await overlappingPools(namespace, '10.70.0');
    await createClaimsAtOnce(namespace);
    expectOneAddressSpace(await waitForAllServed(namespace), namespace);
    console.info(
      `[metal3-ipam] one manager: ${process.ledgers.writes} Metal3 ledger writes for ${CLAIMS_PER_API} IPClaims`,
    );
  });

  it('two processes at once, without leader election: still 80 distinct addresses, one ledger entry each', async () => {
    const namespace = await file.namespaces.create('two-space');
    for (const name of ['replica-a', 'replica-b']) {
      const process = await startMetal3({ namespace, tally: { namespace }, name });
      file.running.push(process);
    }
    await overlappingPools(namespace, '10.71.0');
    await createClaimsAtOnce(namespace);
    expectOneAddressSpace(await waitForAllServed(namespace), namespace);
    const writes = file.running.slice(-2).map((replica) => replica.ledgers.writes);
    console.info(
      `[metal3-ipam] two replicas: ${writes.join(' + ')} Metal3 ledger writes for ${CLAIMS_PER_API} IPClaims`,
    );
  });
});
