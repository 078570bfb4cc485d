import {
  AddressParseError,
  addressBits,
  formatIP,
  type IPFamily,
  type ParsedAddressEntry,
  parseAddressEntry,
  parseIP,
} from '@tally-ipam/allocator';
import { describeJSON, MAX_ECHOED_VALUE_LENGTH } from '../../text/clip.js';
import { addressesOutside, inClusterAddressSpace } from './address-space.js';
import { IN_CLUSTER_SKIP_VALIDATE_DELETE_ANNOTATION } from './constants.js';
import type { InClusterIPPoolSpec } from './ip-pool.js';
import { goEntryWithoutZones, goGatewayWithoutZone } from './zones.js';

/**
 * The in-cluster provider's admission rules for InClusterIPPool and GlobalInClusterIPPool (v1.1.0,
 * `internal/webhooks/inclusterippool.go`) as pure functions, so Tally's webhook refuses what the reference refuses
 * and admits what it admits. Each rule is a named check; the reference's gating is kept: the prefix and same-subnet
 * checks run only when every other check passed (they need a parsable, single-family list).
 *
 * Parsing is the allocator's, which follows Go's `net/netip` (no leading zeros, no hex IPv4, IPv4-mapped IPv6 is
 * IPv6, host bits of a CIDR ignored), after IPv6 zones are dropped where the reference drops them (zones.ts).
 * Refusals quote the value as written.
 */

export type InClusterPoolRule =
  | InClusterPrefixPoolRule
  | 'addresses-required'
  | 'prefix-valid'
  | 'address-parses'
  | 'addresses-one-family'
  | 'gateway-parses'
  | 'gateway-family'
  | 'excluded-address-parses'
  | 'excluded-one-family'
  | 'excluded-family'
  | 'grace-period-not-negative'
  | 'prefix-fits-family'
  | 'address-in-subnet'
  | 'allocated-addresses-kept'
  | 'no-addresses-on-delete';

export interface InClusterPoolIssue {
  readonly rule: InClusterPoolRule;
  /** The field path, `spec.addresses` etc.; `metadata` for the delete rule. */
  readonly field: string;
  /** The offending value as JSON, cut to `MAX_ECHOED_VALUE_LENGTH`. */
  readonly value: string;
  /** The reference's reason, then what was found. */
  readonly message: string;
}

/** The reference's prefix pool rules (`internal/webhooks/inclusterprefixpool.go`), checked in prefix-pool-validation.ts. */
export type InClusterPrefixPoolRule =
  | 'prefixes-required'
  | 'allocation-length-range'
  | 'prefix-parses'
  | 'prefix-ipv6'
  | 'prefix-aligned'
  | 'prefix-length-fits'
  | 'prefix-gateway-parses'
  | 'prefix-gateway-ipv6'
  | 'excluded-prefix-parses'
  | 'excluded-prefix-ipv6'
  | 'allocation-length-immutable'
  | 'allocations-allocatable';

/** One issue; exported for the prefix pool rules, which share the shape. */
export function issue(rule: InClusterPoolRule, field: string, value: unknown, message: string): InClusterPoolIssue {
  return { rule, field, value: describeJSON(value, MAX_ECHOED_VALUE_LENGTH), message };
}

/** One line per issue: `field: message (value: …)`, the shape Tally's other admission refusals have. */
export function formatInClusterPoolIssues(issues: readonly InClusterPoolIssue[]): string {
  return issues.map((entry) => `${entry.field}: ${entry.message} (value: ${entry.value})`).join('; ');
}

function tryParseEntry(text: string): ParsedAddressEntry | undefined {
  try {
    return parseAddressEntry(text);
  } catch (error) {
    if (error instanceof AddressParseError) return undefined;
    throw error;
  }
}

interface ParsedEntries {
  readonly entries: { readonly text: string; readonly parsed: ParsedAddressEntry }[];
  readonly families: ReadonlySet<IPFamily>;
}

function parseEntries(
  field: string,
  rule: InClusterPoolRule,
  texts: readonly string[],
  issues: InClusterPoolIssue[],
): ParsedEntries {
  const entries: ParsedEntries['entries'] = [];
  const families = new Set<IPFamily>();
  for (const text of texts) {
    const parsed = tryParseEntry(goEntryWithoutZones(text));
    if (parsed === undefined) {
      issues.push(issue(rule, field, text, 'provided address is not a valid IP, range, nor CIDR'));
      continue;
    }
    entries.push({ text, parsed });
    families.add(parsed.family);
  }
  return { entries, families };
}

