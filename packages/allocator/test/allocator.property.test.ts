/**
 * Model-based tests: random pools and random operation sequences, checked against a deliberately naive model that
 * enumerates the (small) pool into a Set and re-derives every answer from the rules.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AddressAllocator } from '../src/address-allocator.js';
import { type AddressPoolSpec, buildAddressPool } from '../src/address-pool.js';
import { AllocationError, type AllocationFailureReason } from '../src/errors.js';
import { formatIP, type IP, type IPFamily } from '../src/ip.js';
import { PrefixAllocator } from '../src/prefix-allocator.js';
import { buildPrefixPool, formatPrefix } from '../src/prefix-pool.js';
import type { AllocationStrategy } from '../src/unit-engine.js';

const BASES: Record<IPFamily, bigint> = { 4: 0x0a000000n, 6: 0xfd00n << 112n };
/** Offsets 0..63 from the base: the pool lives in the lower half or all of it, so some probes fall outside. */
const SPAN = 64;

interface PoolCase {
  family: IPFamily;
  hostBits: number;
  entries: { first: number; last: number; kind: 'address' | 'range' | 'cidr'; cidrBits: number }[];
  excluded: { first: number; last: number }[];
  gateway: number | undefined;
  allocateReserved: boolean;
  strategy: AllocationStrategy;
  graceMs: number;
}

const poolCase: fc.Arbitrary<PoolCase> = fc
  .record({
    family: fc.constantFrom<IPFamily>(4, 6),
    hostBits: fc.integer({ min: 0, max: 5 }),
    rawEntries: fc.array(
      fc.record({
        a: fc.nat(31),
        b: fc.nat(31),
        kind: fc.constantFrom<'address' | 'range' | 'cidr'>('address', 'range', 'cidr'),
        cidrBits: fc.integer({ min: 0, max: 5 }),
      }),
      { minLength: 1, maxLength: 3 },
    ),
    rawExcluded: fc.array(fc.tuple(fc.nat(SPAN - 1), fc.nat(3)), { maxLength: 2 }),
    gateway: fc.option(fc.nat(SPAN - 1), { nil: undefined }),
    allocateReserved: fc.boolean(),
    strategy: fc.constantFrom<AllocationStrategy>('LowestFree', 'Random', 'LeastRecentlyReleased'),
    graceMs: fc.constantFrom(0, 0, 50, 200),
  })
  .map(({ family, hostBits, rawEntries, rawExcluded, gateway, allocateReserved, strategy, graceMs }) => {
    const size = 1 << hostBits;
    // Keep entries inside the subnet base/(bits-hostBits), as a valid spec must.
    const entries = rawEntries.map(({ a, b, kind, cidrBits }) => {
      const x = a % size;
      const y = b % size;
      if (kind === 'address') return { first: x, last: x, kind, cidrBits };
      if (kind === 'range') return { first: Math.min(x, y), last: Math.max(x, y), kind, cidrBits };
      const bits = Math.min(cidrBits, hostBits);
      const first = x - (x % (1 << bits));
      return { first, last: first + (1 << bits) - 1, kind, cidrBits: bits };
    });
    const excluded = rawExcluded.map(([start, length]) => ({ first: start, last: Math.min(start + length, SPAN - 1) }));
    return { family, hostBits, entries, excluded, gateway, allocateReserved, strategy, graceMs };
  });

function text(family: IPFamily, offset: number): string {
  return formatIP({ family, value: BASES[family] + BigInt(offset) });
}

function specOf(c: PoolCase): AddressPoolSpec {
  const bits = c.family === 4 ? 32 : 128;
  return {
    addresses: c.entries.map((entry) => {
      if (entry.kind === 'address') return text(c.family, entry.first);
      if (entry.kind === 'range') return `${text(c.family, entry.first)}-${text(c.family, entry.last)}`;
      return `${text(c.family, entry.first)}/${bits - entry.cidrBits}`;
    }),
    prefix: bits - c.hostBits,
    gateway: c.gateway === undefined ? undefined : text(c.family, c.gateway),
    excludedAddresses: c.excluded.map((range) => `${text(c.family, range.first)}-${text(c.family, range.last)}`),
    allocateReservedIPAddresses: c.allocateReserved,
  };
}

