/**
 * Tenancy of the global pools, as pure decisions: which namespaces a GlobalTallyIPPool / GlobalTallyPrefixPool serves
 * (`spec.namespaceSelector`) and how many of its addresses the claims of one namespace may hold
 * (`spec.maxAddressesPerNamespace`). The claim reconciler asks before a claim gets a new address only; an address
 * already held is never taken back, whatever the selector or the cap says now.
 */
import {
  echo,
  isClusterScopedPoolKind,
  PoolTenancy,
  TALLY_POOL_KINDS,
  type TallyPoolKind,
} from '@tally-ipam/api-types';
import { matchesLabelSelector } from '@tally-ipam/controller-kit/cache';
import { CLAIM_NAMESPACE_CAP_REACHED_REASON, CLAIM_NAMESPACE_NOT_ALLOWED_REASON } from './constants.js';
import type { StoredPool } from './resources.js';

/** A global pool's tenancy, or undefined when it has none (a namespaced pool, or neither field set). */
export function poolTenancy(pool: StoredPool): PoolTenancy | undefined {
  // Tally's global kinds only: the in-cluster provider's global pools have no tenancy, any namespace may claim.
  if (!(TALLY_POOL_KINDS as readonly string[]).includes(pool.kind)) return undefined;
  if (!isClusterScopedPoolKind(pool.kind as TallyPoolKind)) return undefined;
  const parsed = PoolTenancy.safeParse(pool.spec);
  // A spec that does not parse is the pool's InvalidSpec: no claim of it gets this far.
  if (!parsed.success) return undefined;
  const { namespaceSelector, maxAddressesPerNamespace } = parsed.data;
  if (namespaceSelector === undefined && maxAddressesPerNamespace === undefined) return undefined;
  return parsed.data;
}

export type TenancyVerdict =
  | { readonly admitted: true }
  | {
      readonly admitted: false;
      readonly reason: typeof CLAIM_NAMESPACE_NOT_ALLOWED_REASON | typeof CLAIM_NAMESPACE_CAP_REACHED_REASON;
      readonly message: string;
    };

export interface TenancyQuestion {
  readonly tenancy: PoolTenancy;
  /** The pool as a person reads it (`GlobalTallyIPPool shared`). */
  readonly pool: string;
  readonly namespace: string;
  /** The namespace's labels; undefined when the namespace is not (yet) in the cache. */
  readonly namespaceLabels: Readonly<Record<string, string>> | undefined;
  /** Addresses (prefixes) of the pool that claims of the namespace hold now, this claim's none. */
  readonly held: number;
}

/** Whether a claim of `namespace` may get a new address of the pool, and if not why, in words a person can act on. */
export function tenancyVerdict(question: TenancyQuestion): TenancyVerdict {
  const { tenancy, pool, namespace } = question;
  const selector = tenancy.namespaceSelector;
  if (selector !== undefined) {
    // A namespace the cache does not hold cannot be shown selected: fail closed, its event re-queues the claim.
    const selected = question.namespaceLabels !== undefined && matchesLabelSelector(selector, question.namespaceLabels);
    if (!selected) {
      return {
        admitted: false,
        reason: CLAIM_NAMESPACE_NOT_ALLOWED_REASON,
        message:
          `namespace ${namespace} is not selected by spec.namespaceSelector of ${pool} ` +
          `(${echo(JSON.stringify(selector))}): label the namespace to match, or point spec.poolRef at another pool`,
      };
    }
  }
  const cap = tenancy.maxAddressesPerNamespace;
  if (cap !== undefined && question.held >= cap) {
    return {
      admitted: false,
      reason: CLAIM_NAMESPACE_CAP_REACHED_REASON,
      message:
        `claims of namespace ${namespace} hold ${question.held} addresses of ${pool}, its ` +
        `spec.maxAddressesPerNamespace is ${cap}: the claim is allocated as soon as one of them is released`,
    };
  }
  return { admitted: true };
}

/**
 * Runs tasks of one key one after another, tasks of different keys side by side: a namespace's count and the hold
 * write it admits are one step for the process, so two reconciles of one namespace never both see room for one more.
 */
export class KeyedSerializer {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let done: () => void = () => {};
    const mine = new Promise<void>((resolve) => {
      done = resolve;
    });
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous;
    try {
      return await task();
    } finally {
      done();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Keys with a task running or waiting (for tests: the map must not grow with every namespace ever seen). */
  get size(): number {
    return this.tails.size;
  }
}
