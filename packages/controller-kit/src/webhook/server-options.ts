import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { TLSOptions } from '../manager/tls-options.js';
import type { Clock } from '../queue/clock.js';
import { DEFAULT_BODY_TIMEOUT_MS } from './read-body.js';
import { DEFAULT_HANDLER_TIMEOUT_MS, MAX_REVIEW_BYTES } from './serve-review.js';

/** Where cert-manager's Secret is mounted by CAPI providers' kustomize config (controller-runtime's default). */
export const DEFAULT_WEBHOOK_CERT_DIR = '/tmp/k8s-webhook-server/serving-certs';
export const DEFAULT_WEBHOOK_PORT = 9443;
/** How long a stop waits for in-flight requests before closing their connections. */
export const DEFAULT_WEBHOOK_SHUTDOWN_TIMEOUT_MS = 10_000;
/**
 * No delay unless asked for: in-process uses (tests, the demo) are not reached through a Service, so nothing routes
 * to them after a stop. The shipped Deployments set `--webhook-shutdown-delay`.
 */
export const DEFAULT_WEBHOOK_SHUTDOWN_DELAY_MS = 0;
/**
 * The longest shutdown delay accepted: with the in-flight drain (`DEFAULT_WEBHOOK_SHUTDOWN_TIMEOUT_MS`) it still fits
 * the manager's graceful shutdown timeout (30 s) and Kubernetes' default `terminationGracePeriodSeconds` (30).
 */
export const MAX_WEBHOOK_SHUTDOWN_DELAY_MS = 20_000;

export interface WebhookServerOptions {
  /** Address to listen on; empty (the default) means every interface, as controller-runtime does. */
  readonly host?: string;
  /** Defaults to 9443; 0 picks a free port (see `address()`). */
  readonly port?: number;
  readonly certDir?: string;
  readonly certName?: string;
  readonly keyName?: string;
  /** Lowest TLS version accepted; never below 1.2. Overrides `tls.minVersion`. */
  readonly tlsMinVersion?: TLSOptions['minVersion'];
  /** `--tls-min-version` / `--tls-cipher-suites` (Cluster API's defaults when absent). */
  readonly tls?: TLSOptions;
  /** How often the certificate files are re-read besides file-system events (default 10 s). */
  readonly certPollIntervalMs?: number;
  /** Where the `controller_runtime_webhook_*`, `controller_kit_webhook_*` and `certwatcher_*` series go (else private). */
  readonly registry?: Registry;
  readonly logger?: Logger;
  /** How long a stop waits for in-flight requests before closing their connections (default 10 s). */
  readonly shutdownTimeoutMs?: number;
  /**
   * How long the server keeps accepting connections and serving reviews after a stop is requested, while it reports
   * not started (kube-apiserver's `--shutdown-delay-duration`): the endpoints controller and kube-proxy take a moment
   * to drop a terminating Pod from the webhook Service, and the API server's calls must not meet a closed port then.
   * Default 0 (stop listening at once); at most `MAX_WEBHOOK_SHUTDOWN_DELAY_MS`.
   */
  readonly shutdownDelayMs?: number;
  /**
   * Times the shutdown delay and the body deadline; tests drive a manual clock to act inside them without racing
   * them.
   */
  readonly clock?: Clock;
  /**
   * Upper bound for receiving one whole request (headers and body; default 30 s, the longest the API server waits).
   * A backstop: the header and body deadlines end a slow request well before it.
   */
  readonly requestTimeoutMs?: number;
  /** Upper bound for receiving a request's headers (default 10 s); a connection that sends nothing is closed then. */
  readonly headersTimeoutMs?: number;
  /**
   * How long a request body may take to arrive once its headers are in (default 5 s: the API server writes a review
   * in one go, and even a 7 MiB one needs only 11 Mbit/s). Past it the request is answered 408 and its connection
   * closed. The body is received before the request takes a concurrency slot, so a slow body holds no slot.
   */
  readonly bodyTimeoutMs?: number;
  /** How long a connection may take to complete its TLS handshake (default 10 s; Node's own is 120 s). */
  readonly handshakeTimeoutMs?: number;
  /** How long an idle keep-alive connection is kept (default 5 s). */
  readonly keepAliveTimeoutMs?: number;
  /** Largest request body read (default 7 MiB, controller-runtime's); larger ones get 413 and the connection closes. */
  readonly maxRequestBytes?: number;
  /** How long a handler may take before the request is denied with a 500 (default 10 s, the API server's default). */
  readonly handlerTimeoutMs?: number;
  /**
   * Reviews in their handler at once (default 16); more get 429 with `Retry-After`, which the API server treats as a
   * failed call. A request takes its slot only once its whole body is in, so slots bound handler work, never
   * waiting for a client. Bounds the parsed reviews held to this many bodies of `maxRequestBytes`.
   */
  readonly maxConcurrentRequests?: number;
  /**
   * Body bytes held for all requests still being received together (default 4 × `maxRequestBytes`, 28 MiB: thousands
   * of real reviews, a few of the largest). A body that would pass it evicts the body that has been arriving longest
   * (answered 503, its connection closed), so what slow bodies hold never locks new reviews out.
   */
  readonly maxBufferedRequestBytes?: number;
  /**
   * Open connections (default 256), counted from the TCP accept. One more is never refused: the connection that has
   * waited longest for its next request (idle after its handshake or its last answer, or still sending one) is
   * closed instead; a connection whose review is in a handler is never chosen.
   */
  readonly maxConnections?: number;
}

