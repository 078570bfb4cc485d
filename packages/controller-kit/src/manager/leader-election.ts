import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Client } from '../client/client.js';
import { isAlreadyExists, isConflict, isNotFound } from '../client/errors.js';
import { linkedTimeoutSignal } from '../client/linked-signal.js';
import { abortableDelay } from './delay.js';
import { decideLease, LEASE_RESOURCE, type Lease, type LeaseSpec, leaseSpecOf, recordFingerprint } from './lease.js';

export interface LeaderElectionTimings {
  /** How long followers wait, from their last observed change of the Lease, before taking it over (client-go 15 s). */
  readonly leaseDurationMs: number;
  /** How long the leader keeps trying to renew before it gives up leading (client-go 10 s). */
  readonly renewDeadlineMs: number;
  /** Time between attempts to acquire or renew (client-go 2 s). */
  readonly retryPeriodMs: number;
}

export const DEFAULT_LEADER_ELECTION_TIMINGS: LeaderElectionTimings = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

export interface LeaderElectorConfig extends Partial<LeaderElectionTimings> {
  readonly client: Client;
  readonly namespace: string;
  /** Name of the Lease (`--leader-election-id`). */
  readonly name: string;
  /** This candidate's identity; unique per process (hostname + random suffix). */
  readonly identity: string;
  readonly logger: Logger;
  /** Give the Lease up on a clean stop so a successor takes over at once (controller-runtime's ReleaseOnCancel). */
  readonly releaseOnCancel?: boolean;
}

export interface LeaderCallbacks {
  /** Called once the Lease is acquired; `leaderSignal` aborts the moment leadership is lost. */
  onStartedLeading(leaderSignal: AbortSignal): void;
  /** Called whenever the observed holder changes (including to this candidate). */
  onNewLeader?(identity: string): void;
}

/** How a run of the elector ended. */
export type LeaderElectionOutcome = 'stopped' | 'released' | 'lost';

/** The reason a leader's signal is aborted with when it loses the Lease. */
export class LeaderElectionLostError extends Error {
  override readonly name = 'LeaderElectionLostError';
}

/** Rejects timings that would let two leaders overlap (client-go's NewLeaderElector validation). */
export function validateLeaderElectionTimings(timings: LeaderElectionTimings): void {
  const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = timings;
  if (!(leaseDurationMs > renewDeadlineMs)) {
    throw new Error(
      `leader election: lease duration (${leaseDurationMs} ms) must be greater than renew deadline (${renewDeadlineMs} ms)`,
    );
  }
  if (!(renewDeadlineMs > JITTER_FACTOR * retryPeriodMs)) {
    throw new Error(
      `leader election: renew deadline (${renewDeadlineMs} ms) must be greater than ${JITTER_FACTOR} × retry period (${retryPeriodMs} ms)`,
    );
  }
  if (!(retryPeriodMs > 0) || leaseDurationMs < 1000) {
    throw new Error('leader election: retry period must be positive and lease duration at least 1000 ms');
  }
}

const JITTER_FACTOR = 1.2;

type AttemptResult = { readonly acquired: true } | { readonly acquired: false; readonly holder: string };

/**
 * Lease-based leader election with client-go's algorithm: create the Lease, or take it over once its holder has not
 * renewed for a lease duration (measured from this process's own observation, so clocks need not agree), with a
 * resourceVersion precondition so only one candidate wins a race (the loser gets 409).
 *
 * Fencing: a leader that has not renewed successfully within the renew deadline — or sees another holder in the
 * Lease — aborts its leader signal at once, without waiting for a request in flight. The renew deadline is shorter
 * than the lease duration, so the old leader stops before any follower can consider the Lease expired.
 */
export class LeaderElector {
  readonly identity: string;
  readonly #config: LeaderElectorConfig;
  readonly #timings: LeaderElectionTimings;
  #observedFingerprint = '';
  #observedAt = 0;
  #observedHolder = '';
  #leading = false;

  constructor(config: LeaderElectorConfig) {
    this.#config = config;
    this.identity = config.identity;
    this.#timings = {
      leaseDurationMs: config.leaseDurationMs ?? DEFAULT_LEADER_ELECTION_TIMINGS.leaseDurationMs,
      renewDeadlineMs: config.renewDeadlineMs ?? DEFAULT_LEADER_ELECTION_TIMINGS.renewDeadlineMs,
      retryPeriodMs: config.retryPeriodMs ?? DEFAULT_LEADER_ELECTION_TIMINGS.retryPeriodMs,
    };
    validateLeaderElectionTimings(this.#timings);
  }

