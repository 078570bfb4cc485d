import {
  AddressAllocator,
  type AddressPool,
  AllocationError,
  type AllocationStrategy,
  checkAllocatable,
  checkPrefixAllocatable,
  formatIP,
  type IP,
  type Prefix,
  PrefixAllocator,
  type PrefixPool,
  parseCIDR,
  parseIP,
  tryBuildAddressPool,
  tryBuildPrefixPool,
} from '@tally-ipam/allocator';
import { addressEntryKey, prefixEntryKey } from '@tally-ipam/ledger';
import type { ServedPoolKind } from './pool-kinds.js';
import { type AddressAllocationSpec, issuesMessage, type PrefixAllocationSpec, parsePoolSpec } from './pool-spec.js';
import { reservationIssues } from './reservations.js';

/**
 * One pool's spec turned into allocation state, the same for address pools and prefix pools: a unit is an address
 * (IP pools) or an aligned prefix (prefix pools), carrying what the IPAddress and the holding need.
 */
export interface AllocationUnit {
  /** Canonical text of the address (for a prefix: its network address). */
  readonly address: string;
  /** The IPAddress `spec.prefix`: the pool's `prefix` for IP pools, the allocation length for prefix pools. */
  readonly prefix: number;
  /** Key of the ledger entry that holds it (`addressEntryKey` / `prefixEntryKey`). */
  readonly entryKey: string;
  /** True for prefix allocations (their holdings carry `spec.prefix`). */
  readonly isPrefix: boolean;
}

export interface PoolAllocation {
  readonly isPrefixPool: boolean;
  readonly gateway: string | undefined;
  readonly strategy: AllocationStrategy;
  readonly reuseGracePeriodMs: number;
  /**
   * How long a deleted claim keeps its IPAddress and its address before either is released, from the claim's
   * deletion: the in-cluster kinds' `addressReuseGracePeriodSeconds`, held on the deletion as the reference holds it
   * (their `reuseGracePeriodMs` is 0: once released, the address is free at once). 0 for Tally's pools.
   */
  readonly releaseDelayMs: number;
  /** Static addresses by claim name (IP pools only). */
  readonly reservations: ReadonlyMap<string, string>;
  /** The next unit by the pool's strategy; throws AllocationError (`exhausted`). */
  allocate(): AllocationUnit;
  /** Exactly this address or prefix text; throws AllocationError with the reason it cannot be had. */
  allocateSpecific(text: string, options?: { ignoreGracePeriod?: boolean }): AllocationUnit;
  /** The unit an IPAddress / holding spec describes; undefined when its text does not parse. */
  unitOf(address: string, prefix: number): AllocationUnit | undefined;
  markAllocated(unit: AllocationUnit): void;
  release(unit: AllocationUnit, releasedAtMs: number): boolean;
  markReleased(unit: AllocationUnit, releasedAtMs: number): void;
  isAllocated(unit: AllocationUnit): boolean;
  /** True when the spec allows this unit (another pool's holding on it then blocks this pool too). */
  covers(unit: AllocationUnit): boolean;
  /** The address pool the allocator hands out from (IP pools only): the in-cluster status counts read it. */
  readonly addressPool: AddressPool | undefined;
  /** The prefix pool the allocator hands out from (prefix pools only): the in-cluster status counts read it. */
  readonly prefixPool: PrefixPool | undefined;
  counts(): { total: bigint; used: bigint; free: bigint; outOfRange: bigint };
}

export type PoolAllocationBuild = { ok: true; allocation: PoolAllocation } | { ok: false; message: string };

function addressUnit(ip: IP, prefix: number): AllocationUnit {
  return { address: formatIP(ip), prefix, entryKey: addressEntryKey(ip), isPrefix: false };
}

function prefixUnit(prefix: Prefix): AllocationUnit {
  const network = { family: prefix.family, value: prefix.network };
  return {
    address: formatIP(network),
    prefix: prefix.prefixLength,
    entryKey: prefixEntryKey(network, prefix.prefixLength),
    isPrefix: true,
  };
}

function safeParseIP(text: string): IP | undefined {
  try {
    return parseIP(text);
  } catch {
    return undefined;
  }
}

class AddressPoolAllocation implements PoolAllocation {
  readonly isPrefixPool = false;
  readonly gateway: string | undefined;
  readonly strategy: AllocationStrategy;
  readonly reuseGracePeriodMs: number;
  readonly reservations: ReadonlyMap<string, string>;

  constructor(
    private readonly allocator: AddressAllocator,
    private readonly spec: AddressAllocationSpec,
    readonly releaseDelayMs: number,
  ) {
    this.gateway = spec.gateway;
    this.strategy = spec.allocationStrategy;
    this.reuseGracePeriodMs = (spec.addressReuseGracePeriodSeconds ?? 0) * 1000;
    this.reservations = new Map((spec.reservations ?? []).map((r) => [r.claimName, formatIP(parseIP(r.address))]));
  }

  allocate(): AllocationUnit {
    return addressUnit(this.allocator.allocate(), this.spec.prefix);
  }

  allocateSpecific(text: string, options: { ignoreGracePeriod?: boolean } = {}): AllocationUnit {
    const ip = safeParseIP(text);
    if (!ip) throw new AllocationError('outside-pool', `"${text}" is not an IP address`, { requested: text });
    return addressUnit(this.allocator.allocateSpecific(ip, options), this.spec.prefix);
  }

  unitOf(address: string, _prefix: number): AllocationUnit | undefined {
    const ip = safeParseIP(address);
    return ip ? addressUnit(ip, this.spec.prefix) : undefined;
  }