/** The naive model: offsets as numbers, everything recomputed by enumeration. */
class Model {
  readonly listed = new Set<number>();
  readonly allocatable = new Set<number>();
  readonly reserved = new Set<number>();
  readonly excluded = new Set<number>();
  readonly used = new Set<number>();
  readonly outOfRange = new Set<number>();
  readonly releasedAt = new Map<number, number>();
  now = 1_000;

  constructor(readonly c: PoolCase) {
    for (const entry of c.entries) for (let o = entry.first; o <= entry.last; o += 1) this.listed.add(o);
    for (const range of c.excluded) for (let o = range.first; o <= range.last; o += 1) this.excluded.add(o);
    if (c.gateway !== undefined) this.reserved.add(c.gateway);
    // The subnet starts at the base (the lowest entry is inside base/prefix); /31, /32, /127, /128 reserve nothing.
    if (!c.allocateReserved && c.hostBits >= 2) {
      this.reserved.add(0);
      if (c.family === 4) this.reserved.add((1 << c.hostBits) - 1);
    }
    for (const o of this.listed) if (!this.excluded.has(o) && !this.reserved.has(o)) this.allocatable.add(o);
  }

  cooling(o: number): boolean {
    const at = this.releasedAt.get(o);
    return at !== undefined && at + this.c.graceMs > this.now;
  }

  available(): number[] {
    return [...this.allocatable].filter((o) => !this.used.has(o) && !this.cooling(o)).sort((a, b) => a - b);
  }

  /** The offsets the strategy may hand out next (one for deterministic strategies). */
  candidates(): number[] {
    const available = this.available();
    if (this.c.strategy === 'Random') return available;
    if (this.c.strategy === 'LowestFree') return available.slice(0, 1);
    const neverReleased = available.filter((o) => !this.releasedAt.has(o));
    if (neverReleased.length > 0) return neverReleased.slice(0, 1);
    const byRelease = [...available].sort((a, b) => this.releasedAt.get(a)! - this.releasedAt.get(b)! || a - b);
    return byRelease.slice(0, 1);
  }

  specificVerdict(o: number, ignoreGrace: boolean): AllocationFailureReason | 'ok' {
    if (!this.listed.has(o)) return 'outside-pool';
    if (this.reserved.has(o)) return 'reserved';
    if (this.excluded.has(o)) return 'excluded';
    if (this.used.has(o)) return 'taken';
    if (this.cooling(o) && !ignoreGrace) return 'in-grace-period';
    return 'ok';
  }

  take(o: number): void {
    this.used.add(o);
    this.releasedAt.delete(o);
  }

  counts(): { total: bigint; used: bigint; free: bigint; outOfRange: bigint; coolingDown: bigint } {
    const coolingDown = [...this.allocatable].filter((o) => !this.used.has(o) && this.cooling(o)).length;
    return {
      total: BigInt(this.allocatable.size),
      used: BigInt(this.used.size + this.outOfRange.size),
      free: BigInt(this.available().length),
      outOfRange: BigInt(this.outOfRange.size),
      coolingDown: BigInt(coolingDown),
    };
  }
}

interface Real {
  allocator: AddressAllocator;
  clock: { now: number };
}

function offsetOf(c: PoolCase, ip: IP): number {
  expect(ip.family).toBe(c.family);
  return Number(ip.value - BASES[c.family]);
}

function reasonOf(action: () => unknown): AllocationFailureReason | 'ok' {
  try {
    action();
    return 'ok';
  } catch (error) {
    if (error instanceof AllocationError) return error.reason;
    throw error;
  }
}

function checkCounts(model: Model, real: Real): void {
  const counts = real.allocator.counts();
  expect(counts).toEqual(model.counts());
  expect(counts.total).toBe(counts.used - counts.outOfRange + counts.coolingDown + counts.free);
  expect(counts.free >= 0n).toBe(true);
}

class AllocateCommand implements fc.Command<Model, Real> {
  check(): boolean {
    return true;
  }
  run(model: Model, real: Real): void {
    const candidates = model.candidates();
    if (candidates.length === 0) {
      expect(reasonOf(() => real.allocator.allocate())).toBe('exhausted');
    } else {
      const offset = offsetOf(model.c, real.allocator.allocate());
      expect(candidates).toContain(offset);
      model.take(offset);
    }
    checkCounts(model, real);
  }
  toString(): string {
    return 'allocate()';
  }
}

