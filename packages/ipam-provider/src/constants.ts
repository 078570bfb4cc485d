/**
 * Names Tally writes into the cluster. They are part of its API: changing one strands objects written by an older
 * version (a finalizer nobody removes any more), so each is defined once, here.
 */

/** Finalizer on IPAddressClaims: the claim stays until its address is released. */
export const CLAIM_FINALIZER = 'ipam.cluster.x-k8s.io/tally-release-address';
/** Finalizer on IPAddresses (the contract's "protect address"): only Tally removes it, when the claim goes. */
export const ADDRESS_FINALIZER = 'ipam.cluster.x-k8s.io/tally-protect-address';
/** Finalizer on pools: a pool goes only when no address is allocated from it. */
export const POOL_FINALIZER = 'ipam.cluster.x-k8s.io/tally-protect-pool';

/**
 * Annotation on an IPAddressClaim asking for one specific address (or, for a prefix pool, one prefix in CIDR
 * notation). Tally's own domain so that it cannot collide with another provider's annotation of the same meaning.
 */
export const REQUESTED_ADDRESS_ANNOTATION = 'tally.ipam.cluster.x-k8s.io/requested-address';

/** Field manager of every write (and the Events' reporting controller prefix). */
export const DEFAULT_FIELD_MANAGER = 'tally-ipam';

/**
 * Claim `Ready=False` reason: the requested address is a static reservation of another claim. Tally's own, next to
 * the contract's reasons (AllocationFailed would hide that nothing is wrong with the pool).
 */
export const CLAIM_ADDRESS_RESERVED_REASON = 'AddressReserved';

/**
 * Claim `Ready=False` reasons (and the reasons of their Warning Events) of a global pool's tenancy: the claim's
 * namespace is not selected by the pool's `spec.namespaceSelector`, or its claims hold `spec.maxAddressesPerNamespace`
 * addresses already. Tally's own, next to the contract's reasons: nothing is wrong with the pool.
 */
export const CLAIM_NAMESPACE_NOT_ALLOWED_REASON = 'NamespaceNotAllowed';
export const CLAIM_NAMESPACE_CAP_REACHED_REASON = 'NamespaceCapReached';

/** Event reasons on claims and pools (UpperCamelCase, as the Events API expects). */
export const EVENT_ADDRESS_ALLOCATED = 'AddressAllocated';
export const EVENT_ADDRESS_RELEASED = 'AddressReleased';
export const EVENT_POOL_EXHAUSTED = 'PoolExhausted';
export const EVENT_ALLOCATION_FAILED = 'AllocationFailed';
export const EVENT_DUPLICATE_ADDRESS = 'DuplicateAddress';
export const EVENT_ADDRESS_RECREATED = 'AddressRecreated';
/** On a pool: allocations whose AddressAllocated Events on claims were rate-limited, summed up. */
export const EVENT_ADDRESSES_ALLOCATED = 'AddressesAllocated';

/** metav1.Condition's `message` limit (characters): a longer one fails the whole status write, on every retry. */
export const MAX_CONDITION_MESSAGE_LENGTH = 32_768;

/** At most one pool status write per pool in this interval when only the counts changed (bursts coalesce). */
export const POOL_STATUS_COALESCE_MS = 2_000;

/** How many candidates one reconcile tries when holdings turn out to be held elsewhere, before it requeues. */
export const MAX_HOLD_ATTEMPTS = 16;
/** A held holding whose claim is gone and whose address no IPAddress carries is deleted after this age. */
export const ORPHAN_ENTRY_SAFETY_AGE_MS = 60_000;

/**
 * A pool's in-memory state is rebuilt from the informers' stores at most this often, and only when it says the pool has
 * nothing left for a claim: events of an entry written and dropped while a watch was down never arrive, the stores
 * (relisted) are exact.
 */
export const POOL_STATE_REBUILD_INTERVAL_MS = 10_000;
/** A claim waiting on a full pool is also looked at again this often: the safety net behind the wake-up on release. */
export const POOL_EXHAUSTED_RECHECK_MS = 60_000;
/** A claim whose address lies in a ledger that does not parse is looked at again this often (a person must fix it). */
export const UNREADABLE_LEDGER_RECHECK_MS = 30_000;
/**
 * Longest per-claim retry backoff (client-go's default is 1 000 s). Two replicas or an overlapping pool make holding
 * conflicts routine, each one doubles the claim's backoff, and a claim is what a Machine waits on: capped so a claim
 * that lost many races is retried within half a minute, while the controller's overall token bucket still protects
 * the API server.
 */
export const CLAIM_MAX_RETRY_DELAY_MS = 30_000;
/**
 * The claim controller's overall retry bucket (client-go's default is 10 retries/s with a burst of 100). Every
 * rate-limited retry takes a token and the bucket borrows against the future, so with two active replicas, whose
 * 409s are routine, a burst of 2,000 claims ran up minutes of debt: claims whose retry was due waited behind it,
 * 131 of them still unbound after 420 s in a chaos run. The API server is protected by the client's own rate limit
 * (`--kube-api-qps`, 500 by default in the app) and each claim by its exponential backoff; this bucket only has to
 * stop a mass failure from spinning, at a rate the client allows anyway.
 */
export const CLAIM_RETRY_QPS = 100;
export const CLAIM_RETRY_BURST = 1_000;
