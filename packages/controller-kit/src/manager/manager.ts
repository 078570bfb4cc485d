import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { Cache } from '../cache/cache.js';
import { Client } from '../client/client.js';
import { EventRecorder } from '../client/events.js';
import { type RequestRateLimit, setRequestRateLimit } from '../client/request-rate-limit.js';
import { APIServerMonitor, CacheSyncTimeoutError, formatGoDuration } from './api-server-monitor.js';
import { parseBindAddress } from './bind-address.js';
import { settlesWithin } from './delay.js';
import { type DiagnosticsAuthOptions, startDiagnosticsServer } from './diagnostics.js';
import { LeaderElectionLostError, type LeaderElectionTimings, LeaderElector } from './leader-election.js';
import { createLogger } from './logger.js';
import { type Checker, type NamedChecker, type RunningServer, startMetricsServer, startProbeServer } from './probes.js';
import { hasShutdownDelay, isSyncingRunnable, type Runnable } from './runnable.js';
import type { TLSOptions } from './tls-options.js';

/** `/metrics` over HTTPS with TokenReview/SubjectAccessReview (`--diagnostics-address`). */
export interface SecureDiagnosticsOptions {
  /** `host:port`; `0` disables. */
  readonly address: string;
  readonly tls?: TLSOptions;
  /** `tls.crt`/`tls.key`; absent: self-signed at start. */
  readonly certDir?: string | undefined;
  readonly auth?: DiagnosticsAuthOptions;
}

export interface LeaderElectionOptions extends Partial<LeaderElectionTimings> {
  /** Namespace of the Lease. */
  readonly namespace: string;
  /** Name of the Lease (`--leader-election-id`). */
  readonly id: string;
  /** Defaults to `<hostname>_<random>`. */
  readonly identity?: string;
  /** Release the Lease on a clean stop (default true). */
  readonly releaseOnCancel?: boolean;
}

export interface ManagerOptions {
  readonly kubeConfig: KubeConfig;
  /** The manager's name: the field manager of its client and the events' reporting controller prefix. */
  readonly name: string;
  readonly logger?: Logger;
  /** The shared cache; one is made from the kubeconfig when absent. Either way it is run by the manager. */
  readonly cache?: Cache | undefined;
  /** Registry for all metrics; a new one (with Node process metrics) by default. */
  readonly registry?: Registry;
  /** Leader election; absent means every runnable starts at once (single replica, tests). */
  readonly leaderElection?: LeaderElectionOptions | undefined;
  /** `host:port` for `/metrics` over plain HTTP without authentication (`--insecure-diagnostics`); `0` disables. */
  readonly metricsBindAddress?: string;
  /** `/metrics` over HTTPS with authentication and authorization, as CAPI providers serve it. */
  readonly diagnostics?: SecureDiagnosticsOptions | undefined;
  /** The informers' resync period (`--sync-period`); the cache's default (10 h) when absent. */
  readonly syncPeriodMs?: number;
  /** The caches must sync within this or `start` fails (`--cache-sync-timeout`; default 2 min). */
  readonly cacheSyncTimeoutMs?: number;
  /**
   * `start` fails when the API server stays unreachable this long (`--api-server-unreachable-timeout`; default
   * 2 min; 0 disables). `/readyz` fails from the first failed probe, `/healthz` once past the bound.
   */
  readonly apiServerUnreachableTimeoutMs?: number;
  /** Time between two reachability probes (default 5 s). */
  readonly apiServerProbeIntervalMs?: number;
  /** Client-side rate limit of every request made with `kubeConfig` (`--kube-api-qps` / `--kube-api-burst`). */
  readonly kubeAPIRateLimit?: RequestRateLimit | undefined;
  /** `host:port` for `/healthz` and `/readyz`; `0` disables (default). */
  readonly healthProbeBindAddress?: string;
  /** How long a stop waits for runnables to drain before giving up (default `DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS`). */
  readonly gracefulShutdownTimeoutMs?: number;
}

/** controller-runtime's `GracefulShutdownTimeout`. */
export const DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS = 30_000;

/** Thrown by `start` when runnables did not finish within the graceful shutdown timeout. */
export class ShutdownTimeoutError extends Error {
  override readonly name = 'ShutdownTimeoutError';
}

type Phase = 'new' | 'running' | 'stopped';

/**
 * Runs caches, servers and controllers for one process (controller-runtime's Manager). On `start`: the probe and
 * metrics servers and every non-leader runnable (caches) start at once; after the caches have synced, leader-only
 * runnables (controllers) start — with leader election, only once this process holds the Lease, with a signal that
 * aborts the moment the Lease is lost. Stopping (the signal) fails `/readyz` at once and stops controllers first and
 * waits for them to drain, then releases the Lease, then stops caches and servers. A runnable with a shutdown delay
 * (the webhook server) is told of the stop at once and serves through its delay meanwhile; the caches its handlers
 * read stop only after it has finished.
 *
 * Losing the Lease makes `start` reject with `LeaderElectionLostError`: the process should exit non-zero and be
 * restarted as a follower, as controller-runtime does, rather than try to re-join with state built while leading.
 */
