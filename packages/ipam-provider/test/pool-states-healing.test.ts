import { KubeConfig } from '@kubernetes/client-node';
import { AllocationError } from '@tally-ipam/allocator';
import {
  IPADDRESS_KIND,
  IPAM_V1BETA2_API_VERSION,
  parseTallyIPPool,
  TALLY_ADDRESS_LOCK_KIND,
  TALLY_GROUP,
  TALLY_IP_POOL_KIND,
  TALLY_V1ALPHA1_API_VERSION,
} from '@tally-ipam/api-types';
import { dropManagedFields, KubeTransport, SharedInformer, WatchConnection } from '@tally-ipam/controller-kit';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  ADDRESS_RESOURCE,
  type AllocationUnit,
  addressLockName,
  LOCK_POOL_KIND_LABEL,
  LOCK_POOL_NAME_LABEL,
  LOCK_POOL_NAMESPACE_LABEL,
  LOCK_RESOURCE,
  POOL_STATE_REBUILD_INTERVAL_MS,
  type PoolRef,
  type PoolState,
  PoolStates,
  poolKey,
  StoredAddress,
  StoredLock,
  StoredPool,
} from '../src/index.js';
import { ADDRESS_INDEXERS, LOCK_INDEXERS } from '../src/indexes.js';

/**
 * The in-memory pool state's self-healing, without an API server: the IPAddress and lock informers are real
 * controller-kit informers with the provider's indexers, never started, and fed exactly as their reflector would
 * (`replace` for a list or relist, `upsert` and `remove` for watch events), so the order of events is the test's.
 */

const NAMESPACE = 'tenant';
const REF: PoolRef = { kind: TALLY_IP_POOL_KIND, name: 'pool', namespace: NAMESPACE };
const KEY = poolKey(REF);
const START_MS = Date.parse('2025-01-01T00:00:00Z');

interface Holder {
  readonly name: string;
  readonly uid: string;
}

interface Harness {
  readonly states: PoolStates;
  readonly addresses: SharedInformer<StoredAddress>;
  readonly locks: SharedInformer<StoredLock>;
  /** Every `onSpaceFreed` call, in order. */
  readonly freed: Array<{ poolKey: string; waitingClaims: readonly string[] }>;
  advance(ms: number): void;
  /** The pool's state as a reconcile gets it. */
  state(): PoolState;
}

/** A TallyIPPool as the pool cache holds it, its spec checked with the api-types schema first. */
function ipPool(spec: Record<string, unknown>): StoredPool {
  const object = {
    apiVersion: TALLY_V1ALPHA1_API_VERSION,
    kind: TALLY_IP_POOL_KIND,
    metadata: { name: REF.name, namespace: NAMESPACE, uid: 'pool-uid-1', generation: 1, resourceVersion: '10' },
    spec: { prefix: 24, allocationStrategy: 'LowestFree', ...spec },
  };
  const checked = parseTallyIPPool(object);
  if (!checked.success) throw new Error(`test pool is invalid: ${checked.error.message}`);
  return StoredPool.parse(object);
}

/** Informers built as the provider's cache builds them, with a transport and watch connection that are never used. */
function harness(pool: StoredPool): Harness {
  const kubeConfig = new KubeConfig();
  // Nothing listens there, and nothing connects: the informers are never started.
  kubeConfig.loadFromClusterAndUser(
    { name: 'unused', server: 'http://127.0.0.1:1', skipTLSVerify: false },
    { name: 'none' },
  );
  const transport = new KubeTransport(kubeConfig);
  const watchConnection = new WatchConnection(kubeConfig);
  const logger = pino({ level: 'silent' });
  const addresses = new SharedInformer<StoredAddress>({
    resource: ADDRESS_RESOURCE,
    parse: (raw) => StoredAddress.parse(raw),
    transform: dropManagedFields,
    indexers: ADDRESS_INDEXERS,
    transport,
    watchConnection,
    logger,
  });
  const locks = new SharedInformer<StoredLock>({
    resource: LOCK_RESOURCE,
    parse: (raw) => StoredLock.parse(raw),
    transform: dropManagedFields,
    indexers: LOCK_INDEXERS,
    transport,
    watchConnection,
    logger,
  });
  let now = START_MS;
  const freed: Array<{ poolKey: string; waitingClaims: readonly string[] }> = [];
  const states = new PoolStates({
    pools: (ref) => (poolKey(ref) === KEY ? pool : undefined),
    addresses,
    locks,
    clock: () => now,
    logger,
    onSpaceFreed: (key, waitingClaims) => freed.push({ poolKey: key, waitingClaims: [...waitingClaims] }),
  });
  return {
    states,
    addresses,
    locks,
    freed,
    advance: (ms) => {
      now += ms;
    },
    state: () => {
      const lookup = states.lookup(REF);
      if (lookup?.status !== 'ready') throw new Error(`pool state not ready: ${JSON.stringify(lookup)}`);
      return lookup.state;
    },
  };
}

