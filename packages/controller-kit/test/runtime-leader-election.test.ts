import { performance } from 'node:perf_hooks';
import type { KubeConfig } from '@kubernetes/client-node';
import { createTestNamespace, type TestNamespace } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../src/client/client.js';
import { microTime } from '../src/client/events.js';
import { Controller } from '../src/controller/controller.js';
import { reconcilerFunc } from '../src/controller/reconciler.js';
import { LeaderElectionLostError, type LeaderElectionTimings } from '../src/manager/leader-election.js';
import { LEASE_RESOURCE } from '../src/manager/lease.js';
import { Manager } from '../src/manager/manager.js';
import { BlackholeProxy } from './fixtures/runtime-blackhole-proxy.js';
import { installCRDsReliably, THINGS, waitFor } from './fixtures/runtime-support.js';

const FAST: LeaderElectionTimings = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 };

let namespace: TestNamespace;
let admin: Client;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const { kubeConfig } = testEnv();
  await installCRDsReliably(kubeConfig);
  namespace = await createTestNamespace(kubeConfig, 'runtime-leader');
  admin = new Client(kubeConfig, { fieldManager: 'runtime-test-admin' });
  await admin.create(THINGS, { metadata: { name: 'work', namespace: namespace.name }, spec: { size: 1 } });
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  admin?.close();
  await namespace?.delete();
});

interface Candidate {
  readonly name: string;
  readonly manager: Manager;
  /** performance.now() of every reconcile start. */
  readonly reconciles: number[];
  /** performance.now() when the controller's signal aborted, if it did. */
  abortedAt: number | undefined;
  /** performance.now() when this candidate started leading. */
  electedAt: number | undefined;
  readonly stop: AbortController;
  /** How `start` ended: undefined for a clean stop, else the error. */
  readonly outcome: Promise<unknown>;
}

/** A manager with one controller that reconciles the namespace's Thing over and over while it leads. */
function startCandidate(
  name: string,
  kubeConfig: KubeConfig,
  lease: string,
  timings: LeaderElectionTimings = FAST,
): Candidate {
  const manager = new Manager({
    kubeConfig,
    name: `runtime-test-${name}`,
    logger: pino({ level: 'silent' }),
    leaderElection: { namespace: namespace.name, id: lease, identity: name, ...timings },
    gracefulShutdownTimeoutMs: 10_000,
  });
  const stop = new AbortController();
  let watchingSignal = false;
  const candidate: Candidate = {
    name,
    manager,
    reconciles: [],
    abortedAt: undefined,
    electedAt: undefined,
    stop,
    outcome: Promise.resolve(),
  };
  const controller = new Controller({
    name: `things-${name}`,
    for: THINGS,
    forOptions: { namespace: namespace.name },
    cache: manager.cache,
    registry: manager.registry,
    logger: manager.logger,
    reconciler: reconcilerFunc(async (_request, context) => {
      candidate.reconciles.push(performance.now());
      if (!watchingSignal) {
        watchingSignal = true;
        context.signal.addEventListener('abort', () => {
          candidate.abortedAt ??= performance.now();
        });
      }
      return { requeueAfterMs: 50 };
    }),
  });
  manager.add(controller);
  void manager.elected.then(() => {
    candidate.electedAt = performance.now();
  });
  const outcome = manager.start(stop.signal).then(
    () => undefined,
    (error: unknown) => error,
  );
  Object.assign(candidate, { outcome });
  cleanups.push(async () => {
    stop.abort();
    await outcome;
  });
  return candidate;
}

async function holderOf(lease: string): Promise<string | undefined> {
  const current = await admin.get(LEASE_RESOURCE, { namespace: namespace.name, name: lease });
  return current.spec?.holderIdentity ?? undefined;
}

async function leaderStatus(manager: Manager, lease: string): Promise<number | undefined> {
  const metric = await manager.registry.getSingleMetric('leader_election_master_status')?.get();
  return metric?.values.find((value) => value.labels.name === lease)?.value;
}

