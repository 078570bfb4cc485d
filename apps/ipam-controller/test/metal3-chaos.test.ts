import { setTimeout as delay } from 'node:timers/promises';
import { asKubeApiError, Client, isAlreadyExists, isNotFound } from '@tally-ipam/controller-kit';
import { LEDGER_RESOURCE } from '@tally-ipam/ledger';
import { METAL3_ADDRESS_RESOURCE, METAL3_CLAIM_RESOURCE, METAL3_POOL_RESOURCE } from '@tally-ipam/metal3-ipam';
import { createTestNamespace, type TestNamespace, testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, startController } from './controller-process.js';
import { CONTROLLER_STALL_MS, untilNoneRemain } from './progress.js';
import { forEachLimited, seededRandom } from './random.js';
import { ADDRESSES, CLAIMS, CLUSTERS, claim, cluster, eventually, field, ipPool, POOLS } from './support.js';

const IPCLAIMS_PER_POOL = 30;
const METAL3_POOLS = ['left', 'right'] as const;
const CAPI_CLAIMS = 120;
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000_007);
/** The longest stretch of random kills; binding finishes inside it, so kills hit it throughout. */
const CHAOS_MS = 90_000;
const BLOCK = '10.220.0';
/** Every pool of both APIs spans these 200 addresses; the 180 claims leave 20 free, so nearly every choice contends. */
const FIRST = 20;
const LAST = 219;

/**
 * The test's own request, asked again until the API server answers it: at load average 20 the API server now and then
 * drops a connection (socket hang up) or answers 429/5xx. A create or delete that landed before its answer was lost
 * answers AlreadyExists or NotFound when asked again; both count as done. Any other refusal fails at once. Only the
 * test's own writes and reads go through here; what the controllers did is asserted on what they answer.
 */
async function answered<T>(what: string, request: () => Promise<T>): Promise<T | undefined> {
  let outcome: { readonly value: T | undefined } | { readonly error: unknown } | undefined;
  await eventually(
    what,
    async () => {
      try {
        outcome = { value: await request() };
      } catch (error) {
        if (isAlreadyExists(error) || isNotFound(error)) {
          outcome = { value: undefined };
          return;
        }
        const status = asKubeApiError(error)?.statusCode;
        if (status === undefined || status === 429 || status >= 500) throw error;
        outcome = { error };
      }
    },
    { timeoutMs: 120_000, intervalMs: 1_000 },
  );
  if (outcome && 'error' in outcome) throw outcome.error;
  return outcome?.value;
}

/** `answered` for a request whose answer the test needs (a read). */
async function read<T>(what: string, request: () => Promise<T>): Promise<T> {
  const value = await answered(what, request);
  if (value === undefined) throw new Error(`${what}: not found`);
  return value;
}

interface Replica {
  readonly name: string;
  process: ControllerProcess | undefined;
  kills: number;
}

/** An IPAddress of either API, reduced to what the assertions compare. */
interface Held {
  readonly api: 'metal3' | 'capi';
  readonly name: string;
  readonly address: string;
  readonly claimName: string;
}

/**
 * Both APIs in one SIGKILL run: two Metal3 IPPools with different name prefixes and one TallyIPPool, all over the same
 * 200 addresses, claimed at once by Metal3 IPClaims and Cluster API IPAddressClaims. No IPAddress name of one API can
 * collide with one of the other (nor the two Metal3 prefixes with each other), so only the address ledgers keep an
 * address from being handed out twice — across pools, APIs, replicas and SIGKILLs.
 */
