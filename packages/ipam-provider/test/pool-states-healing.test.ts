import { KubeConfig } from '@kubernetes/client-node';
import { AllocationError } from '@tally-ipam/allocator';
import {
  IPADDRESS_KIND,
  IPAM_V1BETA2_API_VERSION,
  parseTallyIPPool,
  TALLY_GROUP,
  TALLY_IP_POOL_KIND,
  TALLY_V1ALPHA1_API_VERSION,
} from '@tally-ipam/api-types';
import {
  dropManagedFields,
  KubeTransport,
  SharedInformer,
  typedResource,
  WatchConnection,
} from '@tally-ipam/controller-kit';
import { addressEntryKey, Holding } from '@tally-ipam/ledger';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  ADDRESS_RESOURCE,
  type AllocationUnit,
  POOL_STATE_REBUILD_INTERVAL_MS,
  type PoolRef,
  type PoolState,
  PoolStates,
  poolKey,
  StoredAddress,
  StoredPool,
} from '../src/index.js';
import { ADDRESS_INDEXERS, HOLDING_INDEXERS } from '../src/indexes.js';

/**
 * The in-memory pool state's self-healing, without an API server: the IPAddress and holding informers are real
 * controller-kit informers with the provider's indexers, never started, and fed exactly as their reflector would
 * (`replace` for a list or relist, `upsert` and `remove` for watch events), so the order of events is the test's.
 * The holdings' informer stands in for the ledger entry view (`LedgerEntryView`): the same store of holdings with the
 * same add, update and delete events, fed one holding at a time.
 */