/** The limits a webhook server applies, with their defaults filled in. */
export interface WebhookServerLimits {
  readonly maxRequestBytes: number;
  readonly handlerTimeoutMs: number;
  readonly maxConcurrentRequests: number;
  readonly maxBufferedRequestBytes: number;
  readonly maxConnections: number;
  readonly requestTimeoutMs: number;
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly handshakeTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
}

/** The bounds `options` ask for, with the defaults filled in; throws naming the option when one is out of range. */
export function resolveLimits(options: WebhookServerOptions): WebhookServerLimits {
  const maxRequestBytes = options.maxRequestBytes ?? MAX_REVIEW_BYTES;
  const limits: WebhookServerLimits = {
    maxRequestBytes,
    handlerTimeoutMs: options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS,
    maxConcurrentRequests: options.maxConcurrentRequests ?? 16,
    maxBufferedRequestBytes: options.maxBufferedRequestBytes ?? 4 * maxRequestBytes,
    maxConnections: options.maxConnections ?? 256,
    requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
    headersTimeoutMs: options.headersTimeoutMs ?? 10_000,
    bodyTimeoutMs: options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
    handshakeTimeoutMs: options.handshakeTimeoutMs ?? 10_000,
    keepAliveTimeoutMs: options.keepAliveTimeoutMs ?? 5_000,
  };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value <= 0)
      throw new Error(`webhook server option ${name}=${value} must be a positive integer`);
  }
  const { maxConcurrentRequests, maxConnections, maxBufferedRequestBytes } = limits;
  // Evictions must always find a connection outside a handler, and the budget must hold one whole body.
  if (maxConnections <= maxConcurrentRequests) {
    throw new Error(
      `webhook server option maxConnections=${maxConnections} must be above maxConcurrentRequests=${maxConcurrentRequests}`,
    );
  }
  if (maxBufferedRequestBytes < maxRequestBytes) {
    throw new Error(
      `webhook server option maxBufferedRequestBytes=${maxBufferedRequestBytes} must be at least maxRequestBytes=${maxRequestBytes}`,
    );
  }
  return limits;
}

export function validShutdownDelayMs(ms: number): number {
  if (!Number.isInteger(ms) || ms < 0 || ms > MAX_WEBHOOK_SHUTDOWN_DELAY_MS) {
    throw new Error(
      `webhook server option shutdownDelayMs=${ms} must be an integer from 0 to ${MAX_WEBHOOK_SHUTDOWN_DELAY_MS}`,
    );
  }
  return ms;
}
