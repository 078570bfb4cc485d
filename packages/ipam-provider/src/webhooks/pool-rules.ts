import { type PoolSpecIssue, tryBuildAddressPool } from '@tally-ipam/allocator';
import {
  DELETE_FOR_MOVE_ANNOTATION,
  echo,
  inspectCIDR,
  inspectIP,
  isClusterScopedPoolKind,
  isPrefixPoolKind,
  type TallyPoolKind,
} from '@tally-ipam/api-types';
import { type AdmissionDecision, allowed, denied } from '@tally-ipam/controller-kit';
import { reservationIssues } from '../reservations.js';
import { gatewayOutsideNetwork } from './gateway-rules.js';
import { describeAllocations, formatInterval, isPrefixPool, poolAddressSpace } from './pool-address-space.js';
import type { PoolAllocation, PoolAllocationsView, PoolIdentity } from './pool-allocations-view.js';
import { describePool, type TallyPool } from './pool-kinds.js';

/** The reference provider's escape hatch for `clusterctl move`, which deletes pools whose addresses move along. */
export const SKIP_VALIDATE_DELETE_ANNOTATION = 'ipam.cluster.x-k8s.io/skip-validate-delete-webhook';

/** The reference provider's wording, kept so scripts and runbooks written for it still match. */
export const POOL_IN_USE_MESSAGE =
  'Pool has IPAddresses allocated. Cannot delete Pool until all IPAddresses have been removed.';

/** How many overlapping ranges one warning names before it says how many more there are. */
const OVERLAP_RANGES_SHOWN = 3;

export function poolIdentity(pool: TallyPool): PoolIdentity {
  return {
    kind: pool.kind,
    name: pool.metadata.name ?? '',
    namespace: isClusterScopedPoolKind(pool.kind) ? undefined : pool.metadata.namespace,
  };
}

function samePool(a: PoolIdentity, b: PoolIdentity): boolean {
  return a.kind === b.kind && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '');
}

function invalidSpec(pool: TallyPool, issues: readonly PoolSpecIssue[]): AdmissionDecision {
  const details = issues.map(
    (issue) => `${issue.field}: Invalid value: ${echo(JSON.stringify(issue.value) ?? '')}: ${issue.message}`,
  );
  return denied(`${pool.kind}.ipam.cluster.x-k8s.io "${pool.metadata.name ?? ''}" is invalid: ${details.join(', ')}`, {
    code: 422,
    reason: 'Invalid',
  });
}

/**
 * Warnings for every other pool of the same family whose addresses meet this one's: not an error (overlapping pools
 * are legitimate behind NAT or in separate sites, as the reference provider's maintainers note), but each address in
 * the overlap can only ever go to one claim, so an operator should know.
 */
export async function overlapWarnings(pool: TallyPool, view: PoolAllocationsView): Promise<string[]> {
  const built = poolAddressSpace(pool);
  if (!built.ok) return [];
  const self = poolIdentity(pool);
  const warnings: string[] = [];
  for (const other of await view.listPools()) {
    if (samePool(self, poolIdentity(other))) continue;
    const otherBuilt = poolAddressSpace(other);
    if (!otherBuilt.ok || otherBuilt.space.family !== built.space.family) continue;
    const overlap = built.space.addresses.intersect(otherBuilt.space.addresses);
    if (overlap.isEmpty) continue;
    const ranges = overlap.intervals
      .slice(0, OVERLAP_RANGES_SHOWN)
      .map((run) => formatInterval(built.space.family, run));
    const more = overlap.intervalCount - ranges.length;
    warnings.push(
      `overlaps ${describePool(other)} in ${ranges.join(' ')}${more > 0 ? ` and ${more} more ranges` : ''}; ` +
        'each address there goes to the first claim of either pool',
    );
  }
  return warnings.sort();
}

/**
 * The reference provider's warnings for a prefix pool that hands out whole host addresses: an allocation length of
 * the family's full length (/128, and /32 for IPv4 prefix pools, which the reference does not have), and then a
 * gateway inside the prefixes, which a prefix pool does not hold back.
 */
