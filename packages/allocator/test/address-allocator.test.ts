import { describe, expect, it } from 'vitest';
import { AddressAllocator } from '../src/address-allocator.js';
import { type AddressPoolSpec, buildAddressPool } from '../src/address-pool.js';
import { AllocationError, type AllocationFailureReason } from '../src/errors.js';
import { formatIP } from '../src/ip.js';
import { toStatusCount } from '../src/status-count.js';
import type { AllocatorOptions } from '../src/unit-engine.js';

/** A clock the test moves by hand. */
function manualClock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let time = start;
  return {
    now: () => time,
    advance: (ms) => {
      time += ms;
    },
  };
}

/** Deterministic [0,1) source (mulberry32). */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function allocator(spec: AddressPoolSpec, options: AllocatorOptions = {}): AddressAllocator {
  return new AddressAllocator(buildAddressPool(spec), { clock: () => 0, ...options });
}

function next(alloc: AddressAllocator): string {
  return formatIP(alloc.allocate());
}

function failure(action: () => unknown): AllocationError {
  try {
    action();
  } catch (error) {
    if (error instanceof AllocationError) return error;
    throw error;
  }
  throw new Error('expected an AllocationError');
}

function reasonOf(action: () => unknown): AllocationFailureReason {
  return failure(action).reason;
}

describe('LowestFree', () => {
  it('hands out the lowest free address, skipping gateway and reserved addresses, and reuses the lowest released', () => {
    const alloc = allocator({ addresses: ['10.0.0.0/29'], prefix: 29, gateway: '10.0.0.1' });
    expect([next(alloc), next(alloc), next(alloc)]).toEqual(['10.0.0.2', '10.0.0.3', '10.0.0.4']);
    expect(alloc.release('10.0.0.3')).toBe(true);
    expect(alloc.release('10.0.0.2')).toBe(true);
    expect([next(alloc), next(alloc), next(alloc)]).toEqual(['10.0.0.2', '10.0.0.3', '10.0.0.5']);
  });

  it('walks the listed ranges in address order, whatever the spec order', () => {
    const alloc = allocator({ addresses: ['10.0.0.50', '10.0.0.20-10.0.0.21', '10.0.0.5'], prefix: 24 });
    expect([next(alloc), next(alloc), next(alloc), next(alloc)]).toEqual([
      '10.0.0.5',
      '10.0.0.20',
      '10.0.0.21',
      '10.0.0.50',
    ]);
  });

  it('reports exhaustion with a typed reason once the pool is full', () => {
    const alloc = allocator({ addresses: ['10.0.0.4/31'], prefix: 31 });
    expect([next(alloc), next(alloc)]).toEqual(['10.0.0.4', '10.0.0.5']);
    const error = failure(() => alloc.allocate());
    expect(error.reason).toBe('exhausted');
    expect(error.message).toBe('no free address in pool 10.0.0.4/31: all 2 allocatable addresses are in use');
    expect(alloc.counts()).toEqual({ total: 2n, used: 2n, free: 0n, outOfRange: 0n, coolingDown: 0n });
  });

  it('serves a pool of one address exactly once', () => {
    const alloc = allocator({ addresses: ['fd00::7'], prefix: 128 });
    expect(next(alloc)).toBe('fd00::7');
    expect(reasonOf(() => alloc.allocate())).toBe('exhausted');
  });

  it('is exhausted from the start when exclusions cover everything', () => {
    const alloc = allocator({ addresses: ['10.0.0.0/30'], prefix: 30, excludedAddresses: ['10.0.0.0/30'] });
    expect(reasonOf(() => alloc.allocate())).toBe('exhausted');
    expect(alloc.counts()).toEqual({ total: 0n, used: 0n, free: 0n, outOfRange: 0n, coolingDown: 0n });
  });

  it('allocates from an IPv6 /64 without enumerating it', () => {
    const alloc = allocator({ addresses: ['2001:db8::/64'], prefix: 64, gateway: '2001:db8::1' });
    expect([next(alloc), next(alloc)]).toEqual(['2001:db8::2', '2001:db8::3']);
    expect(alloc.counts().free).toBe((1n << 64n) - 4n);
  });

  it('allocates from an IPv4 /0 and an IPv6 /0', () => {
    expect(next(allocator({ addresses: ['0.0.0.0/0'], prefix: 0 }))).toBe('0.0.0.1');
    expect(next(allocator({ addresses: ['::/0'], prefix: 0 }))).toBe('::1');
  });

  it('hands out IPv4-mapped IPv6 addresses as IPv6', () => {
    const alloc = allocator({ addresses: ['::ffff:10.0.0.0/120'], prefix: 120 });
    const ip = alloc.allocate();
    expect(ip.family).toBe(6);
    expect(formatIP(ip)).toBe('::ffff:10.0.0.1');
  });
});

