import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { connect, type SecureContextOptions, type TLSSocket } from 'node:tls';
import { type Logger, pino } from 'pino';
import { Registry } from 'prom-client';
import { DEFAULT_TLS_OPTIONS, secureContextTLS, type TLSOptions } from '../manager/tls-options.js';
import { type Clock, realClock } from '../queue/clock.js';
import { CertWatcher, type ServingCertificate } from './cert-watcher.js';
import { ConnectionTable } from './connections.js';
import { type CertWatcherMetrics, certWatcherMetrics, type WebhookMetrics, webhookMetrics } from './metrics.js';
import { readBody } from './read-body.js';
import { echoed, refuseUnread, serveReview } from './serve-review.js';
import {
  DEFAULT_WEBHOOK_CERT_DIR,
  DEFAULT_WEBHOOK_PORT,
  DEFAULT_WEBHOOK_SHUTDOWN_DELAY_MS,
  DEFAULT_WEBHOOK_SHUTDOWN_TIMEOUT_MS,
  resolveLimits,
  validShutdownDelayMs,
  type WebhookServerLimits,
  type WebhookServerOptions,
} from './server-options.js';
import type { AdmissionHandler } from './validating-handler.js';

export {
  DEFAULT_WEBHOOK_CERT_DIR,
  DEFAULT_WEBHOOK_PORT,
  DEFAULT_WEBHOOK_SHUTDOWN_DELAY_MS,
  DEFAULT_WEBHOOK_SHUTDOWN_TIMEOUT_MS,
  MAX_WEBHOOK_SHUTDOWN_DELAY_MS,
  type WebhookServerLimits,
  type WebhookServerOptions,
} from './server-options.js';

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
    this.limits = resolveLimits(options);
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
      const connections = new ConnectionTable({
        maxConnections: limits.maxConnections,
        maxBufferedBytes: limits.maxBufferedRequestBytes,
        metrics: this.metrics,
      });
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
        (request, response) => this.route(connections, request, response),
      );
      this.httpsServer = server;
      // No `server.maxConnections`: Node drops every connection past it at accept, so whoever holds that many idle
      // ones locks the API server out until they time out. The table evicts the longest-waiting one instead.
      server.on('connection', (socket: Socket) => connections.accept(socket));
      server.on('secureConnection', (socket: TLSSocket) => connections.secured(socket));
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

  private route(connections: ConnectionTable, request: IncomingMessage, response: ServerResponse): void {
    const socket = request.socket;
    // The connection waits for its next request from the end of this answer, whatever the answer was.
    response.once('close', () => connections.answered(socket));
    // Through kube-proxy a kept-alive connection stays pinned to this Pod: once a stop is requested, every answer
    // closes its connection, so the API server's next call dials again and reaches a replica that stays.
    if (this.stopSignal?.aborted) response.setHeader('Connection', 'close');
    // A keep-alive connection becomes idle only once its response is written; past the delay, close it then.
    response.once('finish', () => {
      if (this.closing) this.httpsServer?.closeIdleConnections();
    });
    const path = requestPath(request.url);
    if (path === undefined) {
      refuseUnread(request, response, {
        httpStatus: 400,
        reason: 'BadRequest',
        message: `the request target ${echoed(request.url ?? '')} is not a URL path`,
      });
      return;
    }
    const handler = this.handlers.get(path);
    if (!handler) {
      refuseUnread(request, response, {
        httpStatus: 404,
        reason: 'NotFound',
        message: `no webhook is registered at ${echoed(path)}`,
      });
      return;
    }
    const limits = this.limits;
    const clock = this.options.clock ?? realClock;
    serveReview(
      {
        path,
        handler,
        metrics: this.metrics,
        logger: this.logger,
        maxRequestBytes: limits.maxRequestBytes,
        handlerTimeoutMs: limits.handlerTimeoutMs,
        maxConcurrentRequests: limits.maxConcurrentRequests,
        receive: (incoming) =>
          readBody(incoming, {
            maxBytes: limits.maxRequestBytes,
            // Node's request deadline ends the request anyway; a shorter one set for it wins.
            timeoutMs: Math.min(limits.bodyTimeoutMs, limits.requestTimeoutMs),
            clock,
            track: (cut) => connections.startBody(socket, cut),
          }),
        admit: (answer) => {
          if (this.inFlight >= limits.maxConcurrentRequests) return false;
          this.inFlight += 1;
          connections.serving(socket);
          answer.once('close', () => {
            this.inFlight -= 1;
            connections.released(socket);
          });
          return true;
        },
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

/**
 * The path of a request target, or undefined when it has none. Parsed defensively: the target is the client's text,
 * and `new URL` throws on some (e.g. `http://[`), which in a request listener would take the process down.
 */
function requestPath(target: string | undefined): string | undefined {
  try {
    return new URL(target ?? '/', 'https://webhook.invalid').pathname;
  } catch {
    return undefined;
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
