import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Cache, Client, isAlreadyExists, type KubeObject } from '@tally-ipam/controller-kit';
import { createTestNamespace, type TestNamespace, testEnv } from '@tally-ipam/testenv/vitest';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { ChaosReplica } from './chaos-replicas.js';
import { CONTROLLER_STALL_MS, untilNoneRemain } from './progress.js';
import { forEachLimited, seededRandom } from './random.js';
import { ADDRESSES, CLAIMS, CLUSTERS, claim, cluster, field, ipPool, LEDGERS, POOLS } from './support.js';

const CLAIM_COUNT = Number(process.env.CHAOS_CLAIMS ?? 2000);
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000_007);

/** How many times the suite's 2 000 claims a run makes: pools and kills grow with it (CHAOS_CLAIMS=10000 → 5). */
const SCALE = Math.max(1, Math.ceil(CLAIM_COUNT / 2000));
/** /24 blocks per pool: 8 (2 048 addresses) for the suite's 2 000 claims, scaled up for a larger CHAOS_CLAIMS. */
const POOL_BLOCKS = 8 * SCALE;
/**
 * SIGKILLs while the claims are being bound, at most (the suite's runs took 16–19); they stop sooner once every claim
 * is bound. A number of kills rather than a stretch of time: on a loaded machine two minutes of kills can be all of
 * a run, on a quiet one a fraction of it.
 */
const MAX_KILLS = 16 * SCALE;

/**
 * The only deadline of each phase: the longest the claims may go without one more of them bound (or, releasing, one
 * more object gone) while the code works as designed (see CONTROLLER_STALL_MS). Longer without progress is a hang
 * whatever the load; a slow run that keeps progressing passes however long it takes. (A fixed 300 s for binding
 * decided the outcome at load 15–20: two replicas bound ~5 claims/s there, steadily to the end, and the claims left
 * were the last of their queues, being bound when the deadline struck.)
 */
const STALL_MS = CONTROLLER_STALL_MS;
/** vitest's own bound, a backstop for an await no progress check covers; every phase fails by itself on a stall. */
const TEST_TIMEOUT_MS = 3 * 3_600_000 * SCALE;

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

