import { setTimeout as delay } from 'node:timers/promises';
import { Client } from '@tally-ipam/controller-kit';
import { LEDGER_RESOURCE } from '@tally-ipam/ipam-provider';
import { METAL3_ADDRESS_RESOURCE, METAL3_CLAIM_RESOURCE, METAL3_POOL_RESOURCE } from '@tally-ipam/metal3-ipam';
import { createTestNamespace, type TestNamespace, testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, startController } from './controller-process.js';
import { forEachLimited, seededRandom } from './random.js';
import { eventually } from './support.js';

const CLAIMS_PER_POOL = 60;
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000_007);
/** The longest stretch of random kills; binding finishes inside it, so kills hit it throughout. */
const CHAOS_MS = 45_000;
const BLOCK = '10.220.0';

interface Replica {
  readonly name: string;
  process: ControllerProcess | undefined;
  kills: number;
}

/**
 * Two Metal3 IPPools over the same 150 addresses with different name prefixes: their IPAddress names never collide,
 * so only the address ledgers keep an address from being handed out twice — across pools, replicas and SIGKILLs.
 */
describe('Metal3 chaos: two replicas with --enable-metal3-ipam, no leader election, SIGKILLed at random', () => {
  let namespace: TestNamespace;
  const replicas: Replica[] = [
    { name: 'a', process: undefined, kills: 0 },
    { name: 'b', process: undefined, kills: 0 },
  ];

  afterAll(async () => {
    for (const replica of replicas) {
      if (replica.process && replica.process.child.exitCode === null) await replica.process.stop('SIGKILL');
    }
    await namespace?.delete();
  });

  it(`binds ${2 * CLAIMS_PER_POOL} IPClaims of two overlapping IPPools to distinct addresses, one ledger entry each, and releases them`, async () => {
    console.log(`metal3 chaos seed ${SEED} (replay with CHAOS_SEED=${SEED})`);
    const random = seededRandom(SEED);
    const env = testEnv();
    const client = new Client(env.kubeConfig, { fieldManager: 'metal3-chaos-test' });
    namespace = await createTestNamespace(env.kubeConfig, 'metal3-chaos');
    const ns = namespace.name;
    for (const name of ['left', 'right']) {
      await client.create(METAL3_POOL_RESOURCE, {
        apiVersion: 'ipam.metal3.io/v1alpha1',
        kind: 'IPPool',
        metadata: { name, namespace: ns },
        spec: { namePrefix: name, pools: [{ start: `${BLOCK}.50`, end: `${BLOCK}.199` }], prefix: 24 },
      });
    }
    const start = (replica: Replica): void => {
      replica.process = startController([
        '--kubeconfig',
        env.kubeconfigPath,
        '--namespace',
        ns,
        '--enable-metal3-ipam',
        '--metrics-bind-address=127.0.0.1:0',
        '--health-probe-bind-address=127.0.0.1:0',
        '--webhook-port=0',
      ]);
    };
    for (const replica of replicas) start(replica);

    let chaos = true;
    const killing = (async () => {
      const until = Date.now() + CHAOS_MS;
      while (chaos && Date.now() < until) {
        await delay(1_500 + random() * 2_500);
        if (!chaos) break;
        const replica = replicas[Math.floor(random() * replicas.length)] as Replica;
        await replica.process?.stop('SIGKILL');
        replica.kills += 1;
        await delay(300 + random() * 1_200);
        start(replica);
      }
    })();

    const started = Date.now();
    const claims = ['left', 'right'].flatMap((pool) =>
      Array.from({ length: CLAIMS_PER_POOL }, (_, index) => ({ pool, name: `${pool}-${index}` })),
    );
    await forEachLimited(claims, 20, async ({ pool, name }) => {
      await client.create(METAL3_CLAIM_RESOURCE, {
        apiVersion: 'ipam.metal3.io/v1alpha1',
        kind: 'IPClaim',
        metadata: { name, namespace: ns },
        spec: { pool: { name: pool } },
      });
    });
    const settled = async (): Promise<boolean> => {
      const served = (await client.list(METAL3_CLAIM_RESOURCE, { namespace: ns })).items.filter(
        (claim) => claim.status?.address?.name,
      );
      const addresses = (await client.list(METAL3_ADDRESS_RESOURCE, { namespace: ns })).items;
      return served.length === claims.length && addresses.length === claims.length;
    };
    await eventually(
      'every IPClaim served, one IPAddress each',
      async () => {
        if (!(await settled())) throw new Error('not settled yet');
      },
      { timeoutMs: 240_000 },
    );
    const bound = Date.now();
    chaos = false;
    await killing;
    const kills = replicas.reduce((sum, replica) => sum + replica.kills, 0);

    const addresses = (await client.list(METAL3_ADDRESS_RESOURCE, { namespace: ns })).items;
    const texts = addresses.map((address) => address.spec.address ?? '');
    expect(texts).toHaveLength(claims.length);
    expect(new Set(texts).size).toBe(claims.length);
    const entries = (await client.list(LEDGER_RESOURCE)).items
      .flatMap((ledger) => ledger.spec.entries ?? [])
      .filter((entry) => entry.address.startsWith(`${BLOCK}.`));
    const claimUIDs = new Map(
      (await client.list(METAL3_CLAIM_RESOURCE, { namespace: ns })).items.map((claim) => [
        claim.metadata.name,
        claim.metadata.uid,
      ]),
    );
    for (const address of addresses) {
      const held = entries.filter((entry) => entry.address === address.spec.address);
      expect(held, address.spec.address).toHaveLength(1);
      expect(held[0]?.claimRef).toMatchObject({
        apiGroup: 'ipam.metal3.io',
        kind: 'IPClaim',
        namespace: ns,
        name: address.spec.claim?.name,
        uid: claimUIDs.get(address.spec.claim?.name ?? ''),
      });
    }
    console.log(
      `[metal3 chaos] ${claims.length} IPClaims bound in ${((bound - started) / 1000).toFixed(1)} s through ` +
        `${kills} SIGKILLs (${replicas.map((replica) => `${replica.name}:${replica.kills}`).join(' ')}); ` +
        `${entries.length} ledger entries in ${BLOCK}.0/24`,
    );

    // Released: every IPAddress deleted with its claim, every entry of the namespace's claims gone.
    await forEachLimited(claims, 20, async ({ name }) => {
      await client.delete(METAL3_CLAIM_RESOURCE, { namespace: ns, name });
    });
    await eventually(
      'every IPAddress and ledger entry released',
      async () => {
        const left = (await client.list(METAL3_ADDRESS_RESOURCE, { namespace: ns })).items.length;
        const held = (await client.list(LEDGER_RESOURCE)).items
          .flatMap((ledger) => ledger.spec.entries ?? [])
          .filter((entry) => entry.claimRef.namespace === ns).length;
        if (left > 0 || held > 0) throw new Error(`${left} IPAddresses and ${held} entries left`);
      },
      { timeoutMs: 120_000 },
    );
  });
});