let resourceVersion = 100;
function nextVersion(): string {
  resourceVersion += 1;
  return String(resourceVersion);
}

/** A lock as the provider creates it (see locks.ts), as the API server returns it. */
function lock(address: string, holder: Holder, releasedAt?: string): StoredLock {
  return StoredLock.parse({
    apiVersion: TALLY_V1ALPHA1_API_VERSION,
    kind: TALLY_ADDRESS_LOCK_KIND,
    metadata: {
      name: addressLockName(address),
      uid: `lock-${address}-${holder.uid}`,
      resourceVersion: nextVersion(),
      labels: {
        [LOCK_POOL_KIND_LABEL]: REF.kind,
        [LOCK_POOL_NAME_LABEL]: REF.name,
        [LOCK_POOL_NAMESPACE_LABEL]: NAMESPACE,
      },
    },
    spec: {
      address,
      poolRef: { apiGroup: TALLY_GROUP, kind: REF.kind, name: REF.name, namespace: NAMESPACE },
      claimRef: { namespace: NAMESPACE, name: holder.name, uid: holder.uid },
      ...(releasedAt === undefined ? {} : { releasedAt }),
    },
  });
}

function ipAddress(address: string, holder: Holder): StoredAddress {
  return StoredAddress.parse({
    apiVersion: IPAM_V1BETA2_API_VERSION,
    kind: IPADDRESS_KIND,
    metadata: {
      name: holder.name,
      namespace: NAMESPACE,
      uid: `ipaddress-${holder.uid}`,
      resourceVersion: nextVersion(),
    },
    spec: {
      address,
      prefix: 24,
      claimRef: { name: holder.name },
      poolRef: { apiGroup: TALLY_GROUP, kind: REF.kind, name: REF.name },
    },
  });
}

/** What the claim reconciler's strategy choice hands out next (`PoolAllocation.allocate`), or `exhausted`. */
function choose(state: PoolState): AllocationUnit | 'exhausted' {
  try {
    return state.allocation.allocate();
  } catch (error) {
    if (error instanceof AllocationError && error.reason === 'exhausted') return 'exhausted';
    throw error;
  }
}

/** A reconcile's choice followed by its assume step, as in `allocate`; the address must be `expected`. */
function chooseAndAssume(state: PoolState, expected: string, claimUID: string): AllocationUnit {
  const unit = choose(state);
  if (unit === 'exhausted') throw new Error(`expected ${expected} to be handed out, the pool is exhausted`);
  expect(unit.address).toBe(expected);
  state.assume(unit, claimUID);
  return unit;
}

function counts(state: PoolState): { total: number; used: number; free: number } {
  const { total, used, free } = state.counts();
  return { total: Number(total), used: Number(used), free: Number(free) };
}

const OLD_CLAIM: Holder = { name: 'old', uid: 'uid-old' };
const OTHER_REPLICA_CLAIM: Holder = { name: 'racer', uid: 'uid-racer' };
const WAITER = `${NAMESPACE}/waiter`;