class AllocateSpecificCommand implements fc.Command<Model, Real> {
  constructor(
    readonly offset: number,
    readonly ignoreGrace: boolean,
  ) {}
  check(): boolean {
    return true;
  }
  run(model: Model, real: Real): void {
    const expected = model.specificVerdict(this.offset, this.ignoreGrace);
    const actual = reasonOf(() =>
      real.allocator.allocateSpecific(text(model.c.family, this.offset), { ignoreGracePeriod: this.ignoreGrace }),
    );
    expect(actual).toBe(expected);
    if (expected === 'ok') model.take(this.offset);
    checkCounts(model, real);
  }
  toString(): string {
    return `allocateSpecific(+${this.offset}, ignoreGrace=${this.ignoreGrace})`;
  }
}

class ReleaseCommand implements fc.Command<Model, Real> {
  constructor(readonly offset: number) {}
  check(): boolean {
    return true;
  }
  run(model: Model, real: Real): void {
    const wasAllocated = model.used.has(this.offset) || model.outOfRange.has(this.offset);
    expect(real.allocator.release(text(model.c.family, this.offset), model.now)).toBe(wasAllocated);
    if (model.used.delete(this.offset)) model.releasedAt.set(this.offset, model.now);
    model.outOfRange.delete(this.offset);
    expect(real.allocator.isAllocated(text(model.c.family, this.offset))).toBe(false);
    checkCounts(model, real);
  }
  toString(): string {
    return `release(+${this.offset})`;
  }
}

class MarkAllocatedCommand implements fc.Command<Model, Real> {
  constructor(readonly offset: number) {}
  check(): boolean {
    return true;
  }
  run(model: Model, real: Real): void {
    const inRange = model.allocatable.has(this.offset);
    expect(real.allocator.markAllocated(text(model.c.family, this.offset))).toBe(inRange ? 'in-range' : 'out-of-range');
    if (inRange) model.take(this.offset);
    else model.outOfRange.add(this.offset);
    expect(real.allocator.isAllocated(text(model.c.family, this.offset))).toBe(true);
    checkCounts(model, real);
  }
  toString(): string {
    return `markAllocated(+${this.offset})`;
  }
}

class AdvanceClockCommand implements fc.Command<Model, Real> {
  constructor(readonly ms: number) {}
  check(): boolean {
    return true;
  }
  run(model: Model, real: Real): void {
    model.now += this.ms;
    real.clock.now += this.ms;
    checkCounts(model, real);
  }
  toString(): string {
    return `advance(${this.ms}ms)`;
  }
}

const offsetArb = fc.nat(SPAN - 1);
const commands = fc.commands(
  [
    fc.constant(new AllocateCommand()),
    fc.constant(new AllocateCommand()),
    fc.tuple(offsetArb, fc.boolean()).map(([o, ignore]) => new AllocateSpecificCommand(o, ignore)),
    offsetArb.map((o) => new ReleaseCommand(o)),
    offsetArb.map((o) => new MarkAllocatedCommand(o)),
    fc.constantFrom(1, 49, 100, 250).map((ms) => new AdvanceClockCommand(ms)),
  ],
  { maxCommands: 60 },
);

function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
}

