import { setTimeout as delay } from 'node:timers/promises';
import { Cache, Client, isAlreadyExists, type KubeObject } from '@tally-ipam/controller-kit';
import { createTestNamespace, type TestNamespace, testEnv } from '@tally-ipam/testenv/vitest';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, startController } from './controller-process.js';
import { forEachLimited, seededRandom } from './random.js';
import { ADDRESSES, CLAIMS, CLUSTERS, claim, cluster, eventually, field, ipPool, LEDGERS, POOLS } from './support.js';

const CLAIM_COUNT = Number(process.env.CHAOS_CLAIMS ?? 2000);
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000_007);

/** How many times the suite's 2 000 claims a run makes: pools and deadlines grow with it (CHAOS_CLAIMS=10000 → 5). */
const SCALE = Math.max(1, Math.ceil(CLAIM_COUNT / 2000));
/** /24 blocks per pool: 8 (2 048 addresses) for the suite's 2 000 claims, scaled up for a larger CHAOS_CLAIMS. */
const POOL_BLOCKS = 8 * SCALE;
/** The longest stretch of random kills; binding usually finishes inside it, so kills hit it throughout. */
const CHAOS_MS = 120_000 * SCALE;

/**
 * Two pools whose ranges overlap by half (1 024 addresses at 2 000 claims), both picking at random so both keep landing
 * in the overlap:
 * uniqueness must come from the API server (the compare-and-swap writes of the address ledgers the two pools share), not from either replica's memory.
 */
const POOLS_UNDER_TEST = [
  { name: 'left', addresses: [`10.128.0.0-10.128.${POOL_BLOCKS - 1}.255`] },
  { name: 'right', addresses: [`10.128.${POOL_BLOCKS / 2}.0-10.128.${POOL_BLOCKS * 1.5 - 1}.255`] },
] as const;

/** The fields of a ledger entry this test reads. */
interface ChaosEntry {
  readonly address: string;
  readonly releasedAt?: string;
  readonly claimRef: { readonly namespace: string; readonly name: string; readonly uid: string };
}

interface Replica {
  readonly name: string;
  process: ControllerProcess | undefined;
  kills: number;
}