export class Manager {
  readonly kubeConfig: KubeConfig;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly client: Client;
  /** The shared informer cache: controllers built on it read from memory; it runs on every replica. */
  readonly cache: Cache;
  readonly identity: string;
  readonly #options: ManagerOptions;
  readonly #runnables: Runnable[] = [];
  readonly #healthChecks: NamedChecker[] = [{ name: 'ping', check: () => undefined }];
  readonly #readyChecks: NamedChecker[] = [];
  readonly #leaderStatus: Gauge<'name'>;
  #phase: Phase = 'new';
  #servers: { metrics?: RunningServer; diagnostics?: RunningServer; probes?: RunningServer } = {};
  readonly #apiServerMonitor: APIServerMonitor | undefined;
  #elected: { promise: Promise<void>; resolve: () => void };
  #leaderElector: LeaderElector | undefined;
  #stopRequested = false;

  constructor(options: ManagerOptions) {
    this.#options = options;
    this.kubeConfig = options.kubeConfig;
    this.logger = options.logger ?? createLogger({ name: options.name });
    this.registry = options.registry ?? defaultRegistry();
    if (options.kubeAPIRateLimit) setRequestRateLimit(options.kubeConfig, options.kubeAPIRateLimit);
    this.client = new Client(options.kubeConfig, { fieldManager: options.name });
    this.cache =
      options.cache ??
      new Cache({
        kubeConfig: options.kubeConfig,
        logger: this.logger.child({ component: 'cache' }),
        ...(options.syncPeriodMs === undefined ? {} : { resyncPeriodMs: options.syncPeriodMs }),
        ...(options.cacheSyncTimeoutMs === undefined ? {} : { syncTimeoutMs: options.cacheSyncTimeoutMs }),
      });
    this.#runnables.push(this.cache);
    const unreachableTimeoutMs = options.apiServerUnreachableTimeoutMs ?? 120_000;
    if (unreachableTimeoutMs > 0) {
      this.#apiServerMonitor = new APIServerMonitor({
        kubeConfig: options.kubeConfig,
        logger: this.logger.child({ component: 'api-server-monitor' }),
        unreachableTimeoutMs,
        ...(options.apiServerProbeIntervalMs === undefined ? {} : { intervalMs: options.apiServerProbeIntervalMs }),
      });
      this.#healthChecks.push({ name: 'api-server', check: this.#apiServerMonitor.healthCheck });
      this.#readyChecks.push({ name: 'api-server', check: this.#apiServerMonitor.readyCheck });
    }
    this.identity = options.leaderElection?.identity ?? `${hostname()}_${randomBytes(6).toString('hex')}`;
    this.#leaderStatus = leaderStatusGauge(this.registry);
    let resolveElected = (): void => undefined;
    const promise = new Promise<void>((resolve) => {
      resolveElected = resolve;
    });
    this.#elected = { promise, resolve: resolveElected };
  }

  /** Adds a runnable; all runnables must be added before `start`. */
  add(runnable: Runnable): void {
    if (this.#phase !== 'new') throw new Error('Manager.add: runnables must be added before start');
    const deadline = this.#gracefulShutdownTimeoutMs();
    if (hasShutdownDelay(runnable) && runnable.shutdownDelayMs >= deadline) {
      throw new Error(
        `Manager.add: a shutdown delay of ${runnable.shutdownDelayMs} ms leaves nothing of the graceful shutdown ` +
          `timeout of ${deadline} ms to drain in-flight work`,
      );
    }
    this.#runnables.push(runnable);
  }

  /**
   * An event recorder for one controller (controller-runtime's `GetEventRecorderFor`): events report
   * `<manager name>/<controller>` as their controller and this process's identity as the instance.
   */
  getEventRecorderFor(controller: string): EventRecorder {
    return new EventRecorder({
      client: this.client,
      reportingController: `${this.#options.name}/${controller}`,
      reportingInstance: this.identity,
      logger: this.logger.child({ controller }),
    });
  }

  addHealthzCheck(name: string, check: Checker): void {
    this.#healthChecks.push({ name, check });
  }

  addReadyzCheck(name: string, check: Checker): void {
    this.#readyChecks.push({ name, check });
  }

  /** Resolves once this process leads (at once without leader election). */
  get elected(): Promise<void> {
    return this.#elected.promise;
  }

  isLeader(): boolean {
    return this.#leaderElector ? this.#leaderElector.isLeader() : this.#phase === 'running';
  }

  /** The bound metrics port once started (useful with port 0); undefined when disabled. */
  get metricsPort(): number | undefined {
    return this.#servers.metrics?.address.port;
  }

  /** The bound HTTPS diagnostics port once started; undefined when disabled. */
  get diagnosticsPort(): number | undefined {
    return this.#servers.diagnostics?.address.port;
  }

  /** The bound health probe port once started; undefined when disabled. */
  get healthProbePort(): number | undefined {
    return this.#servers.probes?.address.port;
  }

  /**
   * Runs everything until `signal` aborts (resolves after a graceful stop) or something fails: a runnable rejects,
   * the Lease is lost (`LeaderElectionLostError`) or the drain times out (`ShutdownTimeoutError`).
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#phase !== 'new') throw new Error('Manager.start: a manager can be started only once');
    this.#phase = 'running';
    this.logger.info(
      { identity: this.identity, leaderElection: this.#options.leaderElection?.id ?? false },
      'starting manager',
    );
    const failure = new AbortController();
    let firstError: unknown;
    const fail = (error: unknown): void => {
      if (failure.signal.aborted) return;
      firstError = error;
      failure.abort(error);
    };
    const stop = AbortSignal.any([signal, failure.signal]);
    const background = new AbortController();
    const leaderWork = new AbortController();
    const electionStop = new AbortController();
    const serving = new AbortController();
    const runningBackground: Promise<void>[] = [];
    const runningServing: Promise<void>[] = [];
    const runningLeaders: Promise<void>[] = [];
    let election: Promise<unknown> = Promise.resolve();

    const run = (runnable: Runnable, runnableSignal: AbortSignal, into: Promise<void>[]): void => {
      into.push(
        runnable.start(runnableSignal).catch((error: unknown) => {
          if (!runnableSignal.aborted) {
            this.logger.error({ err: error }, 'runnable failed, stopping the manager');
            fail(error);
          }
        }),
      );
    };

    try {
      await this.#startServers();
      const monitor = this.#apiServerMonitor;
      if (monitor) {
        runningBackground.push(
          monitor.run(background.signal).catch((error: unknown) => {
            this.logger.error({ err: error }, 'the API server stayed unreachable, stopping the manager');
            fail(error);
          }),
        );
      }
      for (const runnable of this.#runnables.filter((r) => !r.needLeaderElection)) {
        if (hasShutdownDelay(runnable)) run(runnable, serving.signal, runningServing);
        else run(runnable, background.signal, runningBackground);
      }
      const synced = await this.#waitForCaches(stop);
      if (synced && !stop.aborted) {
        const startLeaders = (leaderSignal: AbortSignal): void => {
          leaderSignal.addEventListener('abort', () => {
            leaderWork.abort(leaderSignal.reason);
            this.#setLeaderStatus(0);
            if (leaderSignal.reason instanceof LeaderElectionLostError) fail(leaderSignal.reason);
          });
          this.#setLeaderStatus(1);
          this.#elected.resolve();
          for (const runnable of this.#runnables.filter((r) => r.needLeaderElection)) {
            run(runnable, leaderWork.signal, runningLeaders);
          }
        };
        const electionOptions = this.#options.leaderElection;
        if (electionOptions) {
          this.#setLeaderStatus(0);
          this.#leaderElector = new LeaderElector({
            ...electionOptions,
            client: this.client,
            name: electionOptions.id,
            identity: this.identity,
            logger: this.logger.child({ component: 'leader-election' }),
          });
          election = this.#leaderElector
            .run(electionStop.signal, { onStartedLeading: startLeaders })
            .catch((error: unknown) => fail(error));
        } else {
          startLeaders(new AbortController().signal);
        }
      }
      await new Promise<void>((resolve) => {
        if (stop.aborted) resolve();
        else stop.addEventListener('abort', () => resolve(), { once: true });
      });
    } catch (error) {
      fail(error);
    }

    // Shutdown: not ready at once, and servers with a shutdown delay start it; controllers first (fenced already if
    // the Lease was lost), then the Lease, then (once the delayed servers are done) caches and servers.
    this.#stopRequested = true;
    this.logger.info({ reason: failure.signal.aborted ? 'failure' : 'signal' }, 'stopping manager');
    const deadline = this.#gracefulShutdownTimeoutMs();
    const startedAt = Date.now();
    const remaining = (): number => Math.max(deadline - (Date.now() - startedAt), 1_000);
    serving.abort();
    leaderWork.abort(failure.signal.aborted ? failure.signal.reason : new Error('manager stopping'));
    const leadersDrained = await settlesWithin(Promise.all(runningLeaders), deadline);
    electionStop.abort();
    await settlesWithin(election, remaining());
    this.#setLeaderStatus(0);
    const servingDrained = await settlesWithin(Promise.all(runningServing), remaining());
    background.abort();
    const backgroundDrained = await settlesWithin(Promise.all(runningBackground), remaining());
    await this.#stopServers();
    this.client.close();
    this.#phase = 'stopped';
    if (firstError !== undefined) throw firstError;
    if (!leadersDrained || !servingDrained || !backgroundDrained) {
      throw new ShutdownTimeoutError(`runnables did not stop within the graceful shutdown timeout of ${deadline} ms`);
    }
    this.logger.info('manager stopped');
  }

  #gracefulShutdownTimeoutMs(): number {
    return this.#options.gracefulShutdownTimeoutMs ?? DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS;
  }

  /** `leader_election_master_status{name=<lease>}`: 1 while leading; absent without leader election. */
  #setLeaderStatus(value: 0 | 1): void {
    const lease = this.#options.leaderElection?.id;
    if (lease) this.#leaderStatus.set({ name: lease }, value);
  }

  /** Waits for every cache, failing with `CacheSyncTimeoutError` past `cacheSyncTimeoutMs` (as controller-runtime). */
  async #waitForCaches(signal: AbortSignal): Promise<boolean> {
    const timeoutMs = this.#options.cacheSyncTimeoutMs ?? 120_000;
    const timedOut = new AbortController();
    const timer = setTimeout(() => timedOut.abort(), timeoutMs);
    const waiting = AbortSignal.any([signal, timedOut.signal]);
    try {
      for (const runnable of this.#runnables) {
        if (isSyncingRunnable(runnable) && !(await runnable.waitForCacheSync(waiting))) {
          if (timedOut.signal.aborted && !signal.aborted) {
            throw new CacheSyncTimeoutError(
              `the caches did not sync within --cache-sync-timeout=${formatGoDuration(timeoutMs)}: is the API server ` +
                'reachable, and may this identity list and watch every resource the controllers watch?',
            );
          }
          return false;
        }
      }
      return true;
    } finally {
      clearTimeout(timer);
    }
  }

  async #startServers(): Promise<void> {
    const metricsAddress = parseBindAddress(this.#options.metricsBindAddress ?? '0');
    const probeAddress = parseBindAddress(this.#options.healthProbeBindAddress ?? '0');
    const logger = this.logger.child({ component: 'servers' });
    if (metricsAddress) {
      this.#servers.metrics = await startMetricsServer({ address: metricsAddress, registry: this.registry, logger });
    }
    const diagnostics = this.#options.diagnostics;
    const diagnosticsAddress = diagnostics ? parseBindAddress(diagnostics.address) : undefined;
    if (diagnostics && diagnosticsAddress) {
      this.#servers.diagnostics = await startDiagnosticsServer({
        address: diagnosticsAddress,
        registry: this.registry,
        logger,
        insecure: false,
        kubeConfig: this.kubeConfig,
        ...(diagnostics.tls ? { tls: diagnostics.tls } : {}),
        certDir: diagnostics.certDir,
        ...(diagnostics.auth ? { auth: diagnostics.auth } : {}),
      });
    }
    if (probeAddress) {
      this.#servers.probes = await startProbeServer({
        address: probeAddress,
        logger,
        healthz: () => this.#healthChecks,
        readyz: () => [this.#shutdownCheck, ...this.#cacheChecks(), ...this.#readyChecks],
      });
    }
  }

  /** Not ready from the moment a stop is requested (kube-apiserver's `shutdown` check), so the Pod leaves Services. */
  readonly #shutdownCheck: NamedChecker = {
    name: 'shutdown',
    check: () => {
      if (this.#stopRequested) throw new Error('the manager is stopping');
    },
  };

  /** Readiness is "caches synced": followers report ready too, so a rollout does not wait for a Lease. */
  #cacheChecks(): NamedChecker[] {
    return this.#runnables.filter(isSyncingRunnable).map((cache, index) => ({
      name: `cache-sync-${index}`,
      check: () => {
        if (!cache.hasSynced()) throw new Error('cache not synced yet');
      },
    }));
  }

  async #stopServers(): Promise<void> {
    await Promise.all([
      this.#servers.metrics?.close(),
      this.#servers.diagnostics?.close(),
      this.#servers.probes?.close(),
    ]);
  }
}

function defaultRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

function leaderStatusGauge(registry: Registry): Gauge<'name'> {
  const existing = registry.getSingleMetric('leader_election_master_status');
  if (existing instanceof Gauge) return existing as Gauge<'name'>;
  return new Gauge({
    name: 'leader_election_master_status',
    help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.',
    labelNames: ['name'],
    registers: [registry],
  });
}
