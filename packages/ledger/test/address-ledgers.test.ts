/**
 * TallyAddressLedgers against the real API server: the create-conflict and resourceVersion compare-and-swap decide
 * every race between writers (two replicas without leader election, pools with overlapping ranges), the holds in
 * flight for one block share one write, and a writer that lost its memory (a restart, SIGKILL) resumes from what the
 * API server holds. On a control plane of the file's own (see usePrivateControlPlane): the entries name claims that do
 * not exist, and the request counts must be this file's writers' alone. Each test uses an address block of its own.
 */
import { randomInt } from 'node:crypto';
import { CustomObjectsApi, setHeaderOptions } from '@kubernetes/client-node';
import {
  GLOBAL_TALLY_IP_POOL_KIND,
  type LedgerPoolReference,
  TALLY_GROUP,
  TALLY_IP_POOL_KIND,
} from '@tally-ipam/api-types';
import { type Client, isNotFound } from '@tally-ipam/controller-kit';
import { readRequestCounters, requestsBetween, sumRequests } from '@tally-ipam/testenv';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ADDRESS_BLOCK_BITS,
  type AddressLedgers,
  addressEntryKey,
  type EntryHolder,
  type HeldUnit,
  LEDGER_RESOURCE,
  ledgerNameOf,
  type OperationResult,
} from '../src/index.js';
import { testClient, useLedgerWriters, usePrivateControlPlane } from './support.js';

/** Addresses per ledger. */
const BLOCK = 2 ** ADDRESS_BLOCK_BITS;
const kubeConfig = usePrivateControlPlane();
const { writer, clients } = useLedgerWriters(kubeConfig);

let blocks: number[] = [];
beforeAll(() => {
  // Distinct /24s of 10.220.0.0/16 for this run's tests.
  const start = randomInt(0, 200);
  blocks = [start, start + 1, start + 2, start + 3, start + 4];
});

function unit(block: number, last: number): HeldUnit {
  const address = `10.220.${block}.${last}`;
  return { address, prefix: 24, isPrefix: false, entryKey: addressEntryKey(address) };
}

function holder(name: string): EntryHolder {
  return { namespace: 'ledger-test', name, uid: `uid-${name}-${randomInt(0, 1_000_000)}` };
}

/** Ledgers read and written without the provider's schema (as a person with kubectl would). */
const UNPARSED_LEDGERS = {
  apiVersion: LEDGER_RESOURCE.apiVersion,
  kind: LEDGER_RESOURCE.kind,
  plural: LEDGER_RESOURCE.plural,
  namespaced: false,
} as const;

const LEFT: LedgerPoolReference = {
  apiGroup: TALLY_GROUP,
  kind: TALLY_IP_POOL_KIND,
  namespace: 'ledger-test',
  name: 'left',
};
const RIGHT: LedgerPoolReference = { apiGroup: TALLY_GROUP, kind: GLOBAL_TALLY_IP_POOL_KIND, name: 'right' };

async function liveEntries(name: string, client: Client): Promise<Map<string, string>> {
  const ledger = await client.get(LEDGER_RESOURCE, { name });
  return new Map((ledger.spec.entries ?? []).map((entry) => [entry.key, entry.claimRef.uid]));
}