  get timings(): LeaderElectionTimings {
    return this.#timings;
  }

  isLeader(): boolean {
    return this.#leading;
  }

  /**
   * Campaigns until `signal` aborts or leadership is lost. While leading it renews every retry period. When `signal`
   * aborts while leading, it releases the Lease (if `releaseOnCancel`, the default) and resolves `released`.
   */
  async run(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<LeaderElectionOutcome> {
    const acquired = await this.#acquire(signal, callbacks);
    if (!acquired) return 'stopped';
    const leader = new AbortController();
    this.#leading = true;
    this.#log().info({ lease: this.#leaseName() }, 'acquired lease, leading');
    callbacks.onStartedLeading(leader.signal);
    const outcome = await this.#renew(signal, leader, callbacks);
    this.#leading = false;
    if (outcome === 'lost') return 'lost';
    if (this.#config.releaseOnCancel ?? true) {
      await this.#release();
      return 'released';
    }
    return 'stopped';
  }

  async #acquire(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<boolean> {
    this.#log().info({ lease: this.#leaseName() }, 'attempting to acquire leader lease');
    while (!signal.aborted) {
      const result = await this.#attempt(signal, this.#timings.retryPeriodMs * 2);
      if (result?.acquired) return true;
      if (result && !result.acquired) this.#noticeHolder(result.holder, callbacks);
      // client-go's JitterUntil: wait between retryPeriod and retryPeriod × (1 + jitter factor).
      const wait = this.#timings.retryPeriodMs * (1 + Math.random() * JITTER_FACTOR);
      await abortableDelay(wait, signal);
    }
    return false;
  }

