/**
 * Background releases against the real API server: releases of one ledger submitted one after another (as the
 * deletions of a burst queue them) wait for each other and share one compare-and-swap write, and two writers
 * releasing the same entries (two active replicas) cost at most a conflict per batch, not one per entry. Counted by
 * the writers themselves; nothing here is timed: how many coalescing windows the submissions could span is bounded by
 * how long they took to submit (a busy machine stretches the 5 ms between them), and the bounds are per window. On a
 * control plane of the file's own (see usePrivateControlPlane): the entries name claims that do not exist, and no
 * other writer may conflict with the writers counted here. Each test uses an address block of its own.
 */
import { randomInt } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { type LedgerPoolReference, TALLY_GROUP, TALLY_IP_POOL_KIND } from '@tally-ipam/api-types';
import type { Client } from '@tally-ipam/controller-kit';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ADDRESS_BLOCK_BITS,
  AddressLedgers,
  addressEntryKey,
  type EntryHolder,
  type HeldUnit,
  LEDGER_RESOURCE,
  ledgerNameOf,
  RELEASE_COALESCE_MS,
} from '../src/index.js';
import { getOrUndefined, useLedgerWriters, usePrivateControlPlane } from './support.js';

/**
 * Releases per test: every address of one ledger's block but its first and last (30 of 32), submitted 5 ms apart, so
 * about a sixth of the shortest coalescing window.
 */
const RELEASES = 2 ** ADDRESS_BLOCK_BITS - 2;
const POOL: LedgerPoolReference = {
  apiGroup: TALLY_GROUP,
  kind: TALLY_IP_POOL_KIND,
  namespace: 'release-test',
  name: 'pool',
};

const kubeConfig = usePrivateControlPlane();
const { writer, clients } = useLedgerWriters(kubeConfig);

let blocks: number[] = [];
beforeAll(() => {
  // Distinct /24s of 10.221.0.0/16 for this run's tests.
  const start = randomInt(0, 249);
  blocks = [start, start + 1, start + 2];
});

function unit(block: number, last: number): HeldUnit {
  const address = `10.221.${block}.${last}`;
  return { address, prefix: 24, isPrefix: false, entryKey: addressEntryKey(address) };
}

function holder(index: number): EntryHolder {
  return { namespace: 'release-test', name: `claim-${index}`, uid: `uid-${index}-${randomInt(0, 1_000_000)}` };
}

/** Holds RELEASES addresses of the block in one write; returns the units and their holders. */
async function holdMany(ledgers: AddressLedgers, block: number): Promise<Array<[HeldUnit, EntryHolder]>> {
  const held = Array.from({ length: RELEASES }, (_, index) => [unit(block, index + 1), holder(index)] as const);
  const results = await Promise.all(held.map(([each, by]) => ledgers.hold(each, POOL, by, 0)));
  expect(results.every((result) => result.ok)).toBe(true);
  // All in one ledger: the releases below are of one ledger.
  expect(new Set(held.map(([each]) => ledgerNameOf(each))).size).toBe(1);
  return held.map(([each, by]) => [each, by]);
}

/**
 * Submits every release in the background, one every 5 ms, as a burst of deletions queues them. Returns how many
 * coalescing windows the submissions could have opened: a window waits at least RELEASE_COALESCE_MS from its first
 * release, and a release joins the open window unless that window's write has begun, so each window after the first
 * began with a release submitted at least RELEASE_COALESCE_MS after the previous window's first. On a quiet machine
 * the releases take about 150 ms: one window.
 */
async function releaseOneByOne(ledgers: AddressLedgers, held: Array<[HeldUnit, EntryHolder]>): Promise<number> {
  const answers: Promise<unknown>[] = [];
  let firstAt: number | undefined;
  let lastAt = 0;
  for (const [each, by] of held) {
    lastAt = performance.now();
    firstAt ??= lastAt;
    answers.push(ledgers.release(each, by.uid, undefined, { coalesce: true }));
    expect(ledgers.isReleasing(each, by.uid)).toBe(true);
    await delay(5);
  }
  await Promise.all(answers);
  for (const [each, by] of held) expect(ledgers.isReleasing(each, by.uid)).toBe(false);
  return Math.floor((lastAt - (firstAt ?? lastAt)) / RELEASE_COALESCE_MS) + 1;
}