/** The entries of every ledger the units fall in (a /24 spans 256 / 2^ADDRESS_BLOCK_BITS ledgers). */
async function liveEntriesOf(units: readonly HeldUnit[], client: Client): Promise<Map<string, string>> {
  const entries = new Map<string, string>();
  for (const name of new Set(units.map(ledgerNameOf))) {
    try {
      for (const [key, uid] of await liveEntries(name, client)) entries.set(key, uid);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
  return entries;
}

describe('TallyAddressLedgers on the real API server', () => {
  it('two writers racing over overlapping pools hold every address for one claim only', async () => {
    const block = blocks[0] as number;
    const replicas = [writer(), writer()];
    // Pool "left" hands out .1–.40, the global pool "right" .25–.64: 16 addresses are in both.
    const candidates = { left: range(1, 40), right: range(25, 64) };
    const claims = Array.from({ length: 80 }, (_, index) => ({
      holder: holder(`c${index}`),
      pool: (index % 2 === 0 ? 'left' : 'right') as 'left' | 'right',
      replica: replicas[index % 4 < 2 ? 0 : 1] as AddressLedgers,
    }));
    const outcomes = await Promise.all(
      claims.map(async (claim) => {
        const mine = candidates[claim.pool];
        const offset = randomInt(0, mine.length);
        for (let step = 0; step < mine.length; step += 1) {
          const last = mine[(offset + step) % mine.length] as number;
          const result: OperationResult = await claim.replica.hold(
            unit(block, last),
            claim.pool === 'left' ? LEFT : RIGHT,
            claim.holder,
            0,
          );
          if (result.ok) return { claim, key: unit(block, last).entryKey };
        }
        return { claim, key: undefined };
      }),
    );
    const live = await liveEntriesOf(
      range(1, 64).map((last) => unit(block, last)),
      clients[0] as Client,
    );
    const served = outcomes.filter((outcome) => outcome.key !== undefined);
    // Each served claim holds the key it was told it holds; no key was told to two claims.
    for (const outcome of served) expect(live.get(outcome.key as string)).toBe(outcome.claim.holder.uid);
    expect(new Set(served.map((outcome) => outcome.key)).size).toBe(served.length);
    expect(live.size).toBe(served.length);
    // A claim that got nothing found every one of its candidates held.
    for (const outcome of outcomes.filter((candidate) => candidate.key === undefined)) {
      for (const last of candidates[outcome.claim.pool]) {
        expect(live.has(unit(block, last).entryKey)).toBe(true);
      }
    }
    expect(served.length).toBeGreaterThanOrEqual(64 - 24);
    expect(served.length).toBeLessThanOrEqual(64);
  });

  it('writes the holds in flight for one block together: 200 claims, one create per block', async () => {
    const block = blocks[1] as number;
    const ledgers = writer();
    const before = await readRequestCounters(kubeConfig());
    const results = await Promise.all(
      range(1, 200).map((last) => ledgers.hold(unit(block, last), LEFT, holder(`b${last}`), 0)),
    );
    const after = await readRequestCounters(kubeConfig());
    expect(results.every((result) => result.ok)).toBe(true);
    const ledgerWrites = sumRequests(
      requestsBetween(before, after).filter(
        (series) => series.resource === LEDGER_RESOURCE.plural && !['GET', 'LIST', 'WATCH'].includes(series.verb),
      ),
    );
    // Nothing else writes ledgers on this control plane; one create per block carries all of its holds.
    const units = range(1, 200).map((last) => unit(block, last));
    const ledgerCount = new Set(units.map(ledgerNameOf)).size;
    expect(ledgerCount).toBe(Math.ceil(201 / BLOCK));
    expect(ledgers.writes).toBe(ledgerCount);
    expect(ledgerWrites).toBeGreaterThanOrEqual(ledgerCount);
    expect((await liveEntriesOf(units, clients.at(-1) as Client)).size).toBe(200);
  });

  it('a writer without memory (restart, SIGKILL) resumes from the API server: same claim ours, others refused', async () => {
    const block = blocks[2] as number;
    const first = writer();
    const claim = holder('resumed');
    const other = holder('other');
    const taken = await first.hold(unit(block, 5), LEFT, claim, 0);
    expect(taken.ok).toBe(true);

    const name = ledgerNameOf(unit(block, 5));
    const version = (await clients[0]?.get(LEDGER_RESOURCE, { name }))?.metadata.resourceVersion;
    const restarted = writer();
    const again = await restarted.hold(unit(block, 5), LEFT, claim, 0);
    expect(again).toEqual(taken);
    // Nothing written: its create was refused (AlreadyExists), the ledger it read already held the entry.
    expect((await clients[0]?.get(LEDGER_RESOURCE, { name }))?.metadata.resourceVersion).toBe(version);
    const refused = await restarted.hold(unit(block, 5), RIGHT, other, 0);
    expect(refused).toMatchObject({ ok: false, holder: { claimRef: { uid: claim.uid } } });

    // Released and kept for a grace period: another claim waits for it to end, then takes it.
    await restarted.release(unit(block, 5), claim.uid, new Date());
    expect((await first.hold(unit(block, 5), RIGHT, other, 3_600_000)).ok).toBe(false);
    expect((await first.hold(unit(block, 5), RIGHT, other, 0)).ok).toBe(true);
    expect(await restarted.liveEntry(ledgerNameOf(unit(block, 5)), unit(block, 5).entryKey)).toMatchObject({
      claimRef: { uid: other.uid },
    });
  });

  it('deletes a ledger left without entries, and creates it again; stale copies only cost a re-read', async () => {
    const block = blocks[3] as number;
    const a = writer();
    const b = writer();
    const name = ledgerNameOf(unit(block, 7));
    const first = holder('first');
    const second = holder('second');
    expect((await a.hold(unit(block, 7), LEFT, first, 0)).ok).toBe(true);
    // b has no copy: its create fails with AlreadyExists, it reads and updates.
    expect((await b.hold(unit(block, 8), LEFT, second, 0)).ok).toBe(true);
    await b.release(unit(block, 8), second.uid);
    // a's copy is two versions old: its delete fails on the resourceVersion, it reads and deletes the current one.
    await a.release(unit(block, 7), first.uid);
    await expect(clients[0]?.get(LEDGER_RESOURCE, { name })).rejects.toMatchObject({ statusCode: 404 });
    // b's copy is of a deleted ledger: its update fails with NotFound, it creates the ledger anew.
    expect((await b.hold(unit(block, 9), LEFT, second, 0)).ok).toBe(true);
    expect([...(await liveEntries(name, clients[0] as Client)).values()]).toEqual([second.uid]);
  });

  it('an update of a full ledger stores managed fields of one line, not one per entry (the atomic list)', async () => {
    const block = blocks[4] as number;
    const ledgers = writer();
    // One create of half the block, then one update adding the other half: the update is what a list-map made costly.
    const half = BLOCK / 2;
    await Promise.all(range(0, half - 1).map((last) => ledgers.hold(unit(block, last), LEFT, holder(`m${last}`), 0)));
    await Promise.all(
      range(half, BLOCK - 1).map((last) => ledgers.hold(unit(block, last), LEFT, holder(`m${last}`), 0)),
    );
    expect(ledgers.writes).toBe(2);
    const live = await clients[0]?.get(LEDGER_RESOURCE, { name: ledgerNameOf(unit(block, 0)) });
    expect(live?.spec.entries).toHaveLength(BLOCK);
    const raw = await (clients[0] as Client).get(UNPARSED_LEDGERS, { name: ledgerNameOf(unit(block, 0)) });
    // A list-map keyed by `key` stored ~58 KB of managed fields for 256 entries (~230 bytes each); the atomic list
    // stores ~200 bytes whatever the count.
    expect(JSON.stringify(raw.metadata.managedFields ?? []).length).toBeLessThan(2_000);
  });
});

function range(first: number, last: number): number[] {
  return Array.from({ length: last - first + 1 }, (_, index) => first + index);
}

/** `kubectl get taddrledger`: the columns come from the summary the writer puts in `status` with the entries. */
function unitAt(address: string): HeldUnit {
  return { address, prefix: 24, isPrefix: false, entryKey: addressEntryKey(address) };
}

interface Table {
  kind: string;
  columnDefinitions: { name: string; priority: number }[];
  rows: { cells: unknown[] }[];
}

async function ledgerTable(name: string): Promise<Table> {
  const api = kubeConfig().makeApiClient(CustomObjectsApi);
  return (await api.getClusterCustomObject(
    { group: TALLY_GROUP, version: 'v1alpha1', plural: LEDGER_RESOURCE.plural, name },
    setHeaderOptions('Accept', 'application/json;as=Table;v=v1;g=meta.k8s.io'),
  )) as Table;
}

describe('kubectl get taddrledger', () => {
  it('shows the entry count, the numerically lowest and highest address and the pools, kept by every write', async () => {
    const ledgers = writer();
    // 10.222.0.10 sorts before 10.222.0.9 as key text: the columns must order by address, not by key.
    const units = ['10.222.0.9', '10.222.0.10', '10.222.0.30'].map(unitAt);
    const name = ledgerNameOf(units[0] as HeldUnit);
    expect(new Set(units.map(ledgerNameOf))).toEqual(new Set([name]));
    const [nine, ten, thirty] = units as [HeldUnit, HeldUnit, HeldUnit];
    for (const [held, pool, claim] of [
      [nine, LEFT, 'a'],
      [ten, RIGHT, 'b'],
      [thirty, LEFT, 'c'],
    ] as const) {
      expect((await ledgers.hold(held, pool, { namespace: 'team-a', name: claim, uid: `uid-${claim}` }, 0)).ok).toBe(
        true,
      );
    }
    const table = await ledgerTable(name);
    expect(table.kind).toBe('Table');
    expect(table.columnDefinitions.map((column) => column.name)).toEqual([
      'Name',
      'Entries',
      'First',
      'Last',
      'Pools',
      'Age',
    ]);
    expect(table.rows[0]?.cells.slice(0, 5)).toEqual([
      name,
      3,
      '10.222.0.9',
      '10.222.0.30',
      '["ledger-test/left","right"]',
    ]);

    // A release that removes an entry rewrites the summary in the same write.
    expect((await ledgers.release(thirty, 'uid-c')).ok).toBe(true);
    const client = testClient(kubeConfig());
    try {
      const stored = await client.get(LEDGER_RESOURCE, { name });
      expect(stored.status).toEqual({
        entries: 2,
        first: '10.222.0.9',
        last: '10.222.0.10',
        pools: ['ledger-test/left', 'right'],
      });
    } finally {
      client.close();
    }
  });
});
