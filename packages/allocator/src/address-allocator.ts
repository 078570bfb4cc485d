/**
 * Allocation state of one address pool. Rebuild it from the specs of the pool's IPAddresses (`restore`, or
 * `markAllocated` one by one), then allocate and release; nothing here enumerates the pool.
 */
import { type AddressPool, checkAllocatable, formatSubnet } from './address-pool.js';
import { AllocationError } from './errors.js';
import { formatIP, type IP, parseIP } from './ip.js';
import { type AllocationStrategy, type AllocatorOptions, UnitEngine } from './unit-engine.js';

/** An address as text (strictly parsed) or as a parsed IP. */
export type AddressInput = string | IP;

export interface PoolCounts {
  /** Allocatable addresses under the current spec. */
  readonly total: bigint;
  /** Every allocated address, including out-of-range ones (like the reference's `used`). */
  readonly used: bigint;
  /** Allocatable addresses that are neither allocated nor in their reuse grace period; never negative. */
  readonly free: bigint;
  /** Allocated addresses that the current spec no longer allows (e.g. after the pool shrank). */
  readonly outOfRange: bigint;
  /** Released addresses still in their reuse grace period. total = (used − outOfRange) + coolingDown + free. */
  readonly coolingDown: bigint;
}

export interface ReleasedAddress {
  readonly address: AddressInput;
  readonly releasedAtMs: number;
}

export interface AllocationRecord {
  /** Addresses of the pool's existing IPAddresses; duplicates are tolerated. */
  readonly allocated: Iterable<AddressInput>;
  /** Known release times of currently free addresses (for the grace period and LeastRecentlyReleased). */
  readonly released?: Iterable<ReleasedAddress>;
}

function toIP(input: AddressInput): IP {
  return typeof input === 'string' ? parseIP(input) : input;
}

export class AddressAllocator {
  private readonly engine: UnitEngine;
  /** Allocated addresses the pool does not allow, keyed by canonical text (they may even be of the other family). */
  private readonly outOfRange = new Map<string, IP>();

  constructor(
    readonly pool: AddressPool,
    options: AllocatorOptions = {},
    record: AllocationRecord = { allocated: [] },
  ) {
    const used: bigint[] = [];
    for (const input of record.allocated) {
      const ip = toIP(input);
      if (this.allows(ip)) used.push(ip.value);
      else this.outOfRange.set(formatIP(ip), ip);
    }
    const released: { unit: bigint; releasedAtMs: number }[] = [];
    for (const { address, releasedAtMs } of record.released ?? []) {
      const ip = toIP(address);
      if (this.allows(ip)) released.push({ unit: ip.value, releasedAtMs });
    }
    this.engine = new UnitEngine(pool.allocatable, options, { used, released });
  }

  private allows(ip: IP): boolean {
    return ip.family === this.pool.family && this.pool.allocatable.contains(ip.value);
  }

  get strategy(): AllocationStrategy {
    return this.engine.strategy;
  }

  /** Hands out the next address according to the strategy; throws AllocationError `exhausted` if none is free. */
  allocate(): IP {
    const result = this.engine.take();
    if (result.ok) return { family: this.pool.family, value: result.unit };
    let message = `no free address in pool ${formatSubnet(this.pool)}: all ${this.pool.allocatable.size} allocatable addresses are in use`;
    if (result.coolingDown > 0n) {
      message += ` or in their reuse grace period (${result.coolingDown} released, the next one free at ${new Date(result.nextAvailableAtMs ?? 0).toISOString()})`;
    }
    return this.fail('exhausted', message, undefined, result.nextAvailableAtMs);
  }

  /**
   * Hands out exactly this address (a static reservation or requested address), or throws AllocationError with the
   * reason: outside-pool, excluded, reserved, taken, in-grace-period (unless `ignoreGracePeriod`).
   */
  allocateSpecific(input: AddressInput, options: { ignoreGracePeriod?: boolean } = {}): IP {
    const ip = toIP(input);
    const text = formatIP(ip);
    const verdict = checkAllocatable(this.pool, ip);
    if (!verdict.allocatable) return this.fail(verdict.reason, `address ${text} ${verdict.detail}`, text);
    const result = this.engine.takeSpecific(ip.value, options.ignoreGracePeriod ?? false);
    if (result.ok) return ip;
    if (result.reason === 'taken') return this.fail('taken', `address ${text} is already allocated`, text);
    const until = new Date(result.availableAtMs).toISOString();
    return this.fail(
      'in-grace-period',
      `address ${text} was released recently and is in its reuse grace period until ${until}`,
      text,
      result.availableAtMs,
    );
  }

  private fail(
    reason: AllocationError['reason'],
    message: string,
    requested: string | undefined,
    availableAtMs?: number,
  ): never {
    throw new AllocationError(reason, message, {
      ...(requested === undefined ? {} : { requested }),
      ...(availableAtMs === undefined ? {} : { availableAtMs }),
    });
  }

  /**
   * Records an existing allocation while rebuilding. Returns `in-range` when the pool allows the address and
   * `out-of-range` when it does not (it still counts as used, and is reported by `outOfRangeAddresses`).
   */
  markAllocated(input: AddressInput): 'in-range' | 'out-of-range' {
    const ip = toIP(input);
    if (!this.allows(ip)) {
      this.outOfRange.set(formatIP(ip), ip);
      return 'out-of-range';
    }
    this.engine.markUsed(ip.value);
    return 'in-range';
  }

  /**
   * Frees an allocated address as of `releasedAtMs` (default: the clock). Returns false if it was not allocated,
   * so a repeated release is harmless.
   */
  release(input: AddressInput, releasedAtMs?: number): boolean {
    const ip = toIP(input);
    if (this.outOfRange.delete(formatIP(ip))) return true;
    if (!this.allows(ip)) return false;
    return this.engine.release(ip.value, releasedAtMs ?? this.engine.currentTimeMs());
  }

  /**
   * Records when a free address was last released, while rebuilding. Returns false for an allocated or
   * non-allocatable address (nothing to record).
   */
  markReleased(input: AddressInput, releasedAtMs: number): boolean {
    const ip = toIP(input);
    if (!this.allows(ip)) return false;
    return this.engine.markReleased(ip.value, releasedAtMs);
  }

  isAllocated(input: AddressInput): boolean {
    const ip = toIP(input);
    if (this.outOfRange.has(formatIP(ip))) return true;
    return ip.family === this.pool.family && this.engine.isUsed(ip.value);
  }

  /** When a released address leaves its grace period, or undefined if it is not in one. */
  availableAtMs(input: AddressInput): number | undefined {
    const ip = toIP(input);
    return this.allows(ip) ? this.engine.availableAtMs(ip.value) : undefined;
  }

  counts(): PoolCounts {
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

  /** Allocated addresses the current spec does not allow, lowest first (IPv4 before IPv6). */
  outOfRangeAddresses(): IP[] {
    return [...this.outOfRange.values()].sort((a, b) =>
      a.family !== b.family ? a.family - b.family : a.value < b.value ? -1 : a.value > b.value ? 1 : 0,
    );
  }

  /** Every allocated address in range (unordered). */
  *allocatedAddresses(): Generator<IP, void, undefined> {
    for (const value of this.engine.usedUnits()) yield { family: this.pool.family, value };
  }
}
