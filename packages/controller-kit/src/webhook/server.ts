import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { connect, type SecureContextOptions } from 'node:tls';
import { type Logger, pino } from 'pino';
import { Registry } from 'prom-client';
import { DEFAULT_TLS_OPTIONS, secureContextTLS, type TLSOptions } from '../manager/tls-options.js';
import { type Clock, realClock } from '../queue/clock.js';
import { CertWatcher, type ServingCertificate } from './cert-watcher.js';
import { type CertWatcherMetrics, certWatcherMetrics, type WebhookMetrics, webhookMetrics } from './metrics.js';
import { DEFAULT_HANDLER_TIMEOUT_MS, MAX_REVIEW_BYTES, serveReview, writeStatus } from './serve-review.js';
import type { AdmissionHandler } from './validating-handler.js';

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
  /** Where the `controller_runtime_webhook_*` and `certwatcher_*` series go; a private registry if absent. */
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
  /** Times the shutdown delay; tests drive a manual clock to act inside the delay without racing it. */
  readonly clock?: Clock;
  /** Upper bound for receiving one whole request (headers and body); the API server gives up after at most 30 s. */
  readonly requestTimeoutMs?: number;
  /** Upper bound for receiving a request's headers (default 10 s). */
  readonly headersTimeoutMs?: number;
  /** How long a connection may take to complete its TLS handshake (default 10 s; Node's own is 120 s). */
  readonly handshakeTimeoutMs?: number;
  /** How long an idle keep-alive connection is kept (default 5 s). */
  readonly keepAliveTimeoutMs?: number;
  /** Largest request body read (default 7 MiB, controller-runtime's); larger ones get 413 and the connection closes. */
  readonly maxRequestBytes?: number;
  /** How long a handler may take before the request is denied with a 500 (default 10 s, the API server's default). */
  readonly handlerTimeoutMs?: number;
  /**
   * Requests served at once (default 16); more get 429 with `Retry-After`, which the API server treats as a failed
   * call. Bounds memory to about this many bodies of `maxRequestBytes`.
   */
  readonly maxConcurrentRequests?: number;
  /** Open connections (default 256); more are refused at accept. */
  readonly maxConnections?: number;
}

/** The limits a webhook server applies, with their defaults filled in. */
export interface WebhookServerLimits {
  readonly maxRequestBytes: number;
  readonly handlerTimeoutMs: number;
  readonly maxConcurrentRequests: number;
  readonly maxConnections: number;
  readonly requestTimeoutMs: number;
  readonly headersTimeoutMs: number;
  readonly handshakeTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
}