/** The rules of create and update on the new object (the reference's `validate`); `spec` absent reads as empty. */
export function validateInClusterIPPoolSpec(spec: InClusterIPPoolSpec | undefined): InClusterPoolIssue[] {
  const issues: InClusterPoolIssue[] = [];
  const addresses = spec?.addresses ?? [];
  const prefix = spec?.prefix ?? 0;
  if (addresses.length === 0) {
    issues.push(issue('addresses-required', 'spec.addresses', addresses, 'addresses is required'));
  }
  if (prefix < 0) issues.push(issue('prefix-valid', 'spec.prefix', prefix, 'a valid prefix is required'));

  const listed = parseEntries('spec.addresses', 'address-parses', addresses, issues);
  if (listed.families.size > 1) {
    issues.push(
      issue('addresses-one-family', 'spec.addresses', addresses, 'provided addresses are of mixed IP families'),
    );
  }

  const gatewayText = spec?.gateway ?? '';
  if (gatewayText !== '') {
    let gatewayFamily: IPFamily | undefined;
    try {
      gatewayFamily = parseIP(goGatewayWithoutZone(gatewayText)).family;
    } catch (error) {
      if (!(error instanceof AddressParseError)) throw error;
      issues.push(issue('gateway-parses', 'spec.gateway', gatewayText, `not a valid IP address: ${error.message}`));
    }
    if (gatewayFamily !== undefined && [...listed.families].some((family) => family !== gatewayFamily)) {
      issues.push(
        issue('gateway-family', 'spec.gateway', gatewayText, 'provided gateway and addresses are of mixed IP families'),
      );
    }
  }

  const excludedTexts = spec?.excludedAddresses ?? [];
  const excluded = parseEntries('spec.excludedAddresses', 'excluded-address-parses', excludedTexts, issues);
  if (excluded.families.size > 1) {
    issues.push(
      issue(
        'excluded-one-family',
        'spec.excludedAddresses',
        excludedTexts,
        'provided addresses are of mixed IP families',
      ),
    );
  }
  const familiesDiffer = [...listed.families].some((family) =>
    [...excluded.families].some((other) => other !== family),
  );
  if (familiesDiffer) {
    issues.push(
      issue(
        'excluded-family',
        'spec.excludedAddresses',
        excludedTexts,
        'addresses and excluded addresses are of mixed IP families',
      ),
    );
  }

  const grace = spec?.addressReuseGracePeriodSeconds;
  if (grace !== undefined && grace < 0) {
    issues.push(
      issue(
        'grace-period-not-negative',
        'spec.addressReuseGracePeriodSeconds',
        grace,
        'addressReuseGracePeriodSeconds must not be negative',
      ),
    );
  }

  if (issues.length > 0) return issues;
  return subnetIssues(listed, prefix);
}

/** The reference's `validateAddressesAreWithinPrefix`: `prefix` on the lowest listed address holds every entry. */
function subnetIssues(listed: ParsedEntries, prefix: number): InClusterPoolIssue[] {
  const [first] = listed.entries;
  if (first === undefined) return [];
  const family = first.parsed.family;
  if (prefix > addressBits(family)) {
    return [
      issue(
        'prefix-fits-family',
        'spec.prefix',
        prefix,
        `provided prefix is not valid (IPv${family} prefixes are 0 to ${addressBits(family)})`,
      ),
    ];
  }
  // bigint: Math.min does not apply.
  let lowest = first.parsed.first;
  for (const entry of listed.entries) if (entry.parsed.first < lowest) lowest = entry.parsed.first;
  const hostBits = BigInt(addressBits(family) - prefix);
  const subnetFirst = (lowest >> hostBits) << hostBits;
  const subnetLast = subnetFirst + (1n << hostBits) - 1n;
  const subnet = `${formatIP({ family, value: subnetFirst })}/${prefix}`;
  return listed.entries
    .filter((entry) => entry.parsed.first < subnetFirst || entry.parsed.last > subnetLast)
    .map((entry) =>
      issue(
        'address-in-subnet',
        'spec.addresses',
        entry.text,
        `provided address belongs to a different subnet than others (the subnet is ${subnet})`,
      ),
    );
}

/** Create: the spec rules. */
export function validateInClusterIPPoolCreate(spec: InClusterIPPoolSpec | undefined): InClusterPoolIssue[] {
  return validateInClusterIPPoolSpec(spec);
}

/**
 * Update: the spec rules, then every address of the pool's IPAddresses (`inUse`, listed by the caller for the old
 * object's kind, name and namespace) must still be one the new spec hands out: the reference builds the new set
 * without the excluded, gateway and reserved addresses, so an allocated address cannot be excluded either.
 * Unparsable addresses are skipped, as in the reference.
 */
export function validateInClusterIPPoolUpdate(
  newSpec: InClusterIPPoolSpec | undefined,
  inUse: readonly string[],
): InClusterPoolIssue[] {
  const issues = validateInClusterIPPoolSpec(newSpec);
  if (issues.length > 0 || newSpec === undefined) return issues;
  const space = inClusterAddressSpace(newSpec);
  // The spec rules passed, so the allocator builds the pool (zones, the one parse difference, fail above).
  if (!space.ok) {
    return space.issues.map((entry) => issue('address-parses', entry.field, entry.value, entry.message));
  }
  const missing = addressesOutside(space.pool.allocatable, space.pool.family, inUse);
  if (missing.size === 0) return [];
  const sorted = [...missing].sort((a, b) => compareAddresses(a, b));
  return [
    issue(
      'allocated-addresses-kept',
      'spec.addresses',
      sorted,
      `pool addresses do not contain allocated addresses: ${describeJSON(sorted, MAX_ECHOED_VALUE_LENGTH)}`,
    ),
  ];
}

function compareAddresses(a: string, b: string): number {
  const left = parseIP(a);
  const right = parseIP(b);
  if (left.family !== right.family) return left.family - right.family;
  return left.value < right.value ? -1 : left.value > right.value ? 1 : 0;
}

/**
 * Delete, for all four kinds (the reference's IP and prefix pool webhooks have the same rule): refused while the pool
 * has IPAddresses (`inUseCount`, counted by the caller), unless the object carries
 * the skip annotation with any value (`clusterctl move` deletes pools whose addresses it moves separately).
 */
export function validateInClusterPoolDelete(
  annotations: Readonly<Record<string, string>> | undefined,
  inUseCount: number,
): InClusterPoolIssue[] {
  if (annotations !== undefined && Object.hasOwn(annotations, IN_CLUSTER_SKIP_VALIDATE_DELETE_ANNOTATION)) return [];
  if (inUseCount === 0) return [];
  return [
    issue(
      'no-addresses-on-delete',
      'metadata',
      inUseCount,
      `Pool has IPAddresses allocated (${inUseCount}). Cannot delete Pool until all IPAddresses have been removed.`,
    ),
  ];
}
