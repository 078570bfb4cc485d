import { readFileSync } from 'node:fs';
import { HOLD_AHEAD_LIMIT, HOLD_AHEAD_LOW_WATER } from '@tally-ipam/ipam-provider';
import { readBenchTable } from '@tally-ipam/testenv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { writesTo } from '../bench/api-requests.js';
import {
  BLOCK_BITS_LINE,
  BLOCK_SIZE_VARIANTS,
  refusePrefilledVariants,
  VARIANT_BLOCK_BITS,
  withBlockBits,
} from '../bench/block-size-variants.js';
import { type HoldAheadLimits, HoldAheadPlan, type HoldDecision } from '../bench/hold-ahead-plan.js';
import { HEADER, README_PATH, tableRows } from '../bench/readme-table.js';

const TALLY: HoldAheadLimits = { limit: HOLD_AHEAD_LIMIT, lowWater: HOLD_AHEAD_LOW_WATER };

interface Served {
  /** Ledger writes the plan asked for: one per served claim whose decision holds anything. */
  readonly writes: number;
  /** How often each claim was held. */
  readonly holds: Map<string, number>;
  /** Claims that found their address held ahead. */
  readonly heldAhead: number;
}

/**
 * Serves a burst of `claims` claims of one pool the way the raw writer does: `workers` take claims off the queue in
 * order, and `order` picks which worker's claim is served next (workers finish out of order).
 */
function serveBurst(
  claims: number,
  workers: number,
  order: readonly number[],
  limits = TALLY,
  check?: (claim: string, decision: HoldDecision, waiting: readonly string[], plan: HoldAheadPlan) => void,
): Served {
  const plan = new HoldAheadPlan(limits);
  const queue = Array.from({ length: claims }, (_, index) => `claim-${index}`);
  const taken: string[] = [];
  const holds = new Map<string, number>();
  let writes = 0;
  let heldAhead = 0;
  let step = 0;
  while (queue.length > 0 || taken.length > 0) {
    while (taken.length < workers && queue.length > 0) taken.push(queue.shift() as string);
    const pick = (order[step % Math.max(order.length, 1)] ?? 0) % taken.length;
    step += 1;
    const [claim] = taken.splice(pick, 1) as [string];
    const decision = plan.serve('pool', claim, queue);
    check?.(claim, decision, queue, plan);
    if (decision.hold.length > 0) writes += 1;
    if (decision.wasHeldAhead) heldAhead += 1;
    for (const held of decision.hold) holds.set(held, (holds.get(held) ?? 0) + 1);
  }
  return { writes, holds, heldAhead };
}

describe("the tally-writes ceiling's holding ahead (bench/hold-ahead-plan.ts)", () => {
  it('holds every claim of a 2,000-claim burst exactly once, with Tally`s bounds, in well under 0.1 writes per claim', () => {
    const workers = 10;
    const burst = serveBurst(2_000, workers, [0]);
    expect(burst.holds.size).toBe(2_000);
    expect([...burst.holds.values()].every((count) => count === 1)).toBe(true);
    // The claims the workers took before the first write hold for themselves; after that one write holds up to
    // LIMIT ahead and a top-up follows every LIMIT − LOW_WATER claims.
    const topUps = Math.ceil((2_000 - HOLD_AHEAD_LIMIT) / (HOLD_AHEAD_LIMIT - HOLD_AHEAD_LOW_WATER));
    expect(burst.writes).toBeLessThanOrEqual(workers + topUps + 1);
    expect(burst.writes / 2_000).toBeLessThanOrEqual(0.04);
    expect(burst.heldAhead).toBeGreaterThanOrEqual(2_000 - workers);
  });

  it('never holds a claim twice nor more than the limit ahead, whatever order the workers finish in', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 600 }),
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.nat(50), { maxLength: 40 }),
        fc
          .integer({ min: 1, max: 80 })
          .chain((limit) => fc.record({ limit: fc.constant(limit), lowWater: fc.integer({ min: 0, max: limit }) })),
        (claims, workers, order, limits) => {
          const held = new Set<string>();
          const burst = serveBurst(claims, workers, order, limits, (claim, decision, waiting, plan) => {
            // A claim served is held by this write or by an earlier one, never by both, and never twice.
            expect(decision.wasHeldAhead).toBe(held.has(claim));
            for (const id of decision.hold) {
              expect(held.has(id)).toBe(false);
              held.add(id);
              // Held ahead only for claims still waiting.
              if (id !== claim) expect(waiting).toContain(id);
            }
            expect(held.has(claim)).toBe(true);
            expect(plan.heldAhead('pool')).toBeLessThanOrEqual(limits.limit);
          });
          expect(burst.holds.size).toBe(claims);
        },
      ),
    );
  });

  it('keeps pools apart: a hold ahead of one pool never serves a claim of another', () => {
    const plan = new HoldAheadPlan(TALLY);
    const first = plan.serve('a', 'a-0', ['a-1', 'a-2']);
    expect(first).toEqual({ wasHeldAhead: false, hold: ['a-0', 'a-1', 'a-2'] });
    expect(plan.serve('b', 'a-1', [])).toEqual({ wasHeldAhead: false, hold: ['a-1'] });
    expect(plan.heldAhead('a')).toBe(2);
  });

  it('refuses limits Tally could not have', () => {
    expect(() => new HoldAheadPlan({ limit: 0, lowWater: 0 })).toThrow(/limit must be a positive integer, got 0/);
    expect(() => new HoldAheadPlan({ limit: 4, lowWater: 5 })).toThrow(/low water .* limit 4, got 5/);
  });
});