describe('pool state: a deletion seen while an address was assumed (settleAssumed)', () => {
  it('frees the address when the assumption is settled and wakes the waiting claims', () => {
    const h = harness(ipPool({ addresses: ['10.0.0.1'] }));
    // The released lock of an earlier claim (grace period 0): the address is free to take over.
    const released = lock('10.0.0.1', OLD_CLAIM, '2024-12-31T23:00:00Z');
    h.locks.replace([released], nextVersion());
    h.addresses.replace([], nextVersion());
    const state = h.state();
    expect(counts(state)).toEqual({ total: 1, used: 0, free: 1 });
    h.states.addWaiting(REF, WAITER);

    const unit = chooseAndAssume(state, '10.0.0.1', 'uid-new');
    // The takeover deletes the released lock; the deletion arrives while the reconcile still has the address assumed.
    h.locks.remove(released);
    expect(state.isAssumed(unit.lockName)).toBe(true);
    expect(counts(state)).toEqual({ total: 1, used: 1, free: 0 });
    expect(h.freed).toEqual([]);

    // The reconcile ends its assumption without the address (its create got no lock): nothing holds it any more.
    h.states.settleAssumed(state, unit);
    expect(state.isAssumed(unit.lockName)).toBe(false);
    expect(counts(state)).toEqual({ total: 1, used: 0, free: 1 });
    expect(h.freed).toEqual([{ poolKey: KEY, waitingClaims: [WAITER] }]);
    const next = choose(state);
    expect(next !== 'exhausted' && next.address).toBe('10.0.0.1');
  });

  it('also counts an IPAddress deletion seen while the address was assumed', () => {
    const h = harness(ipPool({ addresses: ['10.0.0.1-10.0.0.2'] }));
    h.locks.replace([], nextVersion());
    h.addresses.replace([], nextVersion());
    const state = h.state();
    h.states.addWaiting(REF, WAITER);

    const unit = chooseAndAssume(state, '10.0.0.1', 'uid-new');
    // A stale IPAddress of that address (no lock) shows up and goes away while the address is assumed.
    const stale = ipAddress('10.0.0.1', OLD_CLAIM);
    h.addresses.upsert(stale);
    h.addresses.remove(stale);
    expect(counts(state)).toEqual({ total: 2, used: 1, free: 1 });
    expect(h.freed).toEqual([]);

    h.states.settleAssumed(state, unit);
    expect(counts(state)).toEqual({ total: 2, used: 0, free: 2 });
    expect(h.freed).toEqual([{ poolKey: KEY, waitingClaims: [WAITER] }]);
    const next = choose(state);
    expect(next !== 'exhausted' && next.address).toBe('10.0.0.1');
  });
});

describe('pool state: settling an assumption without a deletion (settleAssumed)', () => {
  it('keeps the address used after a lost lock race: the holder lock exists', () => {
    const h = harness(ipPool({ addresses: ['10.0.0.1-10.0.0.2'] }));
    h.locks.replace([], nextVersion());
    h.addresses.replace([], nextVersion());
    const state = h.state();
    h.states.addWaiting(REF, WAITER);

    const unit = chooseAndAssume(state, '10.0.0.1', 'uid-new');
    // 409: another replica created the lock; the answer came back before the watch event.
    h.states.settleAssumed(state, unit);
    expect(state.isAssumed(unit.lockName)).toBe(false);
    expect(counts(state)).toEqual({ total: 2, used: 1, free: 1 });
    // The holder's lock event follows.
    h.locks.upsert(lock('10.0.0.1', OTHER_REPLICA_CLAIM));
    expect(counts(state)).toEqual({ total: 2, used: 1, free: 1 });
    expect(h.freed).toEqual([]);
    const next = choose(state);
    expect(next !== 'exhausted' && next.address).toBe('10.0.0.2');
  });

  it('keeps the address used when a deletion was seen but an IPAddress of the pool still carries it', () => {
    const h = harness(ipPool({ addresses: ['10.0.0.1'] }));
    const released = lock('10.0.0.1', OLD_CLAIM, '2024-12-31T23:00:00Z');
    h.locks.replace([released], nextVersion());
    h.addresses.replace([], nextVersion());
    const state = h.state();
    h.states.addWaiting(REF, WAITER);

    const unit = chooseAndAssume(state, '10.0.0.1', 'uid-new');
    h.locks.remove(released);
    // Another replica's claim got the address: its IPAddress is in the cache (its lock not yet).
    h.addresses.upsert(ipAddress('10.0.0.1', OTHER_REPLICA_CLAIM));
    h.states.settleAssumed(state, unit);
    expect(state.isAssumed(unit.lockName)).toBe(false);
    expect(counts(state)).toEqual({ total: 1, used: 1, free: 0 });
    expect(h.freed).toEqual([]);
    expect(choose(state)).toBe('exhausted');
  });
});

