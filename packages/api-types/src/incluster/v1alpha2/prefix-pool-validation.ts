import {
  AddressParseError,
  IntervalSet,
  networkBounds,
  type ParsedCIDR,
  parseAddressEntry,
  parseCIDR,
  parseIP,
} from '@tally-ipam/allocator';
import { IN_CLUSTER_DEFAULT_ALLOCATION_PREFIX_LENGTH } from './constants.js';
import type { InClusterPrefixPoolSpec, InClusterPrefixPoolSpecInput } from './prefix-pool.js';
import { type InClusterPoolIssue, issue } from './validation.js';
import { goEntryWithoutZones, goGatewayWithoutZone } from './zones.js';

/**
 * The in-cluster provider's admission rules for InClusterPrefixPool and GlobalInClusterPrefixPool (v1.1.0,
 * `internal/webhooks/inclusterprefixpool.go`) as pure functions. The reference's gating is kept: no prefixes, or an
 * allocation length out of range, stops the checks there; otherwise every entry is checked. The delete rule is the
 * IP pools' (`validateInClusterPoolDelete`).
 */

/** The reference's `EffectiveAllocationPrefixLength`: 0 or unset is the default, 64. */
export function effectiveAllocationPrefixLength(length: number | undefined): number {
  return length === undefined || length === 0 ? IN_CLUSTER_DEFAULT_ALLOCATION_PREFIX_LENGTH : length;
}

/** The reference's defaulting webhook: `allocationPrefixLength` set to its effective value; nothing else changes. */
export function defaultInClusterPrefixPoolSpec(spec: InClusterPrefixPoolSpecInput): InClusterPrefixPoolSpec {
  return { ...spec, allocationPrefixLength: effectiveAllocationPrefixLength(spec.allocationPrefixLength) };
}

function tryParse<T>(parse: () => T): T | undefined {
  try {
    return parse();
  } catch (error) {
    if (error instanceof AddressParseError) return undefined;
    throw error;
  }
}

/** Create and update: the spec rules (the reference's `validate`). */
export function validateInClusterPrefixPoolSpec(spec: InClusterPrefixPoolSpecInput | undefined): InClusterPoolIssue[] {
  const prefixes = spec?.prefixes ?? [];
  if (prefixes.length === 0) return [issue('prefixes-required', 'spec.prefixes', prefixes, 'prefixes is required')];
  const length = effectiveAllocationPrefixLength(spec?.allocationPrefixLength);
  if (length < 1 || length > 128) {
    return [
      issue(
        'allocation-length-range',
        'spec.allocationPrefixLength',
        length,
        'allocationPrefixLength must be between 1 and 128',
      ),
    ];
  }
  const issues: InClusterPoolIssue[] = [];
  for (const text of prefixes) {
    const cidr = tryParse(() => parseCIDR(text));
    if (cidr === undefined) {
      issues.push(issue('prefix-parses', 'spec.prefixes', text, 'provided entry is not a valid IPv6 CIDR'));
      continue;
    }
    if (cidr.family === 4) {
      issues.push(issue('prefix-ipv6', 'spec.prefixes', text, 'only IPv6 prefixes are supported'));
      continue;
    }
    // Both may apply to one entry, as in the reference.
    if (cidr.network !== cidr.address) {
      issues.push(issue('prefix-aligned', 'spec.prefixes', text, 'CIDR must be network-aligned'));
    }
    if (cidr.prefixLength > length) {
      issues.push(
        issue(
          'prefix-length-fits',
          'spec.prefixes',
          text,
          `CIDR prefix length must be <= allocationPrefixLength (${length})`,
        ),
      );
    }
  }
  const gateway = spec?.gateway ?? '';
  if (gateway !== '') {
    const ip = tryParse(() => parseIP(goGatewayWithoutZone(gateway)));
    if (ip === undefined) {
      issues.push(issue('prefix-gateway-parses', 'spec.gateway', gateway, 'not a valid IP address'));
    } else if (ip.family !== 6) {
      issues.push(issue('prefix-gateway-ipv6', 'spec.gateway', gateway, 'provided gateway must be IPv6'));
    }
  }
  for (const text of spec?.excludedPrefixes ?? []) {
    const entry = tryParse(() => parseAddressEntry(goEntryWithoutZones(text)));
    if (entry === undefined) {
      issues.push(
        issue(
          'excluded-prefix-parses',
          'spec.excludedPrefixes',
          text,
          'provided entry is not a valid IP, range, nor CIDR',
        ),
      );
    } else if (entry.family !== 6) {
      issues.push(
        issue('excluded-prefix-ipv6', 'spec.excludedPrefixes', text, 'only IPv6 excluded prefixes are supported'),
      );
    }
  }
  return issues;
}

/**
 * Update without the IPAddresses: the spec rules, then `allocationPrefixLength` (its effective value) must not
 * change. The reference's third rule, every existing allocation stays allocatable, needs the pool's IPAddresses:
 * `validateInClusterPrefixPoolUpdate` (prefix-address-space.ts) runs all three.
 */
export function validateInClusterPrefixPoolSpecUpdate(
  oldSpec: InClusterPrefixPoolSpecInput | undefined,
  newSpec: InClusterPrefixPoolSpecInput | undefined,
): InClusterPoolIssue[] {
  const issues = validateInClusterPrefixPoolSpec(newSpec);
  if (issues.length > 0) return issues;
  const before = effectiveAllocationPrefixLength(oldSpec?.allocationPrefixLength);
  const after = effectiveAllocationPrefixLength(newSpec?.allocationPrefixLength);
  if (before === after) return [];
  return [
    issue(
      'allocation-length-immutable',
      'spec.allocationPrefixLength',
      after,
      `spec.allocationPrefixLength is immutable (was ${before})`,
    ),
  ];
}

/**
 * The reference's admission warnings for an admitted spec: a /128 allocation length hands out single addresses,
 * and then a gateway inside the prefixes may be handed out too (a prefix pool reserves no gateway).
 */
export function inClusterPrefixPoolWarnings(spec: InClusterPrefixPoolSpecInput): string[] {
  if (effectiveAllocationPrefixLength(spec.allocationPrefixLength) !== 128) return [];
  const warnings = [
    'spec.allocationPrefixLength=128 hands out single addresses; an InClusterIPPool has single-address semantics',
  ];
  // A zoned gateway is never inside the prefixes for the reference (its IPSet holds unzoned addresses only).
  const gatewayText = spec.gateway ?? '';
  if (gatewayText.includes('%')) return warnings;
  const gateway = tryParse(() => parseIP(gatewayText));
  if (gateway === undefined || gateway.family !== 6) return warnings;
  const parsed = spec.prefixes.map((text) => tryParse(() => parseCIDR(text)));
  // As in the reference, an unparsable prefix leaves out the second warning.
  if (parsed.some((cidr) => cidr === undefined)) return warnings;
  const covered = IntervalSet.of(
    (parsed as ParsedCIDR[])
      .filter((cidr) => cidr.family === 6)
      .map((cidr) => networkBounds(6, cidr.network, cidr.prefixLength)),
  );
  if (!covered.contains(gateway.value)) return warnings;
  return [
    ...warnings,
    'spec.gateway is inside spec.prefixes and not reserved: with allocationPrefixLength 128 it may be handed to a claim',
  ];
}