describe('allocateSpecific', () => {
  const spec: AddressPoolSpec = {
    addresses: ['10.0.0.0/24'],
    prefix: 24,
    gateway: '10.0.0.1',
    excludedAddresses: ['10.0.0.100-10.0.0.109'],
  };

  it('hands out exactly the requested address and never hands it out again', () => {
    const alloc = allocator(spec);
    expect(formatIP(alloc.allocateSpecific('10.0.0.2'))).toBe('10.0.0.2');
    expect(next(alloc)).toBe('10.0.0.3');
    expect(alloc.isAllocated('10.0.0.2')).toBe(true);
  });

  it.each([
    ['10.0.1.1', 'outside-pool', "address 10.0.1.1 is not in the pool's addresses"],
    ['fd00::1', 'outside-pool', 'address fd00::1 is IPv6, the pool is IPv4'],
    ['10.0.0.105', 'excluded', "address 10.0.0.105 is in the pool's excludedAddresses"],
    ['10.0.0.1', 'reserved', "address 10.0.0.1 is the pool's gateway"],
    ['10.0.0.0', 'reserved', 'address 10.0.0.0 is the IPv4 network address of 10.0.0.0/24'],
    ['10.0.0.255', 'reserved', 'address 10.0.0.255 is the IPv4 broadcast address of 10.0.0.0/24'],
  ])('refuses %s: %s', (address, reason, message) => {
    const error = failure(() => allocator(spec).allocateSpecific(address));
    expect(error.reason).toBe(reason);
    expect(error.message).toBe(message);
    expect(error.requested).toBe(address);
  });

  it('refuses an address that is taken', () => {
    const alloc = allocator(spec);
    alloc.allocateSpecific('10.0.0.9');
    const error = failure(() => alloc.allocateSpecific('10.0.0.9'));
    expect(error.reason).toBe('taken');
    expect(error.message).toBe('address 10.0.0.9 is already allocated');
  });

  it('rejects unparsable text with the parse error', () => {
    expect(() => allocator(spec).allocateSpecific('10.0.0.09')).toThrow(
      'invalid address "10.0.0.09": leading zeros are not allowed',
    );
  });
});

