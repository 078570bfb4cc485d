import type { StoredCluster } from '@tally-ipam/api-types';
import type { AssumedObjects, Cache, KubeObject, SharedInformer } from '@tally-ipam/controller-kit/cache';
import type { Client } from '@tally-ipam/controller-kit/client';
import type { Predicate } from '@tally-ipam/controller-kit/controller';
import type { Manager } from '@tally-ipam/controller-kit/manager';
import type { AddressLedgers, Holding, LedgerEntryView } from '@tally-ipam/ledger';
import type { StoredMetal3Address, StoredMetal3Claim, StoredMetal3Pool } from './resources.js';

/** What the three Metal3 controllers share: one client, one cache and its informers, the ledgers, the options. */
export interface Metal3ControllerContext {
  readonly client: Client;
  readonly cache: Cache;
  readonly registry: Manager['registry'];
  readonly logger: Manager['logger'];
  readonly now: () => number;
  /** The namespace watched; undefined: all. */
  readonly namespace: string | undefined;
  /** `cluster.x-k8s.io/watch-filter` value claims and pools must carry; empty: all. */
  readonly watchFilter: string;
  readonly concurrency: number;
  readonly ledgers: AddressLedgers;
  readonly ledgerEntries: LedgerEntryView;
  /** This process's acknowledged ledger writes over `ledgerEntries` until the view shows them (see `AssumedObjects`). */
  readonly assumedEntries: AssumedObjects<Holding>;
  readonly orphanSafetyAgeMs: number | undefined;
  /** Resolves once the ledgers hold every allocation: the embedding process's gate and the Metal3 adoption barrier. */
  readonly ledgersComplete: (() => Promise<unknown>) | undefined;
  readonly informers: {
    readonly pools: SharedInformer<StoredMetal3Pool>;
    readonly claims: SharedInformer<StoredMetal3Claim>;
    readonly addresses: SharedInformer<StoredMetal3Address>;
    readonly clusters: SharedInformer<StoredCluster>;
  };
}

/** Passes deletes only: what goes away is what a collector looks at again. */
export function deletedOnly<T extends KubeObject>(): Predicate<T> {
  return { create: () => false, update: () => false, delete: () => true, generic: () => false };
}

/** Passes nothing: a watch registered only so the controller waits for its informer to sync. */
export function syncOnly<T extends KubeObject>(): Predicate<T> {
  return { create: () => false, update: () => false, delete: () => false, generic: () => false };
}
