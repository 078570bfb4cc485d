import {
  CLUSTER_NAME_LABEL,
  echo,
  METAL3_IP_ADDRESS_FINALIZER,
  METAL3_IP_ADDRESS_KIND,
  METAL3_IP_CLAIM_FINALIZER,
  METAL3_IPAM_V1ALPHA1_API_VERSION,
} from '@tally-ipam/api-types';
import { hasPausedAnnotation, isPaused } from '@tally-ipam/controller-kit/capi';
import {
  addFinalizer,
  hasFinalizer,
  isAlreadyExists,
  isNotFound,
  removeFinalizer,
} from '@tally-ipam/controller-kit/client';
import type { ReconcileContext, Reconciler, Request, Result } from '@tally-ipam/controller-kit/controller';
import { allocateForClaim, type HeldAddress, type Metal3Allocation } from '../allocate.js';
import { Metal3AllocationError } from '../errors.js';
import { ledgerHeldInPlan } from '../holdings.js';
import { clipMessage, planOfPool, poolClusterName } from '../pool-spec.js';
import type { Metal3PoolPlan } from '../ranges.js';
import {
  METAL3_ADDRESS_RESOURCE,
  METAL3_CLAIM_INDEX,
  METAL3_CLAIM_RESOURCE,
  METAL3_POOL_INDEX,
  METAL3_POOL_RESOURCE,
  poolKeyOfClaim,
  type StoredMetal3Address,
  type StoredMetal3Claim,
  type StoredMetal3Pool,
} from '../resources.js';
import { EXHAUSTED_RECHECK_MS, type IPClaimReconcilerDeps, MAX_HOLD_ATTEMPTS } from './deps.js';
import {
  addressesHeldBy,
  claimIdentity,
  holdAddress,
  isHeldBy,
  knownEntries,
  poolIdentity,
  releaseAddress,
} from './entries.js';

/**
 * Reconciles Metal3 IPClaims, following the Metal3 IPAM proposal and ip-address-manager v1.10.1:
 * - paused while the claim has the paused annotation, its Cluster (`cluster.x-k8s.io/cluster-name` label, else the
 *   pool's `spec.clusterName`) has `spec.paused`, or its IPPool has the paused annotation; nothing is allocated for a
 *   Cluster that does not exist (yet);
 * - finalizer `ipclaim.ipam.metal3.io`;
 * - an IPAddress of the claim (its `spec.claim.name`, in the pool) is the allocation: it is reused, its ledger entry
 *   held for the claim (adoption after `clusterctl move` or a switch from Metal3's controller) and `status.address`
 *   written — status is an observation, never read for a decision;
 * - otherwise an address is chosen with `allocateForClaim` against everything held in the pool's ranges (the pool's
 *   IPAddresses and every ledger entry there, whatever API holds it), held in the ledger (the API server decides a
 *   race), then the IPAddress is created with Metal3's name, owner references, finalizer and the claim's labels;
 * - errors go to `status.errorMessage`, naming the field and the value;
 * - deletion (once no other finalizer is left, Metal3's rule): the IPAddresses of the claim are deleted, its entries
 *   released, the finalizer removed.
 */
export class IPClaimReconciler implements Reconciler {
  constructor(private readonly deps: IPClaimReconcilerDeps) {}

