import { describe, expect, it } from 'vitest';
import { ADDRESS_RESOURCE, CLAIM_RESOURCE, type StoredAddress } from '../src/index.js';
import {
  createClaim,
  createPool,
  holdingsOfNamespace,
  startProvider,
  useTestFile,
  waitFor,
  waitForGone,
} from './support.js';

const { client, namespace } = useTestFile();

/** Rounds of the race in this run (`TALLY_RACE_ROUNDS`, default 1): each on a pool of its own, with fresh providers. */
const ROUNDS = Number(process.env.TALLY_RACE_ROUNDS ?? 1);
/** 60 addresses across two /24 blocks, so two ledgers are raced for; each round has its own pair of blocks. */
const poolRange = (round: number): string => `10.46.${2 * round}.225-10.46.${2 * round + 1}.28`;
const POOL_SIZE = 60;
const POOL = { kind: 'TallyIPPool', name: 'pool' } as const;

/** Every claim of the namespace bound, and the holdings exactly what they should be: returns the IPAddresses. */
async function settled(ns: string, names: readonly string[]): Promise<StoredAddress[]> {
  return waitFor(
    `${names.length} claims bound, one unreleased entry each`,
    async () => {
      const claims = (await client.listAll(CLAIM_RESOURCE, { namespace: ns })).items;
      const addresses = (await client.listAll(ADDRESS_RESOURCE, { namespace: ns })).items;
      const held = (await holdingsOfNamespace(client, ns)).filter((entry) => entry.spec.releasedAt === undefined);
      const bound = claims.filter((claim) => claim.status?.addressRef?.name);
      return bound.length === names.length && addresses.length === names.length && held.length === names.length
        ? addresses
        : undefined;
    },
    { timeoutMs: 180_000, intervalMs: 500 },
  );
}

async function expectOneHolderPerAddress(ns: string, names: readonly string[]): Promise<void> {
  const addresses = await settled(ns, names);
  const texts = addresses.map((address) => address.spec.address);
  expect(new Set(texts).size, `an address carried twice: ${texts.sort().join(', ')}`).toBe(names.length);
  const claims = (await client.listAll(CLAIM_RESOURCE, { namespace: ns })).items;
  expect(claims.map((claim) => claim.metadata.name).sort()).toEqual([...names].sort());
  const uidOf = new Map(claims.map((claim) => [claim.metadata.name, claim.metadata.uid]));
  const held = (await holdingsOfNamespace(client, ns)).filter((entry) => entry.spec.releasedAt === undefined);
  const holderOf = new Map(held.map((entry) => [entry.spec.address, entry.spec.claimRef.uid]));
  expect(holderOf.size, 'one entry per address').toBe(held.length);
  for (const address of addresses) {
    expect(holderOf.get(address.spec.address), `entry of ${address.spec.address}`).toBe(
      uidOf.get(address.metadata.name),
    );
  }
}

describe('two providers racing for one exactly-full pool', () => {
  it.for(Array.from({ length: ROUNDS }, (_, round) => round))(
    'round %i: serves every claim once with no address held twice, and again after a third of the claims is replaced',
    async (round) => {
      const ns = await namespace('race');
      await createPool(client, 'TallyIPPool', POOL.name, ns, { addresses: [poolRange(round)], prefix: 16 });
      const first = Array.from({ length: POOL_SIZE }, (_, index) => `m-${index}`);
      await Promise.all(first.map((name) => createClaim(client, ns, name, POOL)));
      const replicas = await Promise.all([
        startProvider({ concurrency: 4 }, 'race-a'),
        startProvider({ concurrency: 4 }, 'race-b'),
      ]);
      try {
        await expectOneHolderPerAddress(ns, first);

        const replaced = first.slice(0, POOL_SIZE / 3);
        const fresh = replaced.map((name) => `n-${name}`);
        await Promise.all(replaced.map((name) => client.delete(CLAIM_RESOURCE, { namespace: ns, name })));
        // The new claims arrive while the old ones are being released: they may wait for those addresses.
        await Promise.all(fresh.map((name) => createClaim(client, ns, name, POOL)));
        for (const name of replaced) {
          await waitForGone(`claim ${name}`, () => client.get(CLAIM_RESOURCE, { namespace: ns, name }));
        }
        await expectOneHolderPerAddress(ns, [...first.slice(POOL_SIZE / 3), ...fresh]);
      } finally {
        await Promise.all(replicas.map((replica) => replica.stop()));
      }
    },
  );
});
