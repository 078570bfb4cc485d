import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { KubeApiError } from '../client/errors.js';
import { KubeTransport } from '../client/transport.js';
import { abortableDelay } from './delay.js';

/** Thrown (and the process exits) when the API server stayed unreachable longer than the bound. */
export class APIServerUnreachableError extends Error {
  override readonly name = 'APIServerUnreachableError';
}

/** Thrown when the caches did not sync within the bound (controller-runtime's `CacheSyncTimeout`). */
export class CacheSyncTimeoutError extends Error {
  override readonly name = 'CacheSyncTimeoutError';
}

export interface APIServerMonitorOptions {
  readonly kubeConfig: KubeConfig;
  readonly logger: Logger;
  /** Unreachable for longer than this ends `run` with `APIServerUnreachableError`. */
  readonly unreachableTimeoutMs: number;
  /** Time between two probes (default 5 s, at most a third of the timeout). */
  readonly intervalMs?: number;
}

/** Formats milliseconds as a Go duration (`2m0s`, `3s`, `1.5s`), the way the flags are written. */
export function formatGoDuration(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  const seconds = (ms - minutes * 60_000) / 1000;
  return minutes > 0 ? `${minutes}m${seconds}s` : `${seconds}s`;
}

/**
 * Probes the API server's `/readyz` and ends the process's run when it stays unreachable past a bound. Informers and
 * leader election retry forever by design; without this a process cut off from its API server would look healthy
 * forever and the kubelet would never restart it (a restart also re-resolves the Service and re-reads credentials).
 * An HTTP answer below 500 (even 401/403) counts as reachable: the server is there, the problem is elsewhere.
 */
export class APIServerMonitor {
  readonly #options: APIServerMonitorOptions;
  readonly #transport: KubeTransport;
  readonly #server: string;
  #lastReachableAt = Date.now();
  #lastError: string | undefined;
  #failures = 0;

  constructor(options: APIServerMonitorOptions) {
    this.#options = options;
    this.#transport = new KubeTransport(options.kubeConfig);
    this.#server = this.#transport.server;
  }

  /** Fails while the last probe failed: `/readyz` takes the process out of Service endpoints at once. */
  readonly readyCheck = (): void => {
    if (this.#failures > 0) throw new Error(`the API server ${this.#server} is not reachable: ${this.#lastError}`);
  };

  /** Fails once unreachable longer than the bound: `/healthz` makes the kubelet restart the container. */
  readonly healthCheck = (): void => {
    const down = Date.now() - this.#lastReachableAt;
    if (this.#failures > 0 && down > this.#options.unreachableTimeoutMs) throw new Error(this.#describe(down));
  };

  /** Probes until `signal` aborts (resolves) or the bound is passed (rejects with `APIServerUnreachableError`). */
  async run(signal: AbortSignal): Promise<void> {
    const timeout = this.#options.unreachableTimeoutMs;
    const interval = Math.max(100, Math.min(this.#options.intervalMs ?? 5_000, Math.floor(timeout / 3)));
    this.#lastReachableAt = Date.now();
    try {
      while (!signal.aborted) {
        await this.#probe(signal, interval);
        if (signal.aborted) return;
        const down = Date.now() - this.#lastReachableAt;
        if (this.#failures > 0 && down > timeout) throw new APIServerUnreachableError(this.#describe(down));
        await abortableDelay(interval, signal);
      }
    } finally {
      this.#transport.close();
    }
  }

  #describe(downMs: number): string {
    return (
      `the API server ${this.#server} has been unreachable for ${formatGoDuration(downMs)}, longer than ` +
      `--api-server-unreachable-timeout=${formatGoDuration(this.#options.unreachableTimeoutMs)} ` +
      `(${this.#failures} failed probes; last: ${this.#lastError})`
    );
  }

  async #probe(signal: AbortSignal, timeoutMs: number): Promise<void> {
    try {
      await this.#transport.request({
        method: 'GET',
        path: '/readyz',
        signal,
        timeoutMs,
        target: { verb: 'get', resource: '/readyz' },
      });
      this.#reachable();
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof KubeApiError && error.statusCode < 500 && error.statusCode !== 429) {
        this.#reachable();
        return;
      }
      const message = error instanceof Error ? error.message : String(error);
      this.#lastError = message.length > 300 ? `${message.slice(0, 299)}…` : message;
      this.#failures += 1;
      // The first failure is worth a line; the rest are counted until the server is back or the bound is passed.
      if (this.#failures === 1)
        this.#options.logger.warn({ server: this.#server, reason: this.#lastError }, 'the API server is not reachable');
    }
  }

  #reachable(): void {
    if (this.#failures > 0) {
      this.#options.logger.info(
        { server: this.#server, failedProbes: this.#failures, downMs: Date.now() - this.#lastReachableAt },
        'the API server is reachable again',
      );
    }
    this.#failures = 0;
    this.#lastError = undefined;
    this.#lastReachableAt = Date.now();
  }
}
