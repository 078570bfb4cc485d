import type { Cache, Client, EventRecorder, SharedInformer } from '@tally-ipam/controller-kit';
import type { AllocationEvents } from '../allocation-events.js';
import type { AddressHolds } from '../holds.js';
import type { ProviderMetrics } from '../metrics.js';
import type { ServedPoolKind } from '../pool-kinds.js';
import type { PoolRef } from '../pool-ref.js';
import type { PoolStates } from '../pool-states.js';
import type {
  HoldingSource,
  StoredAddress,
  StoredClaim,
  StoredCluster,
  StoredNamespace,
  StoredPool,
} from '../resources.js';
import type { AssumedWrites } from '../shared.js';
import type { KeyedSerializer } from '../tenancy.js';
import type { CreatedAddresses } from './created-addresses.js';
import type { HoldAhead } from './hold-ahead.js';

/**
 * What a claim's reconcile reads and writes through: the reconciler (reconciler.ts) takes it and hands it whole to
 * each of its steps (choose, acquire, materialise, release), which import it from here rather than from the
 * reconciler that imports them.
 */
export interface ClaimReconcilerDeps {
  readonly client: Client;
  readonly cache: Cache;
  readonly claims: SharedInformer<StoredClaim>;
  readonly addresses: SharedInformer<StoredAddress>;
  /** The holdings of addresses (holdings, or ledger entries seen as holdings). */
  readonly holdings: HoldingSource;
  /** Where the API server decides who holds an address: see `AddressHolds`. */
  readonly holds: AddressHolds;
  readonly clusters: SharedInformer<StoredCluster>;
  /** Namespaces, for the labels a global pool's `spec.namespaceSelector` selects by. */
  readonly namespaces: Pick<SharedInformer<StoredNamespace>, 'store'>;
  /** One turn at a time per (pool, namespace) for claims of pools with tenancy (claim/tenancy-gate.ts). */
  readonly tenancyTurns: KeyedSerializer;
  /** This process's own writes on top of the informers (the assume cache): see `AssumedObjects`. */
  readonly assumed: AssumedWrites;
  readonly pool: (ref: PoolRef) => StoredPool | undefined;
  /** The pool kinds served: a claim of another kind (the in-cluster kinds with the flag off) is left alone. */
  readonly servedKinds: ReadonlySet<ServedPoolKind>;
  readonly states: PoolStates;
  readonly recorder: EventRecorder;
  /** Which routine AddressAllocated Events are recorded and which are summed up on the pool. */
  readonly allocationEvents: AllocationEvents;
  readonly metrics: ProviderMetrics;
  readonly now: () => number;
  /** Holds addresses ahead for waiting claims of a pool in the ledger writes a reconcile makes (ledgers only). */
  readonly holdAhead?: HoldAhead | undefined;
  /** Where the IPAddresses this process creates are noted, so their create events do not reconcile the claim again. */
  readonly createdAddresses?: CreatedAddresses | undefined;
}