describe('pool state: rebuilt from the informer stores (rebuildFromCaches)', () => {
  it('frees an address whose lock came and went during a watch gap, carries assumptions over, and is rate-limited', () => {
    const h = harness(ipPool({ addresses: ['10.0.0.1-10.0.0.2'] }));
    h.locks.replace([], nextVersion());
    h.addresses.replace([], nextVersion());
    const state = h.state();
    h.states.addWaiting(REF, WAITER);

    // Claim 1 chooses A and loses the lock race (409) to another replica whose lock this replica's watch never shows.
    const a = chooseAndAssume(state, '10.0.0.1', 'uid-1');
    h.states.settleAssumed(state, a);
    // Claim 2 takes B; its lock create is still in flight.
    const b = chooseAndAssume(state, '10.0.0.2', 'uid-2');
    expect(counts(state)).toEqual({ total: 2, used: 2, free: 0 });
    // The watch was down while the other replica created and deleted A's lock: the relist shows neither, and the
    // informer reports nothing (it never had the lock).
    h.locks.replace([], nextVersion());
    h.addresses.replace([], nextVersion());
    expect(counts(state)).toEqual({ total: 2, used: 2, free: 0 });
    expect(h.freed).toEqual([]);
    // Claim 3: the pool says it has nothing left.
    expect(choose(state)).toBe('exhausted');

    const fresh = h.states.rebuildFromCaches(REF, state);
    if (fresh === undefined) throw new Error('the first rebuild must be allowed');
    expect(fresh).not.toBe(state);
    expect(h.state()).toBe(fresh);
    expect(counts(fresh)).toEqual({ total: 2, used: 1, free: 1 });
    expect(fresh.isAssumed(b.lockName)).toBe(true);
    expect(fresh.isAssumed(a.lockName)).toBe(false);
    expect(h.freed).toEqual([{ poolKey: KEY, waitingClaims: [WAITER] }]);
    // A reconcile still holding the replaced state is given the new one.
    expect(h.states.rebuildFromCaches(REF, state)).toBe(fresh);
    // Claim 3 again: A.
    const again = chooseAndAssume(fresh, '10.0.0.1', 'uid-3');
    expect(choose(fresh)).toBe('exhausted');

    // Rate limit: once per POOL_STATE_REBUILD_INTERVAL_MS per pool.
    expect(h.states.rebuildFromCaches(REF, fresh)).toBeUndefined();
    h.advance(POOL_STATE_REBUILD_INTERVAL_MS - 1);
    expect(h.states.rebuildFromCaches(REF, fresh)).toBeUndefined();
    h.advance(1);
    const later = h.states.rebuildFromCaches(REF, fresh);
    if (later === undefined) throw new Error('a rebuild must be allowed again after the interval');
    expect(later).not.toBe(fresh);
    // Both in-flight assumptions carried over; nothing was freed, so no claim is woken again.
    expect(counts(later)).toEqual({ total: 2, used: 2, free: 0 });
    expect(later.isAssumed(again.lockName)).toBe(true);
    expect(later.isAssumed(b.lockName)).toBe(true);
    expect(h.freed).toHaveLength(1);

    // B's lock arrives: it speaks for the address from now on, in the state that replaced the rebuilt one.
    h.locks.upsert(lock('10.0.0.2', { name: 'claim-2', uid: 'uid-2' }));
    expect(later.isAssumed(b.lockName)).toBe(false);
    expect(counts(later)).toEqual({ total: 2, used: 2, free: 0 });
  });

  it('keeps what the stores hold: locked addresses, addresses with an IPAddress, and reservations', () => {
    const h = harness(
      ipPool({
        addresses: ['10.0.0.1-10.0.0.4'],
        reservations: [{ claimName: 'pinned', address: '10.0.0.4' }],
      }),
    );
    h.locks.replace([lock('10.0.0.1', { name: 'locked', uid: 'uid-locked' })], nextVersion());
    h.addresses.replace([ipAddress('10.0.0.2', { name: 'addressed', uid: 'uid-addressed' })], nextVersion());
    const state = h.state();
    expect(counts(state)).toEqual({ total: 4, used: 3, free: 1 });
    h.states.addWaiting(REF, WAITER);

    // .3 lost to a lock this replica never sees (409, then created and deleted during a watch gap).
    const lost = chooseAndAssume(state, '10.0.0.3', 'uid-lost');
    h.states.settleAssumed(state, lost);
    h.locks.replace(h.locks.store.list(), nextVersion());
    expect(choose(state)).toBe('exhausted');

    const fresh = h.states.rebuildFromCaches(REF, state);
    if (fresh === undefined) throw new Error('the first rebuild must be allowed');
    expect(counts(fresh)).toEqual({ total: 4, used: 3, free: 1 });
    expect(fresh.isReserved(addressLockName('10.0.0.4'))).toBe(true);
    expect(h.freed).toEqual([{ poolKey: KEY, waitingClaims: [WAITER] }]);
    // Only .3 comes back: the lock holds .1, the IPAddress holds .2, the reservation holds .4 for its claim.
    chooseAndAssume(fresh, '10.0.0.3', 'uid-next');
    expect(choose(fresh)).toBe('exhausted');
  });
});