  async #renew(
    signal: AbortSignal,
    leader: AbortController,
    callbacks: LeaderCallbacks,
  ): Promise<LeaderElectionOutcome> {
    let renewedAt = performance.now();
    const lose = (why: string): void => {
      if (leader.signal.aborted) return;
      this.#log().error({ lease: this.#leaseName(), reason: why }, 'lost leadership: stopping leader work');
      leader.abort(new LeaderElectionLostError(`leader election lost for lease ${this.#leaseName()}: ${why}`));
    };
    // The watchdog fires even while a renew request hangs: fencing must not depend on the network answering.
    let watchdog = setTimeout(
      () => lose(`no successful renewal within ${this.#timings.renewDeadlineMs} ms`),
      this.#timings.renewDeadlineMs,
    );
    // One combined signal for the whole loop: AbortSignal.any per iteration would pile listeners onto `signal`.
    const stopRenewing = new AbortController();
    const stopOnAbort = (): void => stopRenewing.abort();
    signal.addEventListener('abort', stopOnAbort, { once: true });
    leader.signal.addEventListener('abort', stopOnAbort, { once: true });
    if (signal.aborted || leader.signal.aborted) stopRenewing.abort();
    try {
      while (!signal.aborted && !leader.signal.aborted) {
        await abortableDelay(this.#timings.retryPeriodMs, stopRenewing.signal);
        if (signal.aborted || leader.signal.aborted) break;
        const attemptStartedAt = performance.now();
        const remaining = renewedAt + this.#timings.renewDeadlineMs - attemptStartedAt;
        const result = await this.#attempt(stopRenewing.signal, Math.max(remaining, 1));
        if (leader.signal.aborted) break;
        if (result?.acquired) {
          // Count from when the request was sent: the server stamped renewTime no earlier than that.
          renewedAt = attemptStartedAt;
          clearTimeout(watchdog);
          watchdog = setTimeout(
            () => lose(`no successful renewal within ${this.#timings.renewDeadlineMs} ms`),
            Math.max(renewedAt + this.#timings.renewDeadlineMs - performance.now(), 0),
          );
        } else if (result && !result.acquired) {
          this.#noticeHolder(result.holder, callbacks);
          lose(`the lease is held by "${result.holder}"`);
        }
      }
    } finally {
      clearTimeout(watchdog);
      signal.removeEventListener('abort', stopOnAbort);
      leader.signal.removeEventListener('abort', stopOnAbort);
    }
    return leader.signal.aborted ? 'lost' : 'released';
  }

  /** One acquire-or-renew attempt; undefined when it failed without learning who holds the Lease. */
  async #attempt(signal: AbortSignal, timeoutMs: number): Promise<AttemptResult | undefined> {
    const { client, namespace, name } = this.#config;
    const linked = linkedTimeoutSignal(signal, timeoutMs);
    const requestSignal = linked.signal;
    const now = new Date();
    const leaseDurationSeconds = Math.ceil(this.#timings.leaseDurationMs / 1000);
    try {
      let lease: Lease;
      try {
        lease = await client.get(LEASE_RESOURCE, { namespace, name }, { signal: requestSignal });
      } catch (error) {
        if (!isNotFound(error)) throw error;
        await client.create(
          LEASE_RESOURCE,
          {
            metadata: { namespace, name },
            spec: leaseSpecOf({
              holderIdentity: this.identity,
              leaseDurationSeconds,
              acquireTime: now,
              renewTime: now,
              leaseTransitions: 0,
            }),
          },
          { signal: requestSignal },
        );
        this.#observe(undefined, performance.now());
        return { acquired: true };
      }
      const spec = lease.spec;
      this.#observe(spec, performance.now());
      const decision = decideLease(spec, {
        identity: this.identity,
        now,
        leaseDurationSeconds,
        observedExpired: this.#observedExpired(spec),
      });
      if (decision.kind === 'wait') return { acquired: false, holder: decision.holder };
      await client.update(LEASE_RESOURCE, { ...lease, spec: leaseSpecOf(decision.record) }, { signal: requestSignal });
      return { acquired: true };
    } catch (error) {
      if (isConflict(error) || isAlreadyExists(error)) {
        this.#log().debug({ lease: this.#leaseName() }, 'another candidate updated the lease first');
      } else if (!signal.aborted) {
        this.#log().warn({ err: error, lease: this.#leaseName() }, 'failed to acquire or renew lease');
      }
      return undefined;
    } finally {
      linked.dispose();
    }
  }

  #observe(spec: LeaseSpec | undefined, at: number): void {
    const fingerprint = recordFingerprint(spec);
    if (fingerprint !== this.#observedFingerprint) {
      this.#observedFingerprint = fingerprint;
      this.#observedAt = at;
    }
  }

  /** Expired when the record has not changed for its lease duration, by this process's clock. */
  #observedExpired(spec: LeaseSpec | undefined): boolean {
    const durationMs = (spec?.leaseDurationSeconds ?? Math.ceil(this.#timings.leaseDurationMs / 1000)) * 1000;
    return this.#observedAt + durationMs < performance.now();
  }

  #noticeHolder(holder: string, callbacks: LeaderCallbacks): void {
    if (holder === this.#observedHolder) return;
    this.#observedHolder = holder;
    this.#log().info({ lease: this.#leaseName(), leader: holder }, 'new leader observed');
    callbacks.onNewLeader?.(holder);
  }

  /** Clears the holder so a successor does not wait for the lease to expire (client-go's release). */
  async #release(): Promise<void> {
    const { client, namespace, name } = this.#config;
    const signal = AbortSignal.timeout(Math.ceil(this.#timings.renewDeadlineMs));
    try {
      const lease = await client.get(LEASE_RESOURCE, { namespace, name }, { signal });
      if (lease.spec?.holderIdentity !== this.identity) return;
      const now = new Date();
      await client.update(
        LEASE_RESOURCE,
        {
          ...lease,
          spec: {
            ...leaseSpecOf({
              holderIdentity: '',
              leaseDurationSeconds: 1,
              acquireTime: now,
              renewTime: now,
              leaseTransitions: lease.spec?.leaseTransitions ?? 0,
            }),
            holderIdentity: null,
          },
        },
        { signal },
      );
      this.#log().info({ lease: this.#leaseName() }, 'released leader lease');
    } catch (error) {
      // Only slows the next leader down by one lease duration; nothing to act on.
      this.#log().warn({ err: error, lease: this.#leaseName() }, 'failed to release leader lease');
    }
  }

  #leaseName(): string {
    return `${this.#config.namespace}/${this.#config.name}`;
  }

  #log(): Logger {
    return this.#config.logger;
  }
}