export function fullLengthWarnings(pool: TallyPool): string[] {
  if (!isPrefixPool(pool)) return [];
  const first = pool.spec.prefixes[0];
  const family = first === undefined ? undefined : inspectCIDR(first);
  if (family === undefined || !family.ok) return [];
  const bits = family.value.family === 4 ? 32 : 128;
  if (pool.spec.allocationPrefixLength !== bits) return [];
  const single = family.value.family === 4 ? 'TallyIPPool' : 'TallyIPPool (or GlobalTallyIPPool)';
  const warnings = [
    `spec.allocationPrefixLength=${bits} behaves like host-address allocation; consider ${single} for single-address semantics`,
  ];
  const gateway = pool.spec.gateway === undefined ? undefined : inspectIP(pool.spec.gateway);
  if (gateway?.ok) {
    const inside = pool.spec.prefixes.some((text) => {
      const prefix = inspectCIDR(text);
      return prefix.ok && gateway.value.value >= prefix.value.first && gateway.value.value <= prefix.value.last;
    });
    if (inside) {
      warnings.push(
        `spec.gateway is within spec.prefixes and is not reserved; with /${bits} allocationPrefixLength it may also be allocated to claims`,
      );
    }
  }
  return warnings;
}

/** Every reservation the pool can never honour, naming the entry; an IP pool only. */
function reservationsRefused(pool: TallyPool): AdmissionDecision | undefined {
  if (isPrefixPool(pool)) return undefined;
  const built = tryBuildAddressPool(pool.spec);
  if (!built.ok) return undefined;
  const issues = reservationIssues(built.pool, pool.spec.reservations ?? []);
  return issues.length > 0 ? invalidSpec(pool, issues) : undefined;
}

/**
 * A gateway outside the pool's network, refused on create and on an update that introduces it; an update of a pool
 * stored with that gateway already (before this rule) that keeps it is let through, so the pool can still be edited.
 */
function gatewayRefused(pool: TallyPool, oldPool?: TallyPool): AdmissionDecision | undefined {
  const issue = gatewayOutsideNetwork(pool);
  if (issue === undefined) return undefined;
  const old = oldPool === undefined ? undefined : gatewayOutsideNetwork(oldPool);
  return old?.message === issue.message ? undefined : invalidSpec(pool, [issue]);
}

export async function validatePoolCreate(pool: TallyPool, view: PoolAllocationsView): Promise<AdmissionDecision> {
  const built = poolAddressSpace(pool);
  if (!built.ok) return invalidSpec(pool, built.issues);
  const refused = reservationsRefused(pool) ?? gatewayRefused(pool);
  if (refused) return refused;
  return allowed([...fullLengthWarnings(pool), ...(await overlapWarnings(pool, view))]);
}

/**
 * An update must keep every address the pool has handed out allocatable (shrinking `addresses`, excluding a used
 * address, moving the gateway onto one, or turning `allocateReservedIPAddresses` off under a used network address
 * would strand it). Checked against the IPAddress objects, since the spec alone cannot tell. Only addresses the old
 * spec held count: an IPAddress that was already out of range (written by hand, or before a schema change) is the
 * pool status's `outOfRange`, not a reason to refuse every later edit; and with an old spec that no longer parses
 * there is nothing to compare against, so the pool can be fixed.
 */
