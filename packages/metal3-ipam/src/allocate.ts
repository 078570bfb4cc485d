import {
  AddressAllocator,
  AddressParseError,
  AllocationError,
  type AllocationStrategy,
  formatIP,
  type IP,
  parseIP,
} from '@tally-ipam/allocator';
import { echo } from '@tally-ipam/api-types';
import { Metal3AllocationError } from './errors.js';
import { ipAddressName } from './names.js';
import type { Metal3PoolPlan, Metal3Range } from './ranges.js';

/** An address already held in the pool's address space: from an IPAddress of either API, with the claim it serves. */
export interface HeldAddress {
  readonly address: string;
  /** The claim the IPAddress names (`spec.claim.name`, `spec.claimRef.name`); absent when unknown. */
  readonly claimName?: string | undefined;
}

/** What the IPAddress for a claim carries (Metal3's `IPAddressSpec` minus the references) and its name. */
export interface Metal3Allocation {
  /** `<namePrefix>-<address>`: see {@link ipAddressName}. */
  readonly name: string;
  /** Canonical text. */
  readonly address: string;
  readonly prefix: number | undefined;
  readonly gateway: string | undefined;
  readonly dnsServers: readonly string[];
  /** Position of the range in `spec.pools`; -1 for an address held by the claim that no range contains any more. */
  readonly rangeIndex: number;
}

export interface AllocateOptions {
  /** How a range picks among its free addresses; default `LowestFree` (Metal3 v1.10 scans each range in order). */
  readonly strategy?: AllocationStrategy;
  /** Uniform in [0, 1), for the Random strategy. */
  readonly random?: () => number;
}

function rangeOf(plan: Metal3PoolPlan, ip: IP): Metal3Range | undefined {
  return plan.ranges.find((range) => range.family === ip.family && range.first <= ip.value && ip.value <= range.last);
}

function allocationFor(plan: Metal3PoolPlan, ip: IP): Metal3Allocation {
  const range = rangeOf(plan, ip);
  const address = formatIP(ip);
  return {
    name: ipAddressName(plan.namePrefix, address),
    address,
    prefix: range?.prefix,
    gateway: range?.gateway,
    dnsServers: range?.dnsServers ?? [],
    rangeIndex: range?.index ?? -1,
  };
}

function parseHeld(held: Iterable<HeldAddress>): { ip: IP; claimName: string | undefined }[] {
  const parsed: { ip: IP; claimName: string | undefined }[] = [];
  for (const entry of held) {
    try {
      parsed.push({ ip: parseIP(entry.address), claimName: entry.claimName });
    } catch (error) {
      // An unparsable address cannot equal any address a range hands out, so it blocks nothing.
      if (!(error instanceof AddressParseError)) throw error;
    }
  }
  return parsed;
}

/**
 * The address for the claim `claimName`, following the proposal's rules in order:
 * 1. an address already held for this claim is reused (the IPAddress is the source of truth, not the pool status);
 * 2. a claim with a pre-allocation gets exactly that address, unless another claim holds it (an error naming both)
 *    or it cannot be honoured (an error naming the field and the value);
 * 3. otherwise the first range, in `spec.pools` order, with a free address gives one, where free means: not held by
 *    anyone and not pre-allocated to any claim.
 * `held` lists the addresses of the whole address space (both APIs, every pool it overlaps), so the answer never
 * collides with an address handed out elsewhere; the API server's name uniqueness still decides any race.
 */
export function allocateForClaim(
  plan: Metal3PoolPlan,
  claimName: string,
  held: Iterable<HeldAddress>,
  options: AllocateOptions = {},
): Metal3Allocation {
  const taken = parseHeld(held);
  const own = taken.find((entry) => entry.claimName === claimName);
  if (own) return allocationFor(plan, own.ip);

  const refused = plan.preAllocationIssues.get(claimName);
  if (refused) {
    throw new Metal3AllocationError('pre-allocation-invalid', `${refused.field}: ${refused.message}`);
  }
  const preAllocation = plan.preAllocations.get(claimName);
  if (preAllocation) {
    const holder = taken.find(
      (entry) => entry.ip.family === preAllocation.address.family && entry.ip.value === preAllocation.address.value,
    );
    if (holder) {
      throw new Metal3AllocationError(
        'pre-allocation-held',
        `spec.preAllocations[${echo(claimName)}]: ${preAllocation.text} is held by ` +
          `${holder.claimName === undefined ? 'another IPAddress' : `claim ${echo(holder.claimName)}`}`,
      );
    }
    return allocationFor(plan, preAllocation.address);
  }

  const blocked = [...taken.map((entry) => entry.ip), ...plan.blockedByPreAllocations];
  for (const range of plan.ranges) {
    const allocator = new AddressAllocator(
      range.pool,
      { strategy: options.strategy ?? 'LowestFree', ...(options.random ? { random: options.random } : {}) },
      { allocated: blocked.filter((ip) => ip.family === range.family) },
    );
    try {
      return allocationFor(plan, allocator.allocate());
    } catch (error) {
      if (!(error instanceof AllocationError) || error.reason !== 'exhausted') throw error;
    }
  }
  throw new Metal3AllocationError(
    'exhausted',
    `no free address for claim ${echo(claimName)} in the ${plan.ranges.length} range(s) of spec.pools`,
  );
}
