/**
 * Allocation state of one prefix pool, counted in /N blocks. Same life cycle as AddressAllocator: rebuild from the
 * pool's IPAddresses (`address` + `prefix`), then allocate, allocate a specific prefix, release.
 */
import { parseCIDR } from './entry.js';
import { AllocationError } from './errors.js';
import { type IP, parseIP } from './ip.js';
import { blockToPrefix, checkPrefixAllocatable, formatPrefix, type Prefix, type PrefixPool } from './prefix-pool.js';
import { type AllocatorOptions, UnitEngine } from './unit-engine.js';

/** `"fd00:0:0:5::/64"`, or an IPAddress-style pair of address and prefix length. */
export type PrefixInput = string | { readonly address: string | IP; readonly prefixLength: number };

export interface PrefixCounts {
  /** Allocatable /N blocks. */
  readonly total: bigint;
  /** Every allocated prefix, including out-of-range ones. */
  readonly used: bigint;
  /** Allocatable blocks neither allocated nor cooling down; never negative. */
  readonly free: bigint;
  /** Allocated prefixes the spec does not allow (wrong length, outside, excluded). */
  readonly outOfRange: bigint;
  readonly coolingDown: bigint;
}

export function toPrefix(input: PrefixInput): Prefix {
  if (typeof input === 'string') {
    const cidr = parseCIDR(input);
    return { family: cidr.family, network: cidr.address, prefixLength: cidr.prefixLength };
  }
  const ip = typeof input.address === 'string' ? parseIP(input.address) : input.address;
  return { family: ip.family, network: ip.value, prefixLength: input.prefixLength };
}

export class PrefixAllocator {
  private readonly engine: UnitEngine;
  private readonly outOfRange = new Map<string, Prefix>();

  constructor(
    readonly pool: PrefixPool,
    options: AllocatorOptions = {},
    allocated: Iterable<PrefixInput> = [],
  ) {
    const used: bigint[] = [];
    for (const input of allocated) {
      const prefix = toPrefix(input);
      const block = this.blockOf(prefix);
      if (block === undefined) this.outOfRange.set(formatPrefix(prefix), prefix);
      else used.push(block);
    }
    this.engine = new UnitEngine(pool.blocks, options, { used, released: [] });
  }

  /**
   * The block an allocated prefix occupies, or undefined if the pool does not allow it. Host bits are masked off,
   * as the reference provider does for in-use prefixes.
   */
  private blockOf(prefix: Prefix): bigint | undefined {
    if (prefix.family !== this.pool.family || prefix.prefixLength !== this.pool.allocationPrefixLength) {
      return undefined;
    }
    const block = prefix.network >> this.pool.blockShift;
    return this.pool.blocks.contains(block) ? block : undefined;
  }

  /** The lowest free aligned /N (or per the strategy); throws AllocationError `exhausted`. */
  allocate(): Prefix {
    const result = this.engine.take();
    if (result.ok) return blockToPrefix(this.pool, result.unit);
    throw new AllocationError(
      'exhausted',
      `no free /${this.pool.allocationPrefixLength} prefix: all ${this.pool.blocks.size} allocatable prefixes are in use` +
        (result.coolingDown > 0n ? ` or in their reuse grace period (${result.coolingDown})` : ''),
      result.nextAvailableAtMs === undefined ? {} : { availableAtMs: result.nextAvailableAtMs },
    );
  }

  /** Exactly this prefix, or AllocationError: outside-pool, excluded, misaligned, taken, in-grace-period. */
  allocateSpecific(input: PrefixInput, options: { ignoreGracePeriod?: boolean } = {}): Prefix {
    const prefix = toPrefix(input);
    const text = formatPrefix(prefix);
    const verdict = checkPrefixAllocatable(this.pool, prefix);
    if (!verdict.allocatable) {
      throw new AllocationError(verdict.reason, `prefix ${text} ${verdict.detail}`, { requested: text });
    }
    const result = this.engine.takeSpecific(verdict.block, options.ignoreGracePeriod ?? false);
    if (result.ok) return prefix;
    if (result.reason === 'taken') {
      throw new AllocationError('taken', `prefix ${text} is already allocated`, { requested: text });
    }
    throw new AllocationError('in-grace-period', `prefix ${text} is in its reuse grace period`, {
      requested: text,
      availableAtMs: result.availableAtMs,
    });
  }

  markAllocated(input: PrefixInput): 'in-range' | 'out-of-range' {
    const prefix = toPrefix(input);
    const block = this.blockOf(prefix);
    if (block === undefined) {
      this.outOfRange.set(formatPrefix(prefix), prefix);
      return 'out-of-range';
    }
    this.engine.markUsed(block);
    return 'in-range';
  }

  /** Frees an allocated prefix; false if it was not allocated. */
  release(input: PrefixInput, releasedAtMs?: number): boolean {
    const prefix = toPrefix(input);
    if (this.outOfRange.delete(formatPrefix(prefix))) return true;
    const block = this.blockOf(prefix);
    if (block === undefined) return false;
    return this.engine.release(block, releasedAtMs ?? this.engine.currentTimeMs());
  }

  isAllocated(input: PrefixInput): boolean {
    const prefix = toPrefix(input);
    if (this.outOfRange.has(formatPrefix(prefix))) return true;
    const block = this.blockOf(prefix);
    return block !== undefined && this.engine.isUsed(block);
  }

  counts(): PrefixCounts {
    const counts = this.engine.counts();
    const outOfRange = BigInt(this.outOfRange.size);
    return {
      total: counts.total,
      used: counts.usedInRange + outOfRange,
      free: counts.free,
      outOfRange,
      coolingDown: counts.coolingDown,
    };
  }

  outOfRangePrefixes(): Prefix[] {
    return [...this.outOfRange.values()].sort((a, b) =>
      a.network < b.network ? -1 : a.network > b.network ? 1 : a.prefixLength - b.prefixLength,
    );
  }
}