export async function validatePoolUpdate(
  pool: TallyPool,
  oldPool: TallyPool | undefined,
  identity: PoolIdentity,
  view: PoolAllocationsView,
): Promise<AdmissionDecision> {
  const built = poolAddressSpace(pool);
  if (!built.ok) return invalidSpec(pool, built.issues);
  const refused = reservationsRefused(pool) ?? gatewayRefused(pool, oldPool);
  if (refused) return refused;
  const oldBuilt = oldPool === undefined ? undefined : poolAddressSpace(oldPool);
  const oldSpace = oldBuilt?.ok ? oldBuilt.space : undefined;
  const allocated = oldSpace === undefined ? [] : await view.addressesOf(identity);
  const stranded = allocated
    .filter((allocation) => oldSpace?.rejects(allocation) === undefined)
    .map((allocation) => ({ allocation, why: built.space.rejects(allocation) }))
    .filter((entry): entry is { allocation: PoolAllocation; why: string } => entry.why !== undefined);
  const warnings = [...fullLengthWarnings(pool), ...(await overlapWarnings(pool, view))];
  const first = stranded[0];
  if (first === undefined) return allowed(warnings);
  return denied(
    `pool addresses do not contain allocated addresses: ` +
      `[${describeAllocations(
        stranded.map((entry) => entry.allocation),
        built.space.prefixes,
      )}] (${stranded.length} IPAddress${stranded.length === 1 ? '' : 'es'}; e.g. ${first.allocation.address} of ` +
      `claim ${first.allocation.claimName} ${first.why}); delete their claims first or keep them in the pool`,
    { code: 400, reason: 'BadRequest', warnings },
  );
}

/**
 * A pool with allocated addresses cannot be deleted, with two exceptions:
 * - the reference provider's skip annotation, kept for scripts written for it;
 * - `clusterctl move` deleting the source pool (`DELETE_FOR_MOVE_ANNOTATION`). clusterctl deletes only after the
 *   pool and everything moved with it exist on the target, and replaces the whole annotation map just before, so no
 *   other annotation can reach this point. Refusing then only leaves the move half done (the source Cluster deleted,
 *   the target's still paused). What still holds addresses here belongs to claims that did not move with a Cluster:
 *   they lose their pool on this cluster, as clusterctl says of objects not linked to a moved Cluster, and the answer
 *   warns about them (`movedAwayWarning`).
 */
export async function validatePoolDelete(
  pool: PoolIdentity,
  annotations: Readonly<Record<string, string>>,
  view: PoolAllocationsView,
): Promise<AdmissionDecision> {
  if (annotations[SKIP_VALIDATE_DELETE_ANNOTATION] !== undefined) return allowed();
  const allocated = await view.addressesOf(pool);
  if (allocated.length === 0) return allowed();
  if (annotations[DELETE_FOR_MOVE_ANNOTATION] !== undefined) return allowed([movedAwayWarning(pool, allocated)]);
  return denied(
    `${POOL_IN_USE_MESSAGE} ${describeIdentity(pool)} has ${allocated.length} allocated: ` +
      `[${describeAllocations(allocated, isPrefixPoolKind(pool.kind as TallyPoolKind))}]`,
    { code: 400, reason: 'BadRequest' },
  );
}

function describeIdentity(pool: PoolIdentity): string {
  return pool.namespace ? `${pool.kind} ${pool.namespace}/${pool.name}` : `${pool.kind} ${pool.name}`;
}

/** Claims named in a moved-away warning before it says how many more there are. */
const MOVED_AWAY_CLAIMS_SHOWN = 5;

/** What a pool deleted by `clusterctl move` leaves behind on the source: addresses of claims that did not move. */
export function movedAwayWarning(pool: PoolIdentity, allocated: readonly PoolAllocation[]): string {
  const claims = [...new Set(allocated.map((allocation) => allocation.claimName))].sort();
  const shown = claims.slice(0, MOVED_AWAY_CLAIMS_SHOWN).join(', ');
  const more = claims.length > MOVED_AWAY_CLAIMS_SHOWN ? ` and ${claims.length - MOVED_AWAY_CLAIMS_SHOWN} more` : '';
  return (
    `clusterctl move deletes ${describeIdentity(pool)} from this cluster while ${allocated.length} ` +
    `${allocated.length === 1 ? 'IPAddress here still holds' : 'IPAddresses here still hold'} its addresses ` +
    `[${describeAllocations(allocated, isPrefixPoolKind(pool.kind as TallyPoolKind))}] for claims that did not move ` +
    `with a Cluster (${shown}${more}): they lose their pool on this cluster and wait until it exists here again`
  );
}