const HOLDING_RESOURCE = typedResource(
  { apiVersion: TALLY_V1ALPHA1_API_VERSION, kind: 'Holding', plural: 'holdings', namespaced: false },
  Holding,
);

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
  readonly holdings: SharedInformer<Holding>;
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
  const holdings = new SharedInformer<Holding>({
    resource: HOLDING_RESOURCE,
    parse: (raw) => Holding.parse(raw),
    transform: dropManagedFields,
    indexers: HOLDING_INDEXERS,
    transport,
    watchConnection,
    logger,
  });
  let now = START_MS;
  const freed: Array<{ poolKey: string; waitingClaims: readonly string[] }> = [];
  const states = new PoolStates({
    pools: (ref) => (poolKey(ref) === KEY ? pool : undefined),
    addresses,
    holdings,
    clock: () => now,
    logger,
    onSpaceFreed: (key, waitingClaims) => freed.push({ poolKey: key, waitingClaims: [...waitingClaims] }),
  });
  return {
    states,
    addresses,
    holdings,
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

/** A ledger entry as the entry view shows it (see `holdingOfEntry`). */
function holding(address: string, holder: Holder, releasedAt?: string): Holding {
  return Holding.parse({
    metadata: {
      name: addressEntryKey(address),
      uid: `${holder.uid}@2025-01-01T00:00:00.000Z`,
      resourceVersion: nextVersion(),
      creationTimestamp: '2025-01-01T00:00:00.000Z',
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
    // The released holding of an earlier claim (grace period 0): the address is free to take over.
    const released = holding('10.0.0.1', OLD_CLAIM, '2024-12-31T23:00:00Z');
    h.holdings.replace([released], nextVersion());
    h.addresses.replace([], nextVersion());
    const state = h.state();
    expect(counts(state)).toEqual({ total: 1, used: 0, free: 1 });
    h.states.addWaiting(REF, WAITER);

    const unit = chooseAndAssume(state, '10.0.0.1', 'uid-new');
    // The takeover deletes the released holding; the deletion arrives while the reconcile still has the address assumed.
    h.holdings.remove(released);
    expect(state.isAssumed(unit.entryKey)).toBe(true);
    expect(counts(state)).toEqual({ total: 1, used: 1, free: 0 });
    expect(h.freed).toEqual([]);

    // The reconcile ends its assumption without the address (its create got no holding): nothing holds it any more.
    h.states.settleAssumed(state, unit);
    expect(state.isAssumed(unit.entryKey)).toBe(false);
    expect(counts(state)).toEqual({ total: 1, used: 0, free: 1 });
    expect(h.freed).toEqual([{ poolKey: KEY, waitingClaims: [WAITER] }]);
    const next = choose(state);
    expect(next !== 'exhausted' && next.address).toBe('10.0.0.1');
  });

  it('also counts an IPAddress deletion seen while the address was assumed', () => {
    const h = harness(ipPool({ addresses: ['10.0.0.1-10.0.0.2'] }));
    h.holdings.replace([], nextVersion());
    h.addresses.replace([], nextVersion());
    const state = h.state();
    h.states.addWaiting(REF, WAITER);

    const unit = chooseAndAssume(state, '10.0.0.1', 'uid-new');
    // A stale IPAddress of that address (no holding) shows up and goes away while the address is assumed.
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
  it('keeps the address used after a lost holding race: the holder holding exists', () => {
    const h = harness(ipPool({ addresses: ['10.0.0.1-10.0.0.2'] }));
    h.holdings.replace([], nextVersion());
    h.addresses.replace([], nextVersion());
    const state = h.state();
    h.states.addWaiting(REF, WAITER);

    const unit = chooseAndAssume(state, '10.0.0.1', 'uid-new');
    // 409: another replica created the holding; the answer came back before the watch event.
    h.states.settleAssumed(state, unit);
    expect(state.isAssumed(unit.entryKey)).toBe(false);
    expect(counts(state)).toEqual({ total: 2, used: 1, free: 1 });
    // The holder's holding event follows.
    h.holdings.upsert(holding('10.0.0.1', OTHER_REPLICA_CLAIM));
    expect(counts(state)).toEqual({ total: 2, used: 1, free: 1 });
    expect(h.freed).toEqual([]);
    const next = choose(state);
    expect(next !== 'exhausted' && next.address).toBe('10.0.0.2');
  });

  it('keeps the address used when a deletion was seen but an IPAddress of the pool still carries it', () => {
    const h = harness(ipPool({ addresses: ['10.0.0.1'] }));
    const released = holding('10.0.0.1', OLD_CLAIM, '2024-12-31T23:00:00Z');
    h.holdings.replace([released], nextVersion());
    h.addresses.replace([], nextVersion());
    const state = h.state();
    h.states.addWaiting(REF, WAITER);

    const unit = chooseAndAssume(state, '10.0.0.1', 'uid-new');
    h.holdings.remove(released);
    // Another replica's claim got the address: its IPAddress is in the cache (its holding not yet).
    h.addresses.upsert(ipAddress('10.0.0.1', OTHER_REPLICA_CLAIM));
    h.states.settleAssumed(state, unit);
    expect(state.isAssumed(unit.entryKey)).toBe(false);
    expect(counts(state)).toEqual({ total: 1, used: 1, free: 0 });
    expect(h.freed).toEqual([]);
    expect(choose(state)).toBe('exhausted');
  });
});

describe('pool state: rebuilt from the informer stores (rebuildFromCaches)', () => {
  it('frees an address whose holding came and went during a watch gap, carries assumptions over, and is rate-limited', () => {
    const h = harness(ipPool({ addresses: ['10.0.0.1-10.0.0.2'] }));
    h.holdings.replace([], nextVersion());
    h.addresses.replace([], nextVersion());
    const state = h.state();
    h.states.addWaiting(REF, WAITER);

    // Claim 1 chooses A and loses the holding race (409) to another replica whose holding this replica's watch never shows.
    const a = chooseAndAssume(state, '10.0.0.1', 'uid-1');
    h.states.settleAssumed(state, a);
    // Claim 2 takes B; its holding create is still in flight.
    const b = chooseAndAssume(state, '10.0.0.2', 'uid-2');
    expect(counts(state)).toEqual({ total: 2, used: 2, free: 0 });
    // The watch was down while the other replica created and deleted A's holding: the relist shows neither, and the
    // informer reports nothing (it never had the holding).
    h.holdings.replace([], nextVersion());
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
    expect(fresh.isAssumed(b.entryKey)).toBe(true);
    expect(fresh.isAssumed(a.entryKey)).toBe(false);
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
    expect(later.isAssumed(again.entryKey)).toBe(true);
    expect(later.isAssumed(b.entryKey)).toBe(true);
    expect(h.freed).toHaveLength(1);

    // B's holding arrives: it speaks for the address from now on, in the state that replaced the rebuilt one.
    h.holdings.upsert(holding('10.0.0.2', { name: 'claim-2', uid: 'uid-2' }));
    expect(later.isAssumed(b.entryKey)).toBe(false);
    expect(counts(later)).toEqual({ total: 2, used: 2, free: 0 });
  });

  it('keeps what the stores hold: held addresses, addresses with an IPAddress, and reservations', () => {
    const h = harness(
      ipPool({
        addresses: ['10.0.0.1-10.0.0.4'],
        reservations: [{ claimName: 'pinned', address: '10.0.0.4' }],
      }),
    );
    h.holdings.replace([holding('10.0.0.1', { name: 'held', uid: 'uid-held' })], nextVersion());
    h.addresses.replace([ipAddress('10.0.0.2', { name: 'addressed', uid: 'uid-addressed' })], nextVersion());
    const state = h.state();
    expect(counts(state)).toEqual({ total: 4, used: 3, free: 1 });
    h.states.addWaiting(REF, WAITER);

    // .3 lost to a holding this replica never sees (409, then created and deleted during a watch gap).
    const lost = chooseAndAssume(state, '10.0.0.3', 'uid-lost');
    h.states.settleAssumed(state, lost);
    h.holdings.replace(h.holdings.store.list(), nextVersion());
    expect(choose(state)).toBe('exhausted');

    const fresh = h.states.rebuildFromCaches(REF, state);
    if (fresh === undefined) throw new Error('the first rebuild must be allowed');
    expect(counts(fresh)).toEqual({ total: 4, used: 3, free: 1 });
    expect(fresh.isReserved(addressEntryKey('10.0.0.4'))).toBe(true);
    expect(h.freed).toEqual([{ poolKey: KEY, waitingClaims: [WAITER] }]);
    // Only .3 comes back: the holding holds .1, the IPAddress holds .2, the reservation holds .4 for its claim.
    chooseAndAssume(fresh, '10.0.0.3', 'uid-next');
    expect(choose(fresh)).toBe('exhausted');
  });
});
