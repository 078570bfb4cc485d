/**
 * Allocator benchmark (not a test): prints timings and ratios. Run with
 * `pnpm --filter @tally-ipam/allocator bench`.
 *
 * 1. 100k sequential allocations from an IPv4 /8 and from an IPv6 /64: the ratio shows pool size does not matter.
 * 2. Rebuilding state from 100k used addresses (text, as read from IPAddress specs).
 * 3. At U = 1k, 10k, 50k used addresses: one allocation with this allocator versus a naive baseline that, like the
 *    reference provider, rebuilds a set of the used addresses on every allocation and scans from the lowest address.
 */
import { AddressAllocator } from '../src/address-allocator.js';
import { buildAddressPool } from '../src/address-pool.js';
import { formatIP, type IPFamily } from '../src/ip.js';
import type { AllocationStrategy } from '../src/unit-engine.js';

const gc: () => void = (globalThis as { gc?: () => void }).gc ?? (() => {});

/**
 * CPU time (user + system) of this process, not wall time: the machine is shared with builds and other tests, and
 * waiting for a core is not the allocator's cost. Parallel GC threads count too, so this errs on the high side.
 */
function time<T>(run: () => T): { ms: number; result: T } {
  gc();
  const start = process.cpuUsage();
  const result = run();
  const used = process.cpuUsage(start);
  return { ms: (used.user + used.system) / 1000, result };
}

/** Best of a few runs: the least disturbed by the other work on this machine. */
function best(runs: number, run: () => void): number {
  let fastest = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i += 1) fastest = Math.min(fastest, time(run).ms);
  return fastest;
}

/** Fixed-seed LCG so every run shuffles the same way. */
let shuffleState = 12345;
function shuffleRandom(): number {
  shuffleState = (Math.imul(shuffleState, 1664525) + 1013904223) >>> 0;
  return shuffleState / 4294967296;
}

const fmt = (ms: number): string => `${ms.toFixed(1)} ms`;
const perOp = (ms: number, ops: number): string => `${((ms * 1000) / ops).toFixed(2)} µs/op`;

const POOLS: Record<IPFamily, { addresses: string[]; prefix: number; gateway: string }> = {
  4: { addresses: ['10.0.0.0/8'], prefix: 8, gateway: '10.0.0.1' },
  6: { addresses: ['2001:db8::/64'], prefix: 64, gateway: '2001:db8::1' },
};

function sequential(family: IPFamily, count: number, strategy: AllocationStrategy): number {
  return best(3, () => {
    const allocator = new AddressAllocator(buildAddressPool(POOLS[family]), { strategy, clock: () => 0 });
    for (let i = 0; i < count; i += 1) allocator.allocate();
  });
}

const N = 100_000;
console.log(
  `# @tally-ipam/allocator benchmark (Node ${process.version}, ${new Date().toISOString()}; CPU time, best of 3)\n`,
);

console.log(`## ${N.toLocaleString('en')} sequential allocations`);
for (const strategy of ['LowestFree', 'Random'] as const) {
  const v4 = sequential(4, N, strategy);
  const v6 = sequential(6, N, strategy);
  console.log(
    `${strategy.padEnd(11)} IPv4 /8: ${fmt(v4)} (${perOp(v4, N)})   IPv6 /64: ${fmt(v6)} (${perOp(v6, N)})   ratio /64÷/8 = ${(v6 / v4).toFixed(2)}`,
  );
}

console.log(`\n## rebuild from ${N.toLocaleString('en')} used addresses`);
for (const family of [4, 6] as const) {
  const pool = buildAddressPool(POOLS[family]);
  // Spread the used addresses out (every third address, shuffled) so the free set has ~100k intervals.
  const base = pool.allocatable.min!;
  const used = Array.from({ length: N }, (_, i) => formatIP({ family, value: base + BigInt(i * 3) }));
  for (let i = used.length - 1; i > 0; i -= 1) {
    const j = Math.floor(shuffleRandom() * (i + 1));
    [used[i], used[j]] = [used[j]!, used[i]!];
  }
  const bulk = best(3, () => void new AddressAllocator(pool, { clock: () => 0 }, { allocated: used }));
  const oneByOne = best(3, () => {
    const allocator = new AddressAllocator(pool, { clock: () => 0 });
    for (const address of used) allocator.markAllocated(address);
    allocator.counts(); // applies the deferred work, so it is timed too
  });
  console.log(`IPv${family}: bulk restore ${fmt(bulk)}   markAllocated one by one ${fmt(oneByOne)}`);
}

/** The reference provider's way: a fresh set of used addresses per allocation, then scan from the lowest. */
function naiveAllocate(allocatable: readonly { first: bigint; last: bigint }[], usedList: bigint[]): bigint {
  const inUse = new Set(usedList);
  for (const { first, last } of allocatable) {
    for (let candidate = first; candidate <= last; candidate += 1n) {
      if (!inUse.has(candidate)) return candidate;
    }
  }
  throw new Error('pool exhausted');
}

console.log('\n## one allocation at U used addresses: this allocator vs a naive rebuild-per-allocation baseline');
const ROUNDS = 2_000;
const NAIVE_ROUNDS = 100;
for (const used of [1_000, 10_000, 50_000]) {
  const pool = buildAddressPool(POOLS[4]);
  // Every other address is used, so the free set really holds U intervals.
  const usedValues = Array.from({ length: used }, (_, i) => pool.allocatable.min! + BigInt(2 * i));
  const allocator = new AddressAllocator(
    pool,
    { clock: () => 0 },
    { allocated: usedValues.map((value) => ({ family: 4 as const, value })) },
  );
  // Allocate and release again, so U stays constant across rounds.
  const oursOnly = best(5, () => {
    for (let i = 0; i < ROUNDS; i += 1) {
      const ip = allocator.allocate();
      allocator.release(ip, 0);
    }
  });
  const naive = best(3, () => {
    for (let i = 0; i < NAIVE_ROUNDS; i += 1) naiveAllocate(pool.allocatable.intervals, usedValues);
  });
  console.log(
    `U=${String(used).padStart(6)}: allocator ${perOp(oursOnly, ROUNDS)}   naive ${perOp(naive, NAIVE_ROUNDS)}   naive÷allocator = ${(naive / NAIVE_ROUNDS / (oursOnly / ROUNDS)).toFixed(0)}×`,
  );
}