  async reconcile(request: Request, context: ReconcileContext): Promise<Result> {
    const key = `${request.namespace ?? ''}/${request.name}`;
    const claim = this.deps.claims.store.get(key);
    if (!claim) return {};
    const pool = await this.poolOf(claim, context);
    const clusterName = claim.metadata.labels?.[CLUSTER_NAME_LABEL] || (pool ? poolClusterName(pool) : undefined);
    const cluster = clusterName ? this.deps.clusters.store.get(`${request.namespace}/${clusterName}`) : undefined;
    if (isPaused(cluster, claim) || (pool !== undefined && hasPausedAnnotation(pool))) {
      context.logger.debug({ cluster: clusterName }, 'paused');
      return {};
    }
    if (claim.metadata.deletionTimestamp) return this.reconcileDelete(claim, context);
    if (clusterName && !cluster) {
      // As Metal3's pool controller: nothing is allocated for a Cluster not seen yet (it may be created paused, or be
      // behind in the cache); its creation re-queues the claim.
      context.logger.debug({ cluster: clusterName }, 'waiting for the Cluster');
      return {};
    }

    const current = await addFinalizer(this.deps.client, METAL3_CLAIM_RESOURCE, claim, METAL3_IP_CLAIM_FINALIZER, {
      signal: context.signal,
    });
    const namespace = current.metadata.namespace ?? '';
    const poolNamespace = current.spec.pool?.namespace;
    if (poolNamespace && poolNamespace !== namespace) {
      return this.fail(
        current,
        `spec.pool.namespace: ${echo(poolNamespace)} is not the claim's namespace ${namespace}: an IPClaim is served by an IPPool of its own namespace`,
        context,
      );
    }
    if (!pool) {
      const name = current.spec.pool?.name;
      return this.fail(
        current,
        name ? `spec.pool.name: IPPool ${namespace}/${echo(name)} not found` : 'spec.pool.name: no IPPool named',
        context,
      );
    }

    const [existing, ...surplus] = this.addressesOfClaim(current, pool);
    if (existing) return this.adopt(current, pool, existing, surplus, context);
    if (pool.metadata.deletionTimestamp) {
      return this.fail(current, `spec.pool.name: IPPool ${namespace}/${pool.metadata.name} is being deleted`, context);
    }
    const plan = planOfPool(pool);
    if (!plan.ok) return this.fail(current, plan.message, context);
    await this.deps.ledgersComplete?.();
    return this.allocate(current, pool, plan.plan, context);
  }