describe('chaos: two replicas without leader election, SIGKILLed at random', () => {
  let namespace: TestNamespace;
  let replicas: ChaosReplica[] = [];

  let stopWatching: (() => Promise<void>) | undefined;

  afterAll(async () => {
    await stopWatching?.();
    for (const replica of replicas) {
      if (replica.process && replica.process.child.exitCode === null) await replica.process.stop('SIGKILL');
    }
    await namespace?.delete();
  });

  it(`binds ${CLAIM_COUNT} claims to distinct addresses and releases every address and ledger entry`, {
    timeout: TEST_TIMEOUT_MS,
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
    const claimInformer = cache.informerFor(CLAIMS, { namespace: ns });
    const claimStore = claimInformer.store;
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

    // Info level: the kill schedule reads each replica's progress from its claim controller's log lines (kept in
    // memory, shown only when the test fails), and the failure report its queue metrics.
    const args = [
      '--kubeconfig',
      env.kubeconfigPath,
      '--namespace',
      ns,
      '--insecure-diagnostics',
      '--diagnostics-address=127.0.0.1:0',
      '--health-probe-bind-address=0',
      '--webhook-port=0',
      '--log-level=info',
    ];
    // CHAOS_LOG_DIR: keep every replica's log and the binding's progress there, for reading a run afterwards.
    const logDir = process.env.CHAOS_LOG_DIR;
    replicas = ['a', 'b'].map((name) => new ChaosReplica(name, args, logDir));
    for (const replica of replicas) replica.start();

    // Every 4-10 s kill a replica that has synced and allocated since its last start, and bring it back 0.3-2 s later.
    // Killing on the clock alone starved the run at load 15-20: a replica needed longer to boot and list than the time
    // to the next kill, so for two minutes neither replica bound a claim, and the kills tested nothing but restarts.
    let chaos = true;
    let killsWhileBinding = 0;
    const killer = (async () => {
      while (chaos && killsWhileBinding < MAX_KILLS) {
        await delay(4_000 + random() * 6_000);
        let victims = replicas.filter((replica) => replica.working());
        while (chaos && victims.length === 0) {
          await delay(250);
          victims = replicas.filter((replica) => replica.working());
        }
        if (!chaos) break;
        const victim = victims[Math.floor(random() * victims.length)] as ChaosReplica;
        await victim.kill();
        killsWhileBinding += 1;
        await delay(300 + random() * 1_700);
        victim.start();
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
    // When the claims stop progressing, say whether the API server agrees with this test's watch (each at its own
    // resourceVersion: the list is read after the watch was, and binding goes on meanwhile), what the claims say, and
    // what each replica says of itself: a stuck replica, a stuck watch and a slow machine look alike otherwise.
    const unboundReport = async (): Promise<string> => {
      const watched = { left: unbound(), resourceVersion: claimInformer.lastSyncResourceVersion };
      const listed = await client.listAll(CLAIMS, { namespace: ns });
      const stuck = listed.items.filter((object) => !field(object, 'status', 'addressRef', 'name'));
      const sample = stuck.slice(0, 8).map((object) =>
        JSON.stringify({
          name: object.metadata.name,
          finalizers: object.metadata.finalizers ?? [],
          resourceVersion: object.metadata.resourceVersion,
          conditions: field(object, 'status', 'conditions') ?? [],
        }),
      );
      return [
        `this test's watch shows ${watched.left} claims unbound at resourceVersion ${watched.resourceVersion}; the ` +
          `API server lists ${stuck.length} at ${listed.resourceVersion}, the first of them (a list is in name order, ` +
          'the order a restarted replica queues the claims in):',
        ...sample,
        ...(await Promise.all(replicas.map((replica) => replica.describe()))),
      ].join('\n');
    };
    const progressLog = logDir ? createWriteStream(join(logDir, 'progress.log')) : undefined;
    const progressTimer = progressLog
      ? setInterval(() => {
          const allocations = replicas.map((replica) => `${replica.name}:${replica.totalAllocations()}`).join(' ');
          progressLog.write(
            `${new Date().toISOString()} unbound ${unbound()} kills ${killsWhileBinding} ${allocations}\n`,
          );
        }, 10_000)
      : undefined;
    const binding = await untilNoneRemain('every claim bound', unbound, {
      stallMs: STALL_MS,
      report: unboundReport,
    }).finally(() => {
      clearInterval(progressTimer);
      progressLog?.end();
    });
    chaos = false;
    await killer;
    const bound = Date.now();
    // The schedule only kills a replica its log shows at work: none at all would mean it no longer reads the log.
    expect(killsWhileBinding, 'SIGKILLs while the claims were being bound').toBeGreaterThan(0);

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
        `${((bound - started) / 1000).toFixed(1)} s (longest stretch without a new bind ` +
        `${(binding.longestStallMs / 1000).toFixed(1)} s of the ${STALL_MS / 1000} s allowed), ${kills} SIGKILLs ` +
        `(${replicas.map((r) => `${r.name}:${r.kills}`).join(' ')}), allocations ` +
        `${replicas.map((r) => `${r.name}:${r.totalAllocations()}`).join(' ')}, ${new Set(texts).size} distinct addresses`,
    );

    // Release everything (the replicas keep running; one is killed once more while they release).
    const deleting = forEachLimited(
      claims.map((object) => object.metadata.name),
      16,
      (name) => client.delete(CLAIMS, { namespace: ns, name }),
    );
    await delay(1_000 + random() * 2_000);
    const victim = replicas[Math.floor(random() * replicas.length)] as ChaosReplica;
    await victim.kill();
    victim.start();
    await deleting;
    const remaining = (): { claims: number; addresses: number; entries: number } => ({
      claims: claimStore.list().length,
      addresses: addressStore.list().length,
      entries: entriesOf(ledgerStore.list()).length,
    });
    const releasing = await untilNoneRemain(
      'every claim, IPAddress and ledger entry gone',
      () => {
        const left = remaining();
        return left.claims + left.addresses + left.entries;
      },
      {
        stallMs: STALL_MS,
        report: async () =>
          [
            `left in this test's watch: ${JSON.stringify(remaining())}`,
            ...(await Promise.all(replicas.map((replica) => replica.describe()))),
          ].join('\n'),
      },
    );
    const left = {
      claims: (await client.listAll(CLAIMS, { namespace: ns })).items.length,
      addresses: (await client.listAll(ADDRESSES, { namespace: ns })).items.length,
      entries: entriesOf((await client.listAll(LEDGERS)).items).length,
    };
    expect(left).toEqual({ claims: 0, addresses: 0, entries: 0 });
    console.log(
      `chaos: released everything ${((Date.now() - bound) / 1000).toFixed(1)} s after the last bind (longest stretch ` +
        `without one more object gone ${(releasing.longestStallMs / 1000).toFixed(1)} s)`,
    );
  });
});