describe('writes to one resource, from apiserver_request_total by target (bench/api-requests.ts)', () => {
  it('sums the mutating verbs of that resource, failures apart, and nothing else', () => {
    const byTarget = new Map([
      ['PUT tallyaddressledgers', 60],
      ['POST tallyaddressledgers', 2],
      ['POST tallyaddressledgers 409', 1],
      ['GET tallyaddressledgers', 5],
      ['LIST tallyaddressledgers', 1],
      ['POST ipaddresses', 7],
      ['PATCH ipaddressclaims/status', 2000],
    ]);
    expect(Object.fromEntries(writesTo(byTarget, 'tallyaddressledgers'))).toEqual({
      PUT: 60,
      POST: 2,
      'POST 409': 1,
    });
    expect(writesTo(byTarget, 'ipaddressclaims').size).toBe(0);
  });
});

describe("the README's table of the benchmark (bench:claims)", () => {
  it('has the header the bench writes, so that a run replaces its rows instead of discarding the others', () => {
    const table = readBenchTable(readFileSync(README_PATH, 'utf8'), 'claims');
    expect(table?.header).toEqual(HEADER);
    expect(table?.rows.length).toBeGreaterThan(0);
  });

  it("writes rows as wide as the header, ratios of Tally's figure over the other's", () => {
    const [row] = tableRows(
      [
        {
          scenario: 'burst, 50 claims (claims/s)',
          medians: new Map([
            ['tally', 10],
            ['contract-minimum', 20],
          ]),
        },
      ],
      1,
      new Date('2026-12-02T12:00:00Z'),
    );
    expect(row).toHaveLength(HEADER.length);
    expect(row?.slice(0, 2)).toEqual(['burst, 50 claims (claims/s)', '10.0']);
    expect(row?.[HEADER.indexOf('tally / contract-minimum')]).toBe('0.50×');
    expect(row?.[HEADER.indexOf('tally / reference')]).toBe('—');
    expect(row?.at(-1)).toMatch(/^2026-12-02, 1 round; \d+ cores/);
  });
});

describe("the block-size variants' bundles (bench/block-size-variants.ts)", () => {
  const text = fc.string({ maxLength: 200 }).filter((part) => !part.includes('ADDRESS_BLOCK_BITS'));

  it('replaces the one line that sets the block size and nothing else', () => {
    fc.assert(
      fc.property(text, text, fc.integer({ min: 1, max: 8 }), (before, after, bits) => {
        const patched = withBlockBits(`${before}${BLOCK_BITS_LINE}${after}`, bits, '/tmp/main.mjs');
        expect(patched).toBe(`${before}var ADDRESS_BLOCK_BITS = ${bits};${after}`);
      }),
    );
  });

  it('refuses a bundle without the line, or with it twice, naming the bundle and the count', () => {
    expect(() => withBlockBits('var ADDRESS_BLOCK_BITS2 = 8;', 6, '/tmp/b/main.mjs')).toThrow(
      '/tmp/b/main.mjs: "var ADDRESS_BLOCK_BITS = 8;" occurs 0 times, expected exactly once',
    );
    expect(() => withBlockBits(`${BLOCK_BITS_LINE}\n${BLOCK_BITS_LINE}`, 6, '/tmp/b/main.mjs')).toThrow(
      /\/tmp\/b\/main\.mjs: .* occurs 2 times, expected exactly once/,
    );
  });

  it('refuses a block larger than a ledger holds', () => {
    expect(() => withBlockBits(BLOCK_BITS_LINE, 9, 'main.mjs')).toThrow(/from 1 to 8 .*got 9/);
  });

  it('names each variant by its addresses per ledger', () => {
    for (const variant of BLOCK_SIZE_VARIANTS) expect(variant).toBe(`tally-${2 ** VARIANT_BLOCK_BITS[variant]}`);
  });

  it('refuses a variant in a scenario that starts on a prefill, naming both', () => {
    expect(() => refusePrefilledVariants(['burst', 'steady', 'many-pools'], ['tally', 'tally-16'])).not.toThrow();
    expect(() => refusePrefilledVariants(['full-pool'], ['tally', 'contract-minimum'])).not.toThrow();
    expect(() => refusePrefilledVariants(['burst', 'full-pool'], ['tally', 'tally-64'])).toThrow(
      /contender tally-64 cannot run scenario full-pool/,
    );
    expect(() => refusePrefilledVariants(['memory'], ['tally-32'])).toThrow(
      /contender tally-32 cannot run scenario memory/,
    );
  });
});