export interface WebhookServerAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * The HTTPS server for admission webhooks (controller-runtime's `webhook.Server`). It serves on every replica, so it
 * never needs leader election; the certificate is reloaded whenever cert-manager rotates the files.
 */
export class WebhookServer {
  readonly needLeaderElection = false;
  private readonly handlers = new Map<string, AdmissionHandler>();
  private readonly metrics: WebhookMetrics;
  private readonly certMetrics: CertWatcherMetrics;
  private readonly logger: Logger;
  private readonly certPath: string;
  private readonly keyPath: string;
  private running = false;
  private listeningAt: WebhookServerAddress | undefined;
  private stopSignal: AbortSignal | undefined;
  private httpsServer: Server | undefined;
  private inFlight = 0;
  /** Set once the delay is over: from then on connections are closed as soon as they are idle. */
  private closing = false;
  /** The bounds in force (defaults filled in). */
  readonly limits: WebhookServerLimits;
  /** See `WebhookServerOptions.shutdownDelayMs`; the manager tells the server of a stop at once when it is set. */
  readonly shutdownDelayMs: number;

  constructor(private readonly options: WebhookServerOptions = {}) {
    this.limits = {
      maxRequestBytes: options.maxRequestBytes ?? MAX_REVIEW_BYTES,
      handlerTimeoutMs: options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS,
      maxConcurrentRequests: options.maxConcurrentRequests ?? 16,
      maxConnections: options.maxConnections ?? 256,
      requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
      headersTimeoutMs: options.headersTimeoutMs ?? 10_000,
      handshakeTimeoutMs: options.handshakeTimeoutMs ?? 10_000,
      keepAliveTimeoutMs: options.keepAliveTimeoutMs ?? 5_000,
    };
    for (const [name, value] of Object.entries(this.limits)) {
      if (!Number.isInteger(value) || value <= 0)
        throw new Error(`webhook server option ${name}=${value} must be a positive integer`);
    }
    this.shutdownDelayMs = validShutdownDelayMs(options.shutdownDelayMs ?? DEFAULT_WEBHOOK_SHUTDOWN_DELAY_MS);
    const certDir = options.certDir ?? DEFAULT_WEBHOOK_CERT_DIR;
    this.certPath = join(certDir, options.certName ?? 'tls.crt');
    this.keyPath = join(certDir, options.keyName ?? 'tls.key');
    const registry = options.registry ?? new Registry();
    this.metrics = webhookMetrics(registry);
    this.certMetrics = certWatcherMetrics(registry);
    this.logger = (options.logger ?? pino({ name: 'webhook-server' })).child({ component: 'webhook-server' });
  }

  /** Serves `handler` at `path` (e.g. `/validate-ipam-tally-dev-v1alpha1-pool`). Paths are unique, as in Go. */
  register(path: string, handler: AdmissionHandler): void {
    if (!path.startsWith('/')) throw new Error(`webhook path "${path}" must start with "/"`);
    if (this.handlers.has(path)) throw new Error(`a webhook is already registered at ${path}`);
    this.handlers.set(path, handler);
  }

  get registeredPaths(): readonly string[] {
    return [...this.handlers.keys()];
  }

  /** True while the server accepts connections with a loaded certificate; false as soon as a stop is requested. */
  get started(): boolean {
    return this.listeningAt !== undefined && this.stopSignal?.aborted !== true;
  }

  /** The bound address once started (the real port when `port: 0` was asked for). */
  address(): WebhookServerAddress | undefined {
    return this.listeningAt;
  }

  /**
   * A readiness check for the manager's `/readyz` (controller-runtime's `StartedChecker`): fails until the server
   * listens, then proves it by completing a TLS handshake with it.
   */
  startedChecker(timeoutMs = 5_000): () => Promise<void> {
    return async () => {
      const address = this.listeningAt;
      if (!address || !this.started) throw new Error('the webhook server has not started yet or is stopping');
      await tlsHandshake(address, timeoutMs);
    };
  }

  /**
   * Loads the certificate, listens, and serves until `signal` aborts; then reports not started at once, keeps serving
   * for `shutdownDelayMs` (each response closing its connection, so that callers dial again and reach a replica that
   * stays), stops accepting connections and waits for in-flight requests (up to `shutdownTimeoutMs`). Rejects if the
   * certificate cannot be loaded or the port bound.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.running) throw new Error('the webhook server is already running');
    if (signal.aborted) return;
    this.running = true;
    this.stopSignal = signal;
    const stopWatching = new AbortController();
    try {
      let server: Server | undefined;
      const tls: TLSOptions = {
        ...(this.options.tls ?? DEFAULT_TLS_OPTIONS),
        ...(this.options.tlsMinVersion ? { minVersion: this.options.tlsMinVersion } : {}),
      };
      const tlsMinVersion = tls.minVersion;
      const limits = this.limits;
      const watcher = new CertWatcher({
        certPath: this.certPath,
        keyPath: this.keyPath,
        pollIntervalMs: this.options.certPollIntervalMs ?? 10_000,
        logger: this.logger,
        metrics: this.certMetrics,
        onChange: (certificate) => server?.setSecureContext(secureContextOptions(certificate, tls)),
      });
      const certificate = await watcher.start(stopWatching.signal);
      server = createServer(
        {
          ...secureContextOptions(certificate, tls),
          handshakeTimeout: limits.handshakeTimeoutMs,
          requestTimeout: limits.requestTimeoutMs,
          headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
          keepAliveTimeout: limits.keepAliveTimeoutMs,
          // Node checks the request and header deadlines on this interval (30 s by default, which would let a slow
          // client hold a connection that much past its deadline).
          connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
        },
        (request, response) => this.route(request, response),
      );
      this.httpsServer = server;
      server.maxConnections = limits.maxConnections;
      // An idle socket (no bytes either way) is closed; covers a connection stuck between requests.
      server.setTimeout(limits.requestTimeoutMs + limits.keepAliveTimeoutMs);
      server.on('tlsClientError', (error) => this.logger.debug({ err: error }, 'TLS handshake with a client failed'));
      this.listeningAt = await listen(server, this.options.host ?? '', this.options.port ?? DEFAULT_WEBHOOK_PORT);
      server.on('error', (error) => this.logger.error({ err: error }, 'the webhook server failed'));
      this.logger.info(
        { ...this.listeningAt, paths: this.registeredPaths, tlsMinVersion, ciphers: tls.ciphers ?? 'default', limits },
        'serving webhooks',
      );
      await abortion(signal);
      if (this.shutdownDelayMs > 0) {
        this.logger.info(
          { shutdownDelayMs: this.shutdownDelayMs },
          'stop requested; serving webhooks for the shutdown delay while the endpoints are removed',
        );
        await delay(this.options.clock ?? realClock, this.shutdownDelayMs);
      }
      this.listeningAt = undefined;
      await this.shutdown(server);
    } finally {
      stopWatching.abort();
      this.httpsServer = undefined;
      this.listeningAt = undefined;
      this.closing = false;
      this.running = false;
    }
  }

  private route(request: IncomingMessage, response: ServerResponse): void {
    const path = new URL(request.url ?? '/', 'https://webhook.invalid').pathname;
    const handler = this.handlers.get(path);
    if (!handler) {
      writeStatus(response, 404, 'NotFound', `no webhook is registered at ${path}`);
      return;
    }
    if (this.inFlight >= this.limits.maxConcurrentRequests) {
      this.metrics.requests.inc({ webhook: path, code: '429' });
      this.logger.warn({ webhook: path, inFlight: this.inFlight }, 'too many concurrent admission requests; refusing');
      writeStatus(
        response,
        429,
        'TooManyRequests',
        `the webhook server is already serving ${this.limits.maxConcurrentRequests} requests`,
      );
      const socket = request.socket ?? response.socket;
      response.once('finish', () => socket?.destroy());
      return;
    }
    this.inFlight += 1;
    // Through kube-proxy a kept-alive connection stays pinned to this Pod: once a stop is requested, every answer
    // closes its connection, so the API server's next call dials again and reaches a replica that stays.
    if (this.stopSignal?.aborted) response.setHeader('Connection', 'close');
    response.once('close', () => {
      this.inFlight -= 1;
    });
    // A keep-alive connection becomes idle only once its response is written; past the delay, close it then.
    response.once('finish', () => {
      if (this.closing) this.httpsServer?.closeIdleConnections();
    });
    serveReview(
      {
        path,
        handler,
        metrics: this.metrics,
        logger: this.logger,
        maxRequestBytes: this.limits.maxRequestBytes,
        handlerTimeoutMs: this.limits.handlerTimeoutMs,
      },
      request,
      response,
    ).catch((error: unknown) => {
      // serveReview never rejects by design; if it ever does, the request still ends and the process does not.
      this.logger.error({ err: error, webhook: path }, 'serving an admission request failed unexpectedly');
      response.destroy();
    });
  }

  private async shutdown(server: Server): Promise<void> {
    this.logger.info('stopping the webhook server');
    this.closing = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const force = setTimeout(() => {
      this.logger.warn('in-flight webhook requests did not finish in time; closing their connections');
      server.closeAllConnections();
    }, this.options.shutdownTimeoutMs ?? DEFAULT_WEBHOOK_SHUTDOWN_TIMEOUT_MS);
    try {
      await closed;
    } finally {
      clearTimeout(force);
    }
    this.logger.info('webhook server stopped');
  }
}

function secureContextOptions(certificate: ServingCertificate, tls: TLSOptions): SecureContextOptions {
  return { cert: certificate.certPem, key: certificate.keyPem, ...secureContextTLS(tls) };
}

function listen(server: Server, host: string, port: number): Promise<WebhookServerAddress> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void =>
      reject(
        new Error(`the webhook server cannot listen on ${host || '*'}:${port}: ${error.message}`, { cause: error }),
      );
    server.once('error', onError);
    server.listen(port, host === '' ? undefined : host, () => {
      server.off('error', onError);
      const bound = server.address() as AddressInfo;
      resolve({ host: bound.address, port: bound.port });
    });
  });
}

function validShutdownDelayMs(ms: number): number {
  if (!Number.isInteger(ms) || ms < 0 || ms > MAX_WEBHOOK_SHUTDOWN_DELAY_MS) {
    throw new Error(
      `webhook server option shutdownDelayMs=${ms} must be an integer from 0 to ${MAX_WEBHOOK_SHUTDOWN_DELAY_MS}`,
    );
  }
  return ms;
}

function delay(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => {
    clock.schedule(resolve, ms);
  });
}

function abortion(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** Dials the server the way a client would; unspecified bind addresses are reached over loopback. */
function tlsHandshake(address: WebhookServerAddress, timeoutMs: number): Promise<void> {
  const host = address.host === '::' ? '::1' : address.host === '0.0.0.0' ? '127.0.0.1' : address.host;
  return new Promise((resolve, reject) => {
    // Only reachability and a completed handshake matter here, not who signed the certificate.
    const socket = connect({ host, port: address.port, rejectUnauthorized: false, timeout: timeoutMs }, () => {
      socket.end();
      resolve();
    });
    socket.once('timeout', () => {
      socket.destroy();
      reject(
        new Error(`webhook server at ${host}:${address.port} did not complete a TLS handshake in ${timeoutMs} ms`),
      );
    });
    socket.once('error', (error) =>
      reject(
        new Error(`webhook server at ${host}:${address.port} is not reachable: ${error.message}`, { cause: error }),
      ),
    );
  });
}