describe('reuse grace period', () => {
  it('keeps a released address unavailable for the grace period, then hands it out again', () => {
    const clock = manualClock();
    const alloc = allocator(
      { addresses: ['10.0.0.10-10.0.0.12'], prefix: 24 },
      { reuseGracePeriodMs: 30_000, clock: clock.now },
    );
    expect(next(alloc)).toBe('10.0.0.10');
    alloc.release('10.0.0.10');
    expect(alloc.availableAtMs('10.0.0.10')).toBe(clock.now() + 30_000);
    expect(next(alloc)).toBe('10.0.0.11');
    expect(alloc.counts()).toEqual({ total: 3n, used: 1n, free: 1n, outOfRange: 0n, coolingDown: 1n });
    clock.advance(29_999);
    expect(next(alloc)).toBe('10.0.0.12');
    expect(reasonOf(() => alloc.allocate())).toBe('exhausted');
    clock.advance(1);
    expect(alloc.availableAtMs('10.0.0.10')).toBeUndefined();
    expect(next(alloc)).toBe('10.0.0.10');
  });

  it('says when the next address frees up when everything left is cooling down', () => {
    const clock = manualClock(Date.UTC(2026, 0, 1));
    const alloc = allocator({ addresses: ['10.0.0.10'], prefix: 24 }, { reuseGracePeriodMs: 60_000, clock: clock.now });
    alloc.allocate();
    alloc.release('10.0.0.10');
    const error = failure(() => alloc.allocate());
    expect(error.reason).toBe('exhausted');
    expect(error.availableAtMs).toBe(Date.UTC(2026, 0, 1, 0, 1));
    expect(error.message).toBe(
      'no free address in pool 10.0.0.0/24: all 1 allocatable addresses are in use or in their reuse grace period (1 released, the next one free at 2026-01-01T00:01:00.000Z)',
    );
  });

  it('refuses a pinned request inside the grace period unless told to ignore it', () => {
    const clock = manualClock(0);
    const alloc = allocator(
      { addresses: ['10.0.0.10-10.0.0.12'], prefix: 24 },
      { reuseGracePeriodMs: 5_000, clock: clock.now },
    );
    alloc.allocateSpecific('10.0.0.11');
    alloc.release('10.0.0.11', 1_000);
    const error = failure(() => alloc.allocateSpecific('10.0.0.11'));
    expect(error.reason).toBe('in-grace-period');
    expect(error.availableAtMs).toBe(6_000);
    expect(formatIP(alloc.allocateSpecific('10.0.0.11', { ignoreGracePeriod: true }))).toBe('10.0.0.11');
    expect(alloc.counts().coolingDown).toBe(0n);
  });

  it('uses the caller-supplied release time, so a release long ago is immediately reusable', () => {
    const clock = manualClock(100_000);
    const alloc = allocator(
      { addresses: ['10.0.0.10-10.0.0.11'], prefix: 24 },
      { reuseGracePeriodMs: 10_000, clock: clock.now },
    );
    alloc.allocate();
    alloc.release('10.0.0.10', 80_000);
    expect(next(alloc)).toBe('10.0.0.10');
  });

  it('survives a rebuild through markReleased', () => {
    const clock = manualClock(50_000);
    const spec: AddressPoolSpec = { addresses: ['10.0.0.10-10.0.0.12'], prefix: 24 };
    const alloc = allocator(spec, { reuseGracePeriodMs: 10_000, clock: clock.now });
    expect(alloc.markAllocated('10.0.0.12')).toBe('in-range');
    expect(alloc.markReleased('10.0.0.10', 45_000)).toBe(true);
    expect(alloc.markReleased('10.0.0.12', 45_000)).toBe(false);
    expect(next(alloc)).toBe('10.0.0.11');
    expect(reasonOf(() => alloc.allocate())).toBe('exhausted');
    clock.advance(5_000);
    expect(next(alloc)).toBe('10.0.0.10');
  });

  it('rejects nonsensical times', () => {
    const alloc = allocator({ addresses: ['10.0.0.10'], prefix: 24 });
    alloc.allocate();
    expect(() => alloc.release('10.0.0.10', -1)).toThrow(
      'releasedAtMs must be a non-negative integer number of milliseconds, got -1',
    );
    expect(() => allocator({ addresses: ['10.0.0.10'], prefix: 24 }, { reuseGracePeriodMs: 1.5 })).toThrow(RangeError);
  });
});