  /**
   * The claim's IPPool: from the cache, else read live — a pool created just before its claim may not be in the cache
   * yet, and answering "not found" (or missing its Cluster's pause) would be wrong.
   */
  private async poolOf(claim: StoredMetal3Claim, context: ReconcileContext): Promise<StoredMetal3Pool | undefined> {
    const poolKey = poolKeyOfClaim(claim);
    if (!poolKey) return undefined;
    const cached = this.deps.pools.store.get(poolKey);
    if (cached) return cached;
    try {
      return await this.deps.client.get(
        METAL3_POOL_RESOURCE,
        { namespace: claim.metadata.namespace, name: claim.spec.pool?.name ?? '' },
        { signal: context.signal },
      );
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /**
   * The IPAddresses of the claim in its pool, the one to keep first: owned by the claim's uid, then the oldest, then by
   * name — an order every replica computes alike, so two replicas that each created one keep the same.
   */
  private addressesOfClaim(claim: StoredMetal3Claim, pool: StoredMetal3Pool): StoredMetal3Address[] {
    const uid = claim.metadata.uid;
    const owned = (address: StoredMetal3Address): number =>
      address.metadata.ownerReferences?.some((ref) => ref.uid === uid) ? 0 : 1;
    return this.deps.addresses.store
      .byIndex(METAL3_CLAIM_INDEX, `${claim.metadata.namespace}/${claim.metadata.name}`)
      .filter((address) => address.spec.pool?.name === pool.metadata.name && address.spec.address)
      .sort(
        (a, b) =>
          owned(a) - owned(b) ||
          (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
          a.metadata.name.localeCompare(b.metadata.name),
      );
  }

  /**
   * The claim's IPAddress exists: its entry is the claim's, status points at it, and any other IPAddress (two
   * replicas that both allocated for the claim at once) and entry of the claim go.
   */
  private async adopt(
    claim: StoredMetal3Claim,
    pool: StoredMetal3Pool,
    existing: StoredMetal3Address,
    surplus: readonly StoredMetal3Address[],
    context: ReconcileContext,
  ): Promise<Result> {
    const address = existing.spec.address ?? '';
    const identity = claimIdentity(claim);
    if (!isHeldBy(this.deps, address, identity.uid)) {
      const result = await holdAddress(this.deps, address, poolIdentity(pool), identity);
      if (!result.ok) {
        const by = result.holder.claimRef;
        return this.fail(
          claim,
          `duplicate address: ${address} of IPAddress ${existing.metadata.namespace}/${existing.metadata.name} is also ` +
            `held by ${by.kind ?? 'IPAddressClaim'} ${by.namespace}/${by.name} (pool ${result.holder.poolRef.kind} ` +
            `${result.holder.poolRef.name}); delete one of the two claims so that each address has one owner`,
          context,
        );
      }
    }
    for (const extra of surplus) {
      if (extra.metadata.ownerReferences?.some((ref) => ref.uid === identity.uid)) {
        await this.deleteAddress(extra, context);
        context.logger.info({ ipAddress: extra.metadata.name }, 'second IPAddress of the claim deleted');
      }
    }
    await this.releaseEntries(identity.uid, (entryAddress) => entryAddress !== address);
    await this.writeStatus(
      claim,
      { address: { name: existing.metadata.name, namespace: existing.metadata.namespace }, errorMessage: null },
      context,
    );
    return {};
  }

  private async allocate(
    claim: StoredMetal3Claim,
    pool: StoredMetal3Pool,
    plan: Metal3PoolPlan,
    context: ReconcileContext,
  ): Promise<Result> {
    const namespace = claim.metadata.namespace ?? '';
    const identity = claimIdentity(claim);
    const poolAddresses: HeldAddress[] = this.deps.addresses.store
      .byIndex(METAL3_POOL_INDEX, `${namespace}/${pool.metadata.name}`)
      .flatMap((address) =>
        address.spec.address ? [{ address: address.spec.address, claimName: address.spec.claim?.name }] : [],
      );
    // Addresses this reconcile found taken in the ledger, or whose IPAddress name another claim has.
    const lost: HeldAddress[] = [];
    for (let attempt = 0; attempt < MAX_HOLD_ATTEMPTS; attempt += 1) {
      // The claim's own entry (an earlier reconcile's hold, even one the view does not show yet) carries its name, so
      // it is chosen again rather than a second address — unless this reconcile lost it already.
      const entries = ledgerHeldInPlan(knownEntries(this.deps), plan, namespace).map((entry) =>
        lost.some((address) => address.address === entry.address) ? { address: entry.address } : entry,
      );
      const held = [...poolAddresses, ...entries, ...lost];
      let allocation: Metal3Allocation;
      try {
        allocation = allocateForClaim(plan, identity.name, held);
      } catch (error) {
        if (!(error instanceof Metal3AllocationError)) throw error;
        await this.fail(claim, `IPPool ${namespace}/${pool.metadata.name}: ${error.message}`, context);
        return error.reason === 'exhausted' ? { requeueAfterMs: EXHAUSTED_RECHECK_MS } : {};
      }
      const hold = await holdAddress(this.deps, allocation.address, poolIdentity(pool), identity);
      if (!hold.ok) {
        const by = hold.holder.claimRef;
        if (plan.preAllocations.has(identity.name)) {
          return this.fail(
            claim,
            `spec.preAllocations[${echo(identity.name)}]: ${allocation.address} of IPPool ${namespace}/${pool.metadata.name} ` +
              `is held by ${by.kind ?? 'IPAddressClaim'} ${by.namespace}/${by.name}`,
            context,
          );
        }
        context.logger.debug({ address: allocation.address, holder: by }, 'address held elsewhere, choosing again');
        lost.push({ address: allocation.address });
        continue;
      }
      const created = await this.createAddress(claim, pool, allocation, context);
      if (created === 'taken') {
        // The IPAddress name belongs to another claim (an IPAddress nobody's entry covers): give the entry back.
        await releaseAddress(this.deps, allocation.address, identity.uid);
        lost.push({ address: allocation.address });
        continue;
      }
      context.logger.info({ address: allocation.address, ipAddress: created.metadata.name }, 'address allocated');
      await this.writeStatus(
        claim,
        { address: { name: created.metadata.name, namespace: created.metadata.namespace }, errorMessage: null },
        context,
      );
      return {};
    }
    context.logger.info({ attempts: MAX_HOLD_ATTEMPTS }, 'every chosen address was held elsewhere, retrying');
    return { requeue: true };
  }

  /** Creates the IPAddress as Metal3 does; an existing one of this claim is returned, another claim's is 'taken'. */
  private async createAddress(
    claim: StoredMetal3Claim,
    pool: StoredMetal3Pool,
    allocation: Metal3Allocation,
    context: ReconcileContext,
  ): Promise<StoredMetal3Address | 'taken'> {
    const namespace = pool.metadata.namespace ?? '';
    try {
      return await this.deps.client.create(
        METAL3_ADDRESS_RESOURCE,
        {
          apiVersion: METAL3_IPAM_V1ALPHA1_API_VERSION,
          kind: METAL3_IP_ADDRESS_KIND,
          metadata: {
            name: allocation.name,
            namespace,
            finalizers: [METAL3_IP_ADDRESS_FINALIZER],
            ownerReferences: [ownerReference(pool), ownerReference(claim)],
            ...(claim.metadata.labels ? { labels: claim.metadata.labels } : {}),
          },
          spec: {
            address: allocation.address,
            pool: { name: pool.metadata.name, namespace },
            claim: { name: claim.metadata.name, namespace },
            ...(allocation.prefix === undefined ? {} : { prefix: allocation.prefix }),
            ...(allocation.gateway === undefined ? {} : { gateway: allocation.gateway }),
            ...(allocation.dnsServers.length > 0 ? { dnsServers: [...allocation.dnsServers] } : {}),
          },
        },
        { signal: context.signal },
      );
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      const live = await this.deps.client.get(
        METAL3_ADDRESS_RESOURCE,
        { namespace, name: allocation.name },
        { signal: context.signal },
      );
      return live.spec.claim?.name === claim.metadata.name && live.spec.address === allocation.address ? live : 'taken';
    }
  }

  private async reconcileDelete(claim: StoredMetal3Claim, context: ReconcileContext): Promise<Result> {
    if (!hasFinalizer(claim, METAL3_IP_CLAIM_FINALIZER)) return {};
    const others = (claim.metadata.finalizers ?? []).filter((finalizer) => finalizer !== METAL3_IP_CLAIM_FINALIZER);
    if (others.length > 0) {
      // Metal3's rule: a claim still in use by whoever put the other finalizers keeps its address.
      context.logger.debug({ finalizers: others }, 'deleting, but other finalizers remain: address kept');
      return {};
    }
    const uid = claim.metadata.uid ?? '';
    const addresses = this.deps.addresses.store.byIndex(
      METAL3_CLAIM_INDEX,
      `${claim.metadata.namespace}/${claim.metadata.name}`,
    );
    for (const address of addresses) {
      await this.deleteAddress(address, context);
      if (address.spec.address) await releaseAddress(this.deps, address.spec.address, uid);
      context.logger.info({ ipAddress: address.metadata.name, address: address.spec.address }, 'IPAddress deleted');
    }
    await this.releaseEntries(uid, () => true);
    await removeFinalizer(this.deps.client, METAL3_CLAIM_RESOURCE, claim, METAL3_IP_CLAIM_FINALIZER, {
      signal: context.signal,
    });
    return {};
  }

  /** Removes Metal3's finalizer from an IPAddress and deletes it (as Metal3's deleteAddress does). */
  private async deleteAddress(address: StoredMetal3Address, context: ReconcileContext): Promise<void> {
    const released = await removeFinalizer(
      this.deps.client,
      METAL3_ADDRESS_RESOURCE,
      address,
      METAL3_IP_ADDRESS_FINALIZER,
      { signal: context.signal },
    );
    try {
      await this.deps.client.delete(
        METAL3_ADDRESS_RESOURCE,
        { namespace: released.metadata.namespace, name: released.metadata.name },
        { signal: context.signal, preconditions: { uid: address.metadata.uid } },
      );
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /** Releases the claim's entries (in the entry view or only in the overlay yet) whose address `which` selects. */
  private async releaseEntries(uid: string, which: (address: string) => boolean): Promise<void> {
    const addresses = addressesHeldBy(this.deps, uid).filter(which);
    await Promise.all(addresses.map((address) => releaseAddress(this.deps, address, uid)));
  }

  private async fail(claim: StoredMetal3Claim, message: string, context: ReconcileContext): Promise<Result> {
    const clipped = clipMessage(message);
    context.logger.info({ error: clipped }, 'IPClaim not served');
    await this.writeStatus(claim, { errorMessage: clipped }, context);
    return {};
  }

  /** Merge-patches `/status` unless it already says this. */
  private async writeStatus(
    claim: StoredMetal3Claim,
    status: {
      readonly address?: { readonly name: string; readonly namespace: string | undefined };
      readonly errorMessage: string | null;
    },
    context: ReconcileContext,
  ): Promise<void> {
    const current = claim.status;
    const sameAddress =
      status.address === undefined ||
      (current?.address?.name === status.address.name && current.address.namespace === status.address.namespace);
    const sameError = (current?.errorMessage ?? null) === status.errorMessage;
    if (sameAddress && sameError) return;
    await this.deps.client.mergePatch(
      METAL3_CLAIM_RESOURCE,
      { namespace: claim.metadata.namespace, name: claim.metadata.name },
      { status },
      { subresource: 'status', signal: context.signal },
    );
  }
}

/** The owner reference Metal3 writes: apiVersion, kind, name, uid; neither controller nor blockOwnerDeletion. */
function ownerReference(owner: StoredMetal3Pool | StoredMetal3Claim): {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
} {
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid ?? '' };
}