describe('chaos: two replicas without leader election, SIGKILLed at random', () => {
  let namespace: TestNamespace;
  const replicas: Replica[] = [
    { name: 'a', process: undefined, kills: 0 },
    { name: 'b', process: undefined, kills: 0 },
  ];

  let stopWatching: (() => Promise<void>) | undefined;

  afterAll(async () => {
    await stopWatching?.();
    for (const replica of replicas) {
      if (replica.process && replica.process.child.exitCode === null) await replica.process.stop('SIGKILL');
    }
    await namespace?.delete();
  });

  it(`binds ${CLAIM_COUNT} claims to distinct addresses and releases every address and ledger entry`, {
    timeout: 1_200_000 * SCALE,
  }, async () => {
    console.log(`chaos seed ${SEED} (replay with CHAOS_SEED=${SEED})`);
    const random = seededRandom(SEED);
    const env = testEnv();
    const client = new Client(env.kubeConfig, { fieldManager: 'chaos-test' });
    namespace = await createTestNamespace(env.kubeConfig, 'chaos');
    const ns = namespace.name;
    await client.create(CLUSTERS, cluster(ns, 'chaos'));
    for (const pool of POOLS_UNDER_TEST) {
      await client.create(
        POOLS,
        ipPool(ns, pool.name, { addresses: [...pool.addresses], prefix: 16, allocationStrategy: 'Random' }),
      );
    }

    const watching = new AbortController();
    const cache = new Cache({ kubeConfig: env.kubeConfig, logger: pino({ level: 'silent' }) });
    const claimStore = cache.informerFor(CLAIMS, { namespace: ns }).store;
    const addressStore = cache.informerFor(ADDRESSES, { namespace: ns }).store;
    const ledgerStore = cache.informerFor(LEDGERS).store;
    /** The ledger entries of this test's claims (the ledgers are cluster-wide, shared with nothing else here). */
    const entriesOf = (ledgers: readonly KubeObject[]): ChaosEntry[] =>
      ledgers
        .flatMap((ledger) => (field(ledger, 'spec', 'entries') as ChaosEntry[] | undefined) ?? [])
        .filter((entry) => entry.claimRef.namespace === ns);
    const cacheRun = cache.start(watching.signal);
    stopWatching = async () => {
      watching.abort();
      await cacheRun;
    };

    const args = [
      '--kubeconfig',
      env.kubeconfigPath,
      '--namespace',
      ns,
      '--metrics-bind-address=0',
      '--health-probe-bind-address=0',
      '--webhook-port=0',
      '--log-level=warn',
    ];
    const start = (replica: Replica): void => {
      replica.process = startController(args);
    };
    replicas.forEach(start);

    // Kill a random replica every 4-10 s and bring it back 0.3-2 s later, until told to stop. Kills much more often
    // than that leave a replica no time to relist the 2 000 claims before the next one, which tests nothing more.
    let chaos = true;
    const killer = (async () => {
      while (chaos) {
        await delay(4_000 + random() * 6_000);
        if (!chaos) break;
        const replica = replicas[Math.floor(random() * replicas.length)] as Replica;
        await replica.process?.stop('SIGKILL');
        replica.kills += 1;
        await delay(300 + random() * 1_700);
        start(replica);
      }
    })();

    const started = Date.now();
    const names = Array.from({ length: CLAIM_COUNT }, (_, index) => `claim-${index}`);
    await forEachLimited(names, 16, async (name) => {
      const pool = POOLS_UNDER_TEST[
        Math.floor(random() * POOLS_UNDER_TEST.length)
      ] as (typeof POOLS_UNDER_TEST)[number];
      try {
        await client.create(CLAIMS, claim(ns, name, { kind: 'TallyIPPool', name: pool.name }, 'chaos'));
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
      }
    });
    const created = Date.now();

    // Progress is followed through watches: listing 2 000 claims every second would load the API server more than
    // the replicas do. The final checks read from the API server directly.
    const unbound = (): number =>
      CLAIM_COUNT - claimStore.list().filter((object) => field(object, 'status', 'addressRef', 'name')).length;
    // Keep killing while the claims are being bound (up to CHAOS_MS), then let the replicas finish undisturbed.
    // When claims stay unbound, say whether the API server agrees with this test's watch, what the claims say, and
    // what the replicas last logged: a stuck replica, a stuck watch and a slow machine look alike otherwise.
    const unboundReport = async (): Promise<string> => {
      const serverClaims = (await client.listAll(CLAIMS, { namespace: ns })).items;
      const stuck = serverClaims.filter((object) => !field(object, 'status', 'addressRef', 'name'));
      const sample = stuck.slice(0, 8).map((object) =>
        JSON.stringify({
          name: object.metadata.name,
          finalizers: object.metadata.finalizers ?? [],
          resourceVersion: object.metadata.resourceVersion,
          conditions: field(object, 'status', 'conditions') ?? [],
        }),
      );
      const logs = replicas.map(
        (replica) =>
          `replica ${replica.name} (pid ${replica.process?.pid}, exit ${replica.process?.child.exitCode}):\n` +
          `${(replica.process?.lines ?? []).slice(-15).join('\n')}\n${(replica.process?.stderr() ?? '').slice(-2_000)}`,
      );
      return [
        `the API server has ${stuck.length} unbound claims (this test's watch: ${unbound()})`,
        ...sample,
        ...logs,
      ].join('\n');
    };
    const chaosDeadline = Date.now() + CHAOS_MS;
    while (Date.now() < chaosDeadline && unbound() > 0) await delay(1_000);
    chaos = false;
    await killer;
    try {
      await eventually(
        'every claim bound',
        async () => {
          const left = unbound();
          if (left > 0) throw new Error(`${left} claims unbound`);
        },
        { timeoutMs: 300_000 * SCALE, intervalMs: 1_000 },
      );
    } catch (error) {
      throw new Error(`${error instanceof Error ? error.message : String(error)}\n${await unboundReport()}`);
    }
    const bound = Date.now();

    const claims = (await client.listAll(CLAIMS, { namespace: ns })).items;
    const addresses = (await client.listAll(ADDRESSES, { namespace: ns })).items;
    const byName = new Map(addresses.map((object) => [object.metadata.name, object]));
    for (const object of claims) {
      const addressName = field(object, 'status', 'addressRef', 'name');
      expect(
        typeof addressName === 'string' && byName.has(addressName),
        `${object.metadata.name} → ${String(addressName)}`,
      ).toBe(true);
    }
    const texts = addresses.map((object) => String(field(object, 'spec', 'address')));
    const duplicates = texts.filter((text, index) => texts.indexOf(text) !== index);
    expect(duplicates).toEqual([]);
    expect(addresses).toHaveLength(CLAIM_COUNT);
    // Every IPAddress is backed by the ledger entry of its address, held for its claim's uid.
    const uidOf = new Map(claims.map((object) => [object.metadata.name, object.metadata.uid]));
    const holderOf = new Map(
      entriesOf((await client.listAll(LEDGERS)).items)
        .filter((entry) => entry.releasedAt === undefined)
        .map((entry) => [entry.address, entry.claimRef.uid]),
    );
    const unbacked = addresses.filter(
      (object) => holderOf.get(String(field(object, 'spec', 'address'))) !== uidOf.get(object.metadata.name),
    );
    expect(unbacked.map((object) => object.metadata.name)).toEqual([]);
    const kills = replicas.reduce((sum, replica) => sum + replica.kills, 0);
    console.log(
      `chaos: ${CLAIM_COUNT} claims created in ${((created - started) / 1000).toFixed(1)} s, all bound after ` +
        `${((bound - started) / 1000).toFixed(1)} s, ${kills} SIGKILLs (${replicas.map((r) => `${r.name}:${r.kills}`).join(' ')}), ` +
        `${new Set(texts).size} distinct addresses`,
    );

    // Release everything (the replicas keep running; one is killed once more while they release).
    const deleting = forEachLimited(
      claims.map((object) => object.metadata.name),
      16,
      (name) => client.delete(CLAIMS, { namespace: ns, name }),
    );
    await delay(1_000 + random() * 2_000);
    const victim = replicas[Math.floor(random() * replicas.length)] as Replica;
    await victim.process?.stop('SIGKILL');
    victim.kills += 1;
    start(victim);
    await deleting;
    await eventually(
      'every claim, IPAddress and ledger entry gone',
      async () => {
        const remaining = {
          claims: claimStore.list().length,
          addresses: addressStore.list().length,
          entries: entriesOf(ledgerStore.list()).length,
        };
        if (remaining.claims + remaining.addresses + remaining.entries > 0) throw new Error(JSON.stringify(remaining));
      },
      // Releasing with two active replicas took 472 s under load 9-12, and 405 s at load 10-17 with the releases batched
      // per ledger (2026-11-24): both replicas do every deletion. The deadline is the kind lane's.
      { timeoutMs: 600_000 * SCALE, intervalMs: 1_000 },
    );
    const left = {
      claims: (await client.listAll(CLAIMS, { namespace: ns })).items.length,
      addresses: (await client.listAll(ADDRESSES, { namespace: ns })).items.length,
      entries: entriesOf((await client.listAll(LEDGERS)).items).length,
    };
    expect(left).toEqual({ claims: 0, addresses: 0, entries: 0 });
    console.log(`chaos: released everything ${((Date.now() - bound) / 1000).toFixed(1)} s after the last bind`);
  });
});