describe('LeastRecentlyReleased', () => {
  it('hands out never-used addresses first, then released ones oldest release first', () => {
    const clock = manualClock(100);
    const alloc = allocator(
      { addresses: ['10.0.0.1-10.0.0.4'], prefix: 24 },
      { strategy: 'LeastRecentlyReleased', clock: clock.now },
    );
    expect([next(alloc), next(alloc), next(alloc)]).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3']);
    alloc.release('10.0.0.2', 10);
    alloc.release('10.0.0.1', 20);
    alloc.release('10.0.0.3', 15);
    expect([next(alloc), next(alloc), next(alloc), next(alloc)]).toEqual([
      '10.0.0.4',
      '10.0.0.2',
      '10.0.0.3',
      '10.0.0.1',
    ]);
  });

  it('combines with a grace period: cooling addresses wait, then join the queue in release order', () => {
    const clock = manualClock(0);
    const alloc = allocator(
      { addresses: ['10.0.0.1-10.0.0.3'], prefix: 24 },
      { strategy: 'LeastRecentlyReleased', reuseGracePeriodMs: 100, clock: clock.now },
    );
    alloc.allocate();
    alloc.allocate();
    alloc.allocate();
    alloc.release('10.0.0.3', 0);
    alloc.release('10.0.0.1', 50);
    expect(reasonOf(() => alloc.allocate())).toBe('exhausted');
    clock.advance(100);
    expect(next(alloc)).toBe('10.0.0.3');
    expect(reasonOf(() => alloc.allocate())).toBe('exhausted');
    clock.advance(50);
    expect(next(alloc)).toBe('10.0.0.1');
  });

  it('keeps release order across a rebuild', () => {
    const pool = buildAddressPool({ addresses: ['10.0.0.1-10.0.0.3'], prefix: 24 });
    const alloc = new AddressAllocator(
      pool,
      { strategy: 'LeastRecentlyReleased', clock: () => 1_000 },
      {
        allocated: ['10.0.0.2'],
        released: [
          { address: '10.0.0.3', releasedAtMs: 500 },
          { address: '10.0.0.1', releasedAtMs: 900 },
        ],
      },
    );
    expect([next(alloc), next(alloc)]).toEqual(['10.0.0.3', '10.0.0.1']);
  });
});

describe('Random', () => {
  it('is deterministic for a given random source and never repeats an address', () => {
    const spec: AddressPoolSpec = { addresses: ['10.0.0.0/26'], prefix: 26 };
    const draw = (seed: number): string[] => {
      const alloc = allocator(spec, { strategy: 'Random', random: seededRandom(seed) });
      return Array.from({ length: 62 }, () => next(alloc));
    };
    const first = draw(7);
    expect(draw(7)).toEqual(first);
    expect(new Set(first).size).toBe(62);
    expect(first).not.toEqual([...first].sort());
    expect(draw(8)).not.toEqual(first);
  });

  it('picks by rank: random() = 0 gives the lowest free, random() just below 1 the highest', () => {
    const low = allocator({ addresses: ['10.0.0.0/24'], prefix: 24 }, { strategy: 'Random', random: () => 0 });
    expect(next(low)).toBe('10.0.0.1');
    const high = allocator(
      { addresses: ['10.0.0.0/24'], prefix: 24 },
      { strategy: 'Random', random: () => 0.999_999_999 },
    );
    expect(next(high)).toBe('10.0.0.254');
  });

  it('rejects a random source outside [0, 1)', () => {
    const alloc = allocator({ addresses: ['10.0.0.0/24'], prefix: 24 }, { strategy: 'Random', random: () => 1 });
    expect(() => alloc.allocate()).toThrow('random() must return a number in [0, 1)');
  });
});