describe('cross-API chaos: two replicas with --enable-metal3-ipam, no leader election, SIGKILLed at random', () => {
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

  it(`binds ${METAL3_POOLS.length * IPCLAIMS_PER_POOL} IPClaims and ${CAPI_CLAIMS} IPAddressClaims of overlapping pools to distinct addresses, each backed by its ledger entry, and releases them`, {
    // vitest's own bound, a backstop for an await no progress check covers: each phase fails by itself on a stall.
    timeout: 3 * 3_600_000,
  }, async () => {
    console.log(`metal3 chaos seed ${SEED} (replay with CHAOS_SEED=${SEED})`);
    const random = seededRandom(SEED);
    const env = testEnv();
    const client = new Client(env.kubeConfig, { fieldManager: 'metal3-chaos-test' });
    namespace = await createTestNamespace(env.kubeConfig, 'metal3-chaos');
    const ns = namespace.name;
    await answered('create the Cluster', () => client.create(CLUSTERS, cluster(ns, 'chaos')));
    for (const name of METAL3_POOLS) {
      await answered(`create IPPool ${name}`, () =>
        client.create(METAL3_POOL_RESOURCE, {
          apiVersion: 'ipam.metal3.io/v1alpha1',
          kind: 'IPPool',
          metadata: { name, namespace: ns },
          spec: { namePrefix: name, pools: [{ start: `${BLOCK}.${FIRST}`, end: `${BLOCK}.${LAST}` }], prefix: 24 },
        }),
      );
    }
    await answered('create the TallyIPPool', () =>
      client.create(POOLS, ipPool(ns, 'tally', { addresses: [`${BLOCK}.${FIRST}-${BLOCK}.${LAST}`], prefix: 24 })),
    );

    const start = (replica: Replica): void => {
      replica.process = startController([
        '--kubeconfig',
        env.kubeconfigPath,
        '--namespace',
        ns,
        '--enable-metal3-ipam',
        '--metrics-bind-address=0',
        '--health-probe-bind-address=0',
        '--webhook-port=0',
        '--log-level=warn',
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
    const ipClaims = METAL3_POOLS.flatMap((pool) =>
      Array.from({ length: IPCLAIMS_PER_POOL }, (_, index) => ({ pool, name: `${pool}-${index}` })),
    );
    // The same names as the IPClaims for the first ones: an IPClaim and an IPAddressClaim of one name are two claims.
    const capiClaims = Array.from({ length: CAPI_CLAIMS }, (_, index) =>
      index < ipClaims.length ? (ipClaims[index]?.name as string) : `capi-${index}`,
    );
    const creations: (() => Promise<unknown>)[] = [
      ...ipClaims.map(
        ({ pool, name }) =>
          () =>
            client.create(METAL3_CLAIM_RESOURCE, {
              apiVersion: 'ipam.metal3.io/v1alpha1',
              kind: 'IPClaim',
              metadata: { name, namespace: ns },
              spec: { pool: { name: pool } },
            }),
      ),
      ...capiClaims.map(
        (name) => () => client.create(CLAIMS, claim(ns, name, { kind: 'TallyIPPool', name: 'tally' }, 'chaos')),
      ),
    ];
    // Interleaved, so both APIs' claims arrive at once rather than one API's batch after the other's.
    const shuffled = creations
      .map((create) => ({ create, order: random() }))
      .sort((a, b) => a.order - b.order)
      .map(({ create }) => create);
    await forEachLimited(shuffled, 20, async (create) => {
      await answered('create a claim', create);
    });
    const created = Date.now();

    const heldAddresses = async (): Promise<Held[]> => [
      ...(await client.listAll(METAL3_ADDRESS_RESOURCE, { namespace: ns })).items.map(
        (object): Held => ({
          api: 'metal3',
          name: object.metadata.name,
          address: object.spec.address ?? '',
          claimName: object.spec.claim?.name ?? '',
        }),
      ),
      ...(await client.listAll(ADDRESSES, { namespace: ns })).items.map(
        (object): Held => ({
          api: 'capi',
          name: object.metadata.name,
          address: String(field(object, 'spec', 'address')),
          claimName: String(field(object, 'spec', 'claimRef', 'name')),
        }),
      ),
    ];
    const total = ipClaims.length + capiClaims.length;
    // What is left to do, read from the API server: claims not served, plus IPAddresses more or fewer than one per
    // claim (two replicas that both allocated for one IPClaim leave a second IPAddress until one removes it). A read
    // the API server does not answer (load average 20 drops a connection now and then) counts as no progress: the
    // stall bound still runs, and the failure names the last refusal.
    let lastRefusal = 'none';
    const progressRead = async (read: () => Promise<number>): Promise<number> => {
      try {
        return await read();
      } catch (error) {
        lastRefusal = error instanceof Error ? error.message.slice(0, 300) : String(error);
        return Number.POSITIVE_INFINITY;
      }
    };
    let lastCounts = 'not read yet';
    const unserved = async (): Promise<number> => {
      const metal3Served = (await client.listAll(METAL3_CLAIM_RESOURCE, { namespace: ns })).items.filter(
        (object) => object.status?.address?.name,
      ).length;
      const capiServed = (await client.listAll(CLAIMS, { namespace: ns })).items.filter((object) =>
        field(object, 'status', 'addressRef', 'name'),
      ).length;
      const held = (await heldAddresses()).length;
      lastCounts = `${metal3Served} IPClaims and ${capiServed} IPAddressClaims served, ${held} IPAddresses`;
      return ipClaims.length - metal3Served + (capiClaims.length - capiServed) + Math.abs(held - total);
    };
    // No deadline on the total: the wait fails only when nothing more was served for the controllers' own bound.
    const binding = await untilNoneRemain(
      `all ${total} claims of both APIs served, one IPAddress each`,
      () => progressRead(unserved),
      {
        stallMs: CONTROLLER_STALL_MS,
        report: async () => `last read: ${lastCounts}; the API server's last refusal: ${lastRefusal}`,
      },
    );
    const bound = Date.now();
    chaos = false;
    await killing;

    const metal3Claims = (await read('list IPClaims', () => client.listAll(METAL3_CLAIM_RESOURCE, { namespace: ns })))
      .items;
    const capiClaimObjects = (await read('list IPAddressClaims', () => client.listAll(CLAIMS, { namespace: ns })))
      .items;
    const held = await read('list IPAddresses', heldAddresses);
    // Every claim of both APIs names an IPAddress of its own API that exists and names it back.
    const metal3ByName = new Map(held.filter((h) => h.api === 'metal3').map((h) => [h.name, h]));
    const capiByName = new Map(held.filter((h) => h.api === 'capi').map((h) => [h.name, h]));
    const unbound = [
      ...metal3Claims
        .filter((object) => metal3ByName.get(object.status?.address?.name ?? '')?.claimName !== object.metadata.name)
        .map((object) => `IPClaim ${object.metadata.name}`),
      ...capiClaimObjects
        .filter(
          (object) =>
            capiByName.get(String(field(object, 'status', 'addressRef', 'name')))?.claimName !== object.metadata.name,
        )
        .map((object) => `IPAddressClaim ${object.metadata.name}`),
    ];
    expect(unbound).toEqual([]);
    // No address twice, across both APIs.
    const texts = held.map((h) => h.address);
    expect(texts.filter((text, index) => texts.indexOf(text) !== index)).toEqual([]);
    expect(new Set(texts).size).toBe(total);
    // Every IPAddress is backed by the one live ledger entry of its address, held for its claim's API, name and uid.
    const uidOf = new Map<string, string>([
      ...metal3Claims.map((object): [string, string] => [`metal3/${object.metadata.name}`, object.metadata.uid ?? '']),
      ...capiClaimObjects.map((object): [string, string] => [
        `capi/${object.metadata.name}`,
        object.metadata.uid ?? '',
      ]),
    ]);
    const entries = (await read('list ledgers', () => client.listAll(LEDGER_RESOURCE))).items
      .flatMap((ledger) => ledger.spec.entries ?? [])
      .filter((entry) => entry.claimRef.namespace === ns && entry.releasedAt === undefined);
    expect(entries).toHaveLength(total);
    const unbacked = held.filter((h) => {
      const backing = entries.filter((entry) => entry.address === h.address);
      const [entry] = backing;
      return (
        backing.length !== 1 ||
        entry?.claimRef.name !== h.claimName ||
        entry.claimRef.uid !== uidOf.get(`${h.api}/${h.claimName}`) ||
        (entry.claimRef.apiGroup === 'ipam.metal3.io') !== (h.api === 'metal3')
      );
    });
    expect(unbacked.map((h) => `${h.api} ${h.name} ${h.address}`)).toEqual([]);
    const kills = replicas.reduce((sum, replica) => sum + replica.kills, 0);
    console.log(
      `[metal3 chaos] ${ipClaims.length} IPClaims + ${capiClaims.length} IPAddressClaims created in ` +
        `${((created - started) / 1000).toFixed(1)} s, all bound after ${((bound - started) / 1000).toFixed(1)} s ` +
        `(longest stretch without one more served ${(binding.longestStallMs / 1000).toFixed(1)} s of the ` +
        `${CONTROLLER_STALL_MS / 1000} s allowed) through ${kills} SIGKILLs ` +
        `(${replicas.map((replica) => `${replica.name}:${replica.kills}`).join(' ')}); ` +
        `${new Set(texts).size} distinct addresses, ${entries.length} ledger entries`,
    );

    // Release everything at once, both APIs; one replica is killed once more while they release.
    const deleting = forEachLimited(
      [
        ...ipClaims.map(
          ({ name }) =>
            () =>
              client.delete(METAL3_CLAIM_RESOURCE, { namespace: ns, name }),
        ),
        ...capiClaims.map((name) => () => client.delete(CLAIMS, { namespace: ns, name })),
      ],
      20,
      async (remove) => {
        await answered('delete a claim', remove);
      },
    );
    await delay(1_000 + random() * 2_000);
    const victim = replicas[Math.floor(random() * replicas.length)] as Replica;
    await victim.process?.stop('SIGKILL');
    victim.kills += 1;
    start(victim);
    await deleting;
    const remaining = async (): Promise<{ claims: number; addresses: number; entries: number }> => ({
      claims:
        (await client.listAll(METAL3_CLAIM_RESOURCE, { namespace: ns })).items.length +
        (await client.listAll(CLAIMS, { namespace: ns })).items.length,
      addresses: (await heldAddresses()).length,
      entries: (await client.listAll(LEDGER_RESOURCE)).items
        .flatMap((ledger) => ledger.spec.entries ?? [])
        .filter((entry) => entry.claimRef.namespace === ns).length,
    });
    let lastLeft = 'not read yet';
    const releasing = await untilNoneRemain(
      'every claim, IPAddress (both APIs) and ledger entry gone',
      () =>
        progressRead(async () => {
          const left = await remaining();
          lastLeft = JSON.stringify(left);
          return left.claims + left.addresses + left.entries;
        }),
      {
        stallMs: CONTROLLER_STALL_MS,
        report: async () => `last read: ${lastLeft}; the API server's last refusal: ${lastRefusal}`,
      },
    );
    expect(await read('count what is left', remaining)).toEqual({ claims: 0, addresses: 0, entries: 0 });
    console.log(
      `[metal3 chaos] released everything ${((Date.now() - bound) / 1000).toFixed(1)} s after the last bind ` +
        `(longest stretch without one more object gone ${(releasing.longestStallMs / 1000).toFixed(1)} s)`,
    );
  });
});