describe('background releases of one ledger', () => {
  it(`share a write: ${RELEASES} releases submitted one by one`, async () => {
    const ledgers = writer();
    const block = blocks[0] as number;
    const held = await holdMany(ledgers, block);
    const before = ledgers.writes;
    const windows = await releaseOneByOne(ledgers, held);
    // Every entry released: the ledger, emptied, is deleted by the write that emptied it.
    expect(
      await getOrUndefined(() => (clients[0] as Client).get(LEDGER_RESOURCE, { name: ledgerNameOf(unit(block, 1)) })),
    ).toBe(undefined);
    // One write per window the releases spanned (one on a quiet machine); written as they came, it was one per
    // release or so.
    console.info(`${RELEASES} releases in ${windows} coalescing window(s): ${ledgers.writes - before} write(s)`);
    expect(ledgers.writes - before).toBeLessThanOrEqual(windows);
    expect(ledgers.conflicts).toBe(0);
  });

  it('released by two writers at once: at most a conflict per batch, never one per entry', async () => {
    const first = writer();
    const second = writer();
    const block = blocks[1] as number;
    const held = await holdMany(first, block);
    // The second writer has seen the ledger with every entry held (as a replica's informer has).
    expect(await second.liveEntry(ledgerNameOf(unit(block, 1)), unit(block, 1).entryKey)).toBeDefined();
    const writesBefore = first.writes + second.writes;
    const windows = await Promise.all([releaseOneByOne(first, held), releaseOneByOne(second, held)]);
    // Windows beyond each writer's first (none on a quiet machine): each may cost a write, and a conflict and its retry.
    const extraWindows = windows.reduce((sum, each) => sum + each - 1, 0);
    expect(
      await getOrUndefined(() => (clients[0] as Client).get(LEDGER_RESOURCE, { name: ledgerNameOf(unit(block, 1)) })),
    ).toBe(undefined);
    const writes = first.writes + second.writes - writesBefore;
    const conflicts = first.conflicts + second.conflicts;
    console.info(
      `two writers releasing ${RELEASES} entries in ${windows.join(' and ')} window(s): ${writes} writes, ` +
        `${conflicts} of them lost to the other`,
    );
    expect(writes).toBeLessThanOrEqual(6 + 2 * extraWindows);
    expect(conflicts).toBeLessThanOrEqual(3 + extraWindows);
  });

  it('are written at once by flushPending (a graceful stop), however long the coalescing window', async () => {
    writer();
    const client = clients.at(-1) as Client;
    const ledgers = new AddressLedgers({ client, now: Date.now, releaseCoalesceMs: 3_600_000 });
    const block = blocks[2] as number;
    const held = await holdMany(ledgers, block);
    const ledgerName = ledgerNameOf(unit(block, 1));
    const answers = held.map(([each, by]) => ledgers.release(each, by.uid, undefined, { coalesce: true }));
    // Queued, not written: the window is an hour.
    expect(ledgers.isReleasing(unit(block, 1), held[0]?.[1].uid ?? '')).toBe(true);
    const writesBefore = ledgers.writes;
    await ledgers.flushPending();
    expect((await Promise.all(answers)).every((result) => result.ok)).toBe(true);
    expect(ledgers.writes - writesBefore).toBe(1);
    // Every entry released: the ledger held only these, so it is gone.
    expect(await getOrUndefined(() => client.get(LEDGER_RESOURCE, { name: ledgerName }))).toBeUndefined();
    await ledgers.flushPending();
    expect(ledgers.writes - writesBefore).toBe(1);
  });
});