describe('rebuild, counts and out-of-range addresses', () => {
  it('rebuilds from existing addresses and reports the ones the pool no longer allows', () => {
    const pool = buildAddressPool({ addresses: ['10.0.0.0/28'], prefix: 28, excludedAddresses: ['10.0.0.5'] });
    const alloc = new AddressAllocator(
      pool,
      {},
      { allocated: ['10.0.0.1', '10.0.0.2', '10.0.0.2', '10.0.0.5', '10.9.9.9', 'fd00::1'] },
    );
    expect(alloc.counts()).toEqual({ total: 13n, used: 5n, free: 11n, outOfRange: 3n, coolingDown: 0n });
    expect(alloc.outOfRangeAddresses().map(formatIP)).toEqual(['10.0.0.5', '10.9.9.9', 'fd00::1']);
    expect(alloc.isAllocated('10.9.9.9')).toBe(true);
    expect(alloc.isAllocated('fd00::1')).toBe(true);
    expect(alloc.isAllocated('10.0.0.3')).toBe(false);
    expect(next(alloc)).toBe('10.0.0.3');
    expect(alloc.release('10.9.9.9')).toBe(true);
    expect(alloc.counts()).toEqual({ total: 13n, used: 5n, free: 10n, outOfRange: 2n, coolingDown: 0n });
  });

  it('never reports negative free, even when out-of-range addresses outnumber the pool', () => {
    const alloc = allocator({ addresses: ['10.0.0.1'], prefix: 24 });
    for (const address of ['10.0.0.2', '10.0.0.3', '10.0.0.4'])
      expect(alloc.markAllocated(address)).toBe('out-of-range');
    expect(alloc.counts()).toEqual({ total: 1n, used: 3n, free: 1n, outOfRange: 3n, coolingDown: 0n });
  });

  it('markAllocated is idempotent and matches a bulk restore', () => {
    const spec: AddressPoolSpec = { addresses: ['10.0.0.0/24'], prefix: 24 };
    const incremental = allocator(spec);
    for (const address of ['10.0.0.9', '10.0.0.1', '10.0.0.9', '10.0.0.2']) incremental.markAllocated(address);
    const bulk = new AddressAllocator(buildAddressPool(spec), {}, { allocated: ['10.0.0.9', '10.0.0.1', '10.0.0.2'] });
    expect(incremental.counts()).toEqual(bulk.counts());
    expect([next(incremental), next(incremental)]).toEqual(['10.0.0.3', '10.0.0.4']);
    expect([next(bulk), next(bulk)]).toEqual(['10.0.0.3', '10.0.0.4']);
  });

  it('defers markAllocated work and applies it correctly in bulk and one by one', () => {
    const alloc = allocator({ addresses: ['10.0.0.0/24'], prefix: 24 });
    for (let octet = 1; octet < 255; octet += 2) alloc.markAllocated(`10.0.0.${octet}`);
    // 127 deferred marks against one free interval: applied by rebuilding the free tree.
    expect(next(alloc)).toBe('10.0.0.2');
    // One deferred mark against ~126 free intervals: applied by a single removal.
    alloc.markAllocated('10.0.0.4');
    expect(next(alloc)).toBe('10.0.0.6');
    expect(alloc.counts()).toEqual({ total: 254n, used: 130n, free: 124n, outOfRange: 0n, coolingDown: 0n });
    expect(alloc.release('10.0.0.4', 0)).toBe(true);
    expect(next(alloc)).toBe('10.0.0.4');
  });

  it('release of an address that is not allocated changes nothing', () => {
    const alloc = allocator({ addresses: ['10.0.0.0/24'], prefix: 24 });
    expect(alloc.release('10.0.0.7')).toBe(false);
    expect(alloc.release('10.0.7.7')).toBe(false);
    expect(alloc.counts().free).toBe(254n);
  });

  it('lists the allocated in-range addresses', () => {
    const alloc = allocator({ addresses: ['10.0.0.0/24'], prefix: 24 });
    alloc.allocate();
    alloc.allocateSpecific('10.0.0.200');
    expect([...alloc.allocatedAddresses()].map(formatIP).sort()).toEqual(['10.0.0.1', '10.0.0.200']);
  });
});

describe('toStatusCount', () => {
  it('passes exact counts through and caps beyond 2^53 − 1', () => {
    expect(toStatusCount(254n)).toBe(254);
    expect(toStatusCount(BigInt(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
    expect(toStatusCount(1n << 64n)).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => toStatusCount(-1n)).toThrow('a pool count cannot be negative, got -1');
  });
});
