/**
 * The provider with `addressLedgers: true`, on an API server of its own (the retired lock CRD it needs would refuse
 * the locks the package's other files create on the shared one): a burst's request budget, read from
 * apiserver_request_total — the contract's three writes plus the ledger writes the burst shares.
 */
import {
  TALLY_ADDRESS_LOCK_KIND,
  TALLY_GROUP,
  TALLY_V1ALPHA1_API_VERSION,
  tallyAddressLockCustomResourceDefinition,
  tallyCRDDirectory,
} from '@tally-ipam/api-types';
import { type Client, isInvalid, type ResourceKind } from '@tally-ipam/controller-kit';
import { type ControlPlane, startControlPlane } from '@tally-ipam/testenv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADDRESS_RESOURCE, CLAIM_RESOURCE, LEDGER_RESOURCE, LOCK_RESOURCE, type StoredAddress } from '../src/index.js';
import { readRequestCounters, requestsBetween, requestsByTarget, sumRequests } from './api-server-requests.js';
import {
  createClaim,
  createPool,
  newNamespace,
  readyCondition,
  startProvider,
  testClient,
  waitFor,
} from './support.js';

let plane: ControlPlane | undefined;
let client: Client;

const CRD_RESOURCE: ResourceKind = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  namespaced: false,
};

beforeAll(async () => {
  plane = await startControlPlane({
    ignoreTestKubeconfig: true,
    crds: [tallyCRDDirectory()],
    capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'],
  });
  client = testClient(plane.kubeConfig());
}, 180_000);

afterAll(async () => {
  client?.close();
  await plane?.stop();
});

async function retireLocks(): Promise<void> {
  const retired = tallyAddressLockCustomResourceDefinition({ retired: true });
  await client.mergePatch(CRD_RESOURCE, { name: retired.metadata.name }, { spec: { versions: retired.spec.versions } });
  await waitFor('the lock CRD refusing creates', async () => {
    try {
      await client.create(
        LOCK_RESOURCE,
        {
          apiVersion: TALLY_V1ALPHA1_API_VERSION,
          kind: TALLY_ADDRESS_LOCK_KIND,
          metadata: { name: 'probe' },
          spec: {
            address: '0.0.0.0',
            poolRef: { apiGroup: TALLY_GROUP, kind: 'TallyIPPool', name: 'p' },
            claimRef: { namespace: 'n', name: 'c', uid: 'u' },
          },
        },
        { dryRun: 'All' },
      );
      return false;
    } catch (error) {
      if (!isInvalid(error)) throw error;
      return true;
    }
  });
}

function expectNoDuplicates(addresses: readonly StoredAddress[]): void {
  const texts = addresses.map((address) => address.spec.address);
  expect(new Set(texts).size, `duplicates in ${texts.join(', ')}`).toBe(texts.length);
}

describe('the provider on address ledgers', () => {
  it('measures a burst of 300 claims: the writes of the contract plus the ledger writes, no GET, no 409', async () => {
    await retireLocks();
    const kubeConfig = (plane as ControlPlane).kubeConfig();
    const { name: ns } = await newNamespace('ledger-burst', kubeConfig);
    await createPool(client, 'TallyIPPool', 'burst', ns, { addresses: ['10.60.0.1-10.60.1.254'], prefix: 16 });
    const running = await startProvider({ namespace: ns, addressLedgers: true }, 'ledger-burst', kubeConfig);
    try {
      // A first claim: the migration has run and the caches are warm before the measured window.
      await createClaim(client, ns, 'warm-up', { kind: 'TallyIPPool', name: 'burst' });
      await waitFor('the warm-up claim bound', async () =>
        readyCondition(await client.get(CLAIM_RESOURCE, { namespace: ns, name: 'warm-up' }))?.status === 'True'
          ? true
          : undefined,
      );
      const before = await readRequestCounters(kubeConfig);
      const names = Array.from({ length: 300 }, (_, index) => `claim-${index}`);
      for (let start = 0; start < names.length; start += 50) {
        await Promise.all(
          names
            .slice(start, start + 50)
            .map((name) => createClaim(client, ns, name, { kind: 'TallyIPPool', name: 'burst' })),
        );
      }
      await waitFor(
        'all 300 claims bound',
        async () => {
          const claims = (await client.listAll(CLAIM_RESOURCE, { namespace: ns })).items;
          return claims.filter((claim) => claim.status?.addressRef?.name).length === 301 ? true : undefined;
        },
        { timeoutMs: 300_000, intervalMs: 2_000 },
      );
      const after = await readRequestCounters(kubeConfig);
      const requests = requestsBetween(before, after).filter(
        (series) =>
          [CLAIM_RESOURCE.plural, ADDRESS_RESOURCE.plural, LEDGER_RESOURCE.plural].includes(series.resource) &&
          !['WATCH', 'LIST'].includes(series.verb),
      );
      const byTarget = [...requestsByTarget(requests)].map(
        ([target, count]) => `${target} ${(count / 300).toFixed(3)}`,
      );
      console.info(`ledger-mode burst of 300 claims, requests per claim: ${byTarget.join(', ')}`);
      const ledgerWrites = sumRequests(
        requests.filter((series) => series.resource === LEDGER_RESOURCE.plural && series.verb !== 'GET'),
      );
      const claimWrites = sumRequests(
        requests.filter(
          (series) =>
            series.resource !== LEDGER_RESOURCE.plural &&
            series.verb !== 'GET' &&
            !(series.verb === 'POST' && series.resource === CLAIM_RESOURCE.plural),
        ),
      );
      console.info(
        `ledger writes per claim ${(ledgerWrites / 300).toFixed(3)}, contract writes ${(claimWrites / 300).toFixed(3)}`,
      );
      expect({
        gets: sumRequests(requests.filter((series) => series.verb === 'GET')),
        conflicts: sumRequests(requests.filter((series) => series.code === '409')),
      }).toEqual({ gets: 0, conflicts: 0 });
      expect(claimWrites).toBe(900);
      // Fewer ledger writes than claims: the holds in flight for one block share a write.
      expect(ledgerWrites).toBeLessThan(300);
      expectNoDuplicates((await client.listAll(ADDRESS_RESOURCE, { namespace: ns })).items);
    } finally {
      await running.stop();
    }
  });
});