describe('leader election', () => {
  it('elects exactly one of two candidates, and only the leader reconciles', async () => {
    const lease = 'one-leader';
    const a = startCandidate('candidate-a', testEnv().kubeConfig, lease);
    const b = startCandidate('candidate-b', testEnv().kubeConfig, lease);
    const leader = await waitFor('a leader', () => [a, b].find((candidate) => candidate.reconciles.length > 0));
    const follower = leader === a ? b : a;
    expect(await holderOf(lease)).toBe(leader.name);
    expect(leader.manager.isLeader()).toBe(true);
    expect(follower.manager.isLeader()).toBe(false);
    expect(follower.reconciles).toHaveLength(0);
    expect(await leaderStatus(leader.manager, lease)).toBe(1);
    expect(await leaderStatus(follower.manager, lease)).toBe(0);
  });

  it('releases the Lease on a clean stop so the follower takes over before the lease duration', async () => {
    const lease = 'clean-handover';
    // A lease that outlives the test by far: b can only lead in this test because a released it, never because it
    // waited out a's lease, however slow the machine (an 8 s lease and "took over in under 8 s" failed on load alone).
    const timings = { leaseDurationMs: 3_600_000, renewDeadlineMs: 5_000, retryPeriodMs: 400 };
    const a = startCandidate('handover-a', testEnv().kubeConfig, lease, timings);
    await waitFor('a to lead', () => (a.reconciles.length > 0 ? true : undefined));
    const b = startCandidate('handover-b', testEnv().kubeConfig, lease, timings);
    await waitFor('b to observe the lease', () => (b.manager.cache.hasSynced() ? true : undefined));
    const before = await admin.get(LEASE_RESOURCE, { namespace: namespace.name, name: lease });

    const stoppedAt = performance.now();
    a.stop.abort();
    expect(await a.outcome).toBeUndefined();
    // Within the test's own timeout, far inside the lease duration: leading at all proves the takeover by release.
    await waitFor('b to lead', () => b.electedAt);
    const takeoverMs = (b.electedAt ?? 0) - stoppedAt;
    console.info(
      `[runtime] handover after release: ${Math.round(takeoverMs)} ms (lease duration ${timings.leaseDurationMs} ms)`,
    );
    expect(a.reconciles.every((at) => at <= (b.electedAt ?? 0))).toBe(true);
    const after = await admin.get(LEASE_RESOURCE, { namespace: namespace.name, name: lease });
    expect(after.spec?.holderIdentity).toBe('handover-b');
    expect(after.spec?.leaseTransitions).toBe((before.spec?.leaseTransitions ?? 0) + 1);
  });

  it('fences itself at once when another writer takes the Lease: the controller stops and start rejects', async () => {
    const lease = 'stolen';
    const a = startCandidate('victim', testEnv().kubeConfig, lease);
    await waitFor('the victim to lead', () => (a.reconciles.length > 0 ? true : undefined));

    const current = await admin.get(LEASE_RESOURCE, { namespace: namespace.name, name: lease });
    const now = new Date();
    await admin.update(LEASE_RESOURCE, {
      ...current,
      spec: { ...current.spec, holderIdentity: 'thief', renewTime: microTime(now), acquireTime: microTime(now) },
    });

    const outcome = await a.outcome;
    expect(outcome).toBeInstanceOf(LeaderElectionLostError);
    expect((outcome as Error).message).toContain('the lease is held by "thief"');
    expect(a.abortedAt).toBeDefined();
    expect(a.reconciles.length).toBeGreaterThan(0);
    expect(a.reconciles.every((at) => at < (a.abortedAt ?? 0))).toBe(true);
    // The fenced leader neither kept renewing nor "released" a Lease it no longer holds.
    expect(await holderOf(lease)).toBe('thief');
    expect(await leaderStatus(a.manager, lease)).toBe(0);
  });

  it('a leader cut off from the API server stops reconciling before a follower can take over', async () => {
    const lease = 'partitioned';
    const proxy = await BlackholeProxy.start(testEnv().server);
    cleanups.push(() => proxy.close());
    const a = startCandidate('partitioned-a', proxy.kubeConfigThrough(testEnv().kubeConfig), lease);
    await waitFor('a to lead', () => (a.reconciles.length > 0 ? true : undefined));
    const b = startCandidate('partitioned-b', testEnv().kubeConfig, lease);
    await waitFor('b to start campaigning', () => (b.manager.cache.hasSynced() ? true : undefined));

    const cutAt = performance.now();
    proxy.blackhole();
    const outcome = await a.outcome;
    expect(outcome).toBeInstanceOf(LeaderElectionLostError);
    expect((outcome as Error).message).toContain(`no successful renewal within ${FAST.renewDeadlineMs} ms`);
    await waitFor('b to lead', () => b.electedAt);
    await waitFor('b to reconcile', () => (b.reconciles.length > 0 ? true : undefined));

    const abortedAt = a.abortedAt ?? Number.POSITIVE_INFINITY;
    console.info(
      `[runtime] partition: old leader stopped ${Math.round(abortedAt - cutAt)} ms after the cut, ` +
        `new leader elected ${Math.round((b.electedAt ?? 0) - cutAt)} ms after the cut`,
    );
    // The safety property: the old leader's work ended before the new leader's began — no overlap.
    expect(abortedAt).toBeLessThan(b.electedAt ?? 0);
    expect(a.reconciles.every((at) => at < abortedAt)).toBe(true);
    expect(Math.min(...b.reconciles)).toBeGreaterThan(abortedAt);
    expect(await holderOf(lease)).toBe('partitioned-b');
  });
});