  markAllocated(unit: AllocationUnit): void {
    // Parsed once for both calls: a start marks every bound address of every pool.
    const ip = parseIP(unit.address);
    if (!this.allocator.isAllocated(ip)) this.allocator.markAllocated(ip);
  }

  release(unit: AllocationUnit, releasedAtMs: number): boolean {
    return this.allocator.release(unit.address, releasedAtMs);
  }

  markReleased(unit: AllocationUnit, releasedAtMs: number): void {
    this.allocator.markReleased(unit.address, releasedAtMs);
  }

  isAllocated(unit: AllocationUnit): boolean {
    return this.allocator.isAllocated(unit.address);
  }

  covers(unit: AllocationUnit): boolean {
    if (unit.isPrefix) return false;
    const ip = safeParseIP(unit.address);
    return ip !== undefined && checkAllocatable(this.allocator.pool, ip).allocatable;
  }

  get addressPool(): AddressPool {
    return this.allocator.pool;
  }

  readonly prefixPool = undefined;

  counts(): { total: bigint; used: bigint; free: bigint; outOfRange: bigint } {
    return this.allocator.counts();
  }
}

class PrefixPoolAllocation implements PoolAllocation {
  readonly isPrefixPool = true;
  readonly gateway: string | undefined;
  readonly strategy: AllocationStrategy = 'LowestFree';
  readonly reuseGracePeriodMs = 0;
  readonly releaseDelayMs = 0;
  readonly reservations: ReadonlyMap<string, string> = new Map();
  readonly addressPool = undefined;

  constructor(
    private readonly allocator: PrefixAllocator,
    spec: PrefixAllocationSpec,
  ) {
    this.gateway = spec.gateway;
  }

  get prefixPool(): PrefixPool {
    return this.allocator.pool;
  }

  allocate(): AllocationUnit {
    return prefixUnit(this.allocator.allocate());
  }

  allocateSpecific(text: string, options: { ignoreGracePeriod?: boolean } = {}): AllocationUnit {
    try {
      parseCIDR(text);
    } catch {
      throw new AllocationError('outside-pool', `"${text}" is not a prefix in CIDR notation (e.g. fd00:1::/64)`, {
        requested: text,
      });
    }
    return prefixUnit(this.allocator.allocateSpecific(text, options));
  }

  unitOf(address: string, prefix: number): AllocationUnit | undefined {
    const ip = safeParseIP(address);
    return ip ? prefixUnit({ family: ip.family, network: ip.value, prefixLength: prefix }) : undefined;
  }

  private toInput(unit: AllocationUnit): { address: string; prefixLength: number } {
    return { address: unit.address, prefixLength: unit.prefix };
  }

  markAllocated(unit: AllocationUnit): void {
    // Parsed once for both calls, as for address pools.
    const input = { address: parseIP(unit.address), prefixLength: unit.prefix };
    if (!this.allocator.isAllocated(input)) this.allocator.markAllocated(input);
  }

  release(unit: AllocationUnit, releasedAtMs: number): boolean {
    return this.allocator.release(this.toInput(unit), releasedAtMs);
  }

  markReleased(_unit: AllocationUnit, _releasedAtMs: number): void {
    // Prefix pools have no reuse grace period or release order: nothing to record.
  }

  isAllocated(unit: AllocationUnit): boolean {
    return this.allocator.isAllocated(this.toInput(unit));
  }

  covers(unit: AllocationUnit): boolean {
    if (!unit.isPrefix) return false;
    const ip = safeParseIP(unit.address);
    if (!ip) return false;
    const prefix: Prefix = { family: ip.family, network: ip.value, prefixLength: unit.prefix };
    return checkPrefixAllocatable(this.allocator.pool, prefix).allocatable;
  }

  counts(): { total: bigint; used: bigint; free: bigint; outOfRange: bigint } {
    return this.allocator.counts();
  }
}

/**
 * Parses a pool object (as stored: spec unvalidated) and builds its allocation state with no allocations yet. A spec
 * that fails validation, or a reservation the pool cannot hand out, gives a message naming the field and the value.
 */
export function buildPoolAllocation(kind: ServedPoolKind, pool: unknown, clock: () => number): PoolAllocationBuild {
  const parsed = parsePoolSpec(kind, pool);
  if (!parsed.ok) return parsed;
  if ('prefix' in parsed) {
    const spec = parsed.prefix;
    const build = tryBuildPrefixPool({
      prefixes: spec.prefixes,
      allocationPrefixLength: spec.allocationPrefixLength,
      excludedPrefixes: spec.excludedPrefixes,
    });
    if (!build.ok) return { ok: false, message: issuesMessage(build.issues) };
    return { ok: true, allocation: new PrefixPoolAllocation(new PrefixAllocator(build.pool, { clock }), spec) };
  }
  const { address, allocation: spec, releaseDelayMs } = parsed;
  const build = tryBuildAddressPool({
    addresses: address.addresses,
    prefix: address.prefix,
    gateway: address.gateway,
    excludedAddresses: address.excludedAddresses,
    allocateReservedIPAddresses: address.allocateReservedIPAddresses,
  });
  if (!build.ok) return { ok: false, message: issuesMessage(build.issues) };
  const problems = reservationIssues(build.pool, spec.reservations ?? []);
  if (problems.length > 0) {
    return { ok: false, message: problems.map((issue) => `${issue.field}: ${issue.message}`).join('; ') };
  }
  const allocator = new AddressAllocator(build.pool, {
    strategy: spec.allocationStrategy,
    reuseGracePeriodMs: (spec.addressReuseGracePeriodSeconds ?? 0) * 1000,
    clock,
  });
  return { ok: true, allocation: new AddressPoolAllocation(allocator, spec, releaseDelayMs) };
}