describe('AddressAllocator against the naive model', () => {
  it('random operation sequences agree with the model (fc.commands)', () => {
    fc.assert(
      fc.property(poolCase, commands, fc.nat(), (c, cmds, seed) => {
        const model = new Model(c);
        const clock = { now: model.now };
        const allocator = new AddressAllocator(buildAddressPool(specOf(c)), {
          strategy: c.strategy,
          reuseGracePeriodMs: c.graceMs,
          clock: () => clock.now,
          random: seeded(seed),
        });
        fc.modelRun(() => ({ model, real: { allocator, clock } }), cmds);
      }),
      { numRuns: 300 },
    );
  });

  it('the pool model agrees with the naive rules for every address around the pool', () => {
    fc.assert(
      fc.property(poolCase, (c) => {
        const model = new Model(c);
        const pool = buildAddressPool(specOf(c));
        const allocatable = [...pool.allocatable.values()].map((value) => Number(value - BASES[c.family]));
        expect(allocatable).toEqual([...model.allocatable].sort((a, b) => a - b));
      }),
    );
  });

  it('a bulk restore equals marking the same addresses one by one, and hands out the same sequence', () => {
    fc.assert(
      fc.property(poolCase, fc.array(offsetArb, { maxLength: 40 }), (c, offsets) => {
        const pool = buildAddressPool(specOf(c));
        const options = { strategy: 'LowestFree' as const, clock: () => 0 };
        const addresses = offsets.map((o) => text(c.family, o));
        const bulk = new AddressAllocator(pool, options, { allocated: addresses });
        const incremental = new AddressAllocator(pool, options);
        for (const address of addresses) incremental.markAllocated(address);
        expect(bulk.counts()).toEqual(incremental.counts());
        expect(bulk.outOfRangeAddresses()).toEqual(incremental.outOfRangeAddresses());
        for (;;) {
          const a = reasonOf(() => bulk.allocate());
          const b = reasonOf(() => incremental.allocate());
          expect(a).toBe(b);
          if (a !== 'ok') break;
        }
        expect(bulk.counts()).toEqual(incremental.counts());
      }),
    );
  });
});

describe('PrefixAllocator against a naive block model', () => {
  it('always hands out the lowest aligned block inside the prefixes that overlaps no exclusion', () => {
    const scenario = fc.record({
      allocationLength: fc.integer({ min: 26, max: 30 }),
      prefixes: fc.array(fc.tuple(fc.nat(15), fc.integer({ min: 24, max: 28 })), { minLength: 1, maxLength: 3 }),
      excluded: fc.array(fc.tuple(fc.nat(255), fc.nat(20)), { maxLength: 3 }),
      ops: fc.array(fc.oneof(fc.constant(-1), fc.nat(63)), { maxLength: 40 }),
    });
    fc.assert(
      fc.property(scenario, ({ allocationLength, prefixes, excluded, ops }) => {
        // Aggregates inside 10.0.0.0/22 (offsets 0..1023), aligned to their own length.
        const aggregates = prefixes.map(([slot, length]) => {
          const size = 2 ** (32 - length);
          const first = (slot * 64) % 1024;
          const aligned = first - (first % size);
          return { first: aligned, last: aligned + size - 1, length: Math.min(length, allocationLength) };
        });
        const usable = aggregates.map((a) => {
          const size = 2 ** (32 - a.length);
          const first = a.first - (a.first % size);
          return { first, last: first + size - 1, length: a.length };
        });
        const exclusions = excluded.map(([start, length]) => ({ first: start * 4, last: start * 4 + length }));
        const blockSize = 2 ** (32 - allocationLength);
        const allowed = new Set<number>();
        for (let block = 0; block < 1024 / blockSize; block += 1) {
          const first = block * blockSize;
          const last = first + blockSize - 1;
          const inside = usable.some((a) => a.first <= first && last <= a.last);
          const hit = exclusions.some((e) => e.first <= last && first <= e.last);
          if (inside && !hit) allowed.add(block);
        }
        const pool = buildPrefixPool({
          prefixes: usable.map((a) => `${text(4, a.first)}/${a.length}`),
          allocationPrefixLength: allocationLength,
          excludedPrefixes: exclusions.map((e) => `${text(4, e.first)}-${text(4, e.last)}`),
        });
        const allocator = new PrefixAllocator(pool, { clock: () => 0 });
        const used = new Set<number>();
        for (const op of ops) {
          if (op === -1) {
            const expected = [...allowed].filter((b) => !used.has(b)).sort((a, b) => a - b)[0];
            if (expected === undefined) {
              expect(reasonOf(() => allocator.allocate())).toBe('exhausted');
            } else {
              expect(formatPrefix(allocator.allocate())).toBe(`${text(4, expected * blockSize)}/${allocationLength}`);
              used.add(expected);
            }
          } else {
            const block = op % (1024 / blockSize);
            const prefix = `${text(4, block * blockSize)}/${allocationLength}`;
            expect(allocator.release(prefix, 0)).toBe(used.delete(block));
          }
          expect(allocator.counts()).toEqual({
            total: BigInt(allowed.size),
            used: BigInt(used.size),
            free: BigInt(allowed.size - used.size),
            outOfRange: 0n,
            coolingDown: 0n,
          });
        }
      }),
    );
  });
});
