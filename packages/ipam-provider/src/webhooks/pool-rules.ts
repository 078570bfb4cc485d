import type { PoolSpecIssue } from '@tally-ipam/allocator';
import { isClusterScopedPoolKind } from '@tally-ipam/api-types';
import { type AdmissionDecision, allowed, denied } from '@tally-ipam/controller-kit';
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
    (issue) => `${issue.field}: Invalid value: ${JSON.stringify(issue.value)}: ${issue.message}`,
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

export async function validatePoolCreate(pool: TallyPool, view: PoolAllocationsView): Promise<AdmissionDecision> {
  const built = poolAddressSpace(pool);
  if (!built.ok) return invalidSpec(pool, built.issues);
  return allowed(await overlapWarnings(pool, view));
}

/**
 * An update must keep every address the pool has handed out allocatable (shrinking `addresses`, excluding a used
 * address, moving the gateway onto one, or turning `allocateReservedIPAddresses` off under a used network address
 * would strand it). Checked against the IPAddress objects, since the spec alone cannot tell.
 */
export async function validatePoolUpdate(
  pool: TallyPool,
  oldPool: TallyPool,
  view: PoolAllocationsView,
): Promise<AdmissionDecision> {
  const built = poolAddressSpace(pool);
  if (!built.ok) return invalidSpec(pool, built.issues);
  const allocated = await view.addressesOf(poolIdentity(oldPool));
  const stranded = allocated
    .map((allocation) => ({ allocation, why: built.space.rejects(allocation) }))
    .filter((entry): entry is { allocation: PoolAllocation; why: string } => entry.why !== undefined);
  const warnings = await overlapWarnings(pool, view);
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

/** A pool with allocated addresses cannot be deleted, unless it carries the skip annotation (`clusterctl move`). */
export async function validatePoolDelete(pool: TallyPool, view: PoolAllocationsView): Promise<AdmissionDecision> {
  if (pool.metadata.annotations?.[SKIP_VALIDATE_DELETE_ANNOTATION] !== undefined) return allowed();
  const allocated = await view.addressesOf(poolIdentity(pool));
  if (allocated.length === 0) return allowed();
  return denied(
    `${POOL_IN_USE_MESSAGE} ${describePool(pool)} has ${allocated.length} allocated: ` +
      `[${describeAllocations(allocated, isPrefixPool(pool))}]`,
    { code: 400, reason: 'BadRequest' },
  );
}
