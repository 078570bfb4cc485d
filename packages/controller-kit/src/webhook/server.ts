import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { connect, type SecureVersion } from 'node:tls';
import { type Logger, pino } from 'pino';
import { Registry } from 'prom-client';
import { CertWatcher, type ServingCertificate } from './cert-watcher.js';
import { type CertWatcherMetrics, certWatcherMetrics, type WebhookMetrics, webhookMetrics } from './metrics.js';
import { serveReview, writeStatus } from './serve-review.js';
import type { AdmissionHandler } from './validating-handler.js';

/** Where cert-manager's Secret is mounted by CAPI providers' kustomize config (controller-runtime's default). */
export const DEFAULT_WEBHOOK_CERT_DIR = '/tmp/k8s-webhook-server/serving-certs';
export const DEFAULT_WEBHOOK_PORT = 9443;

export interface WebhookServerOptions {
  /** Address to listen on; empty (the default) means every interface, as controller-runtime does. */
  readonly host?: string;
  /** Defaults to 9443; 0 picks a free port (see `address()`). */
  readonly port?: number;
  readonly certDir?: string;
  readonly certName?: string;
  readonly keyName?: string;
  /** Lowest TLS version accepted; never below 1.2. */
  readonly tlsMinVersion?: Extract<SecureVersion, 'TLSv1.2' | 'TLSv1.3'>;
  /** How often the certificate files are re-read besides file-system events (default 10 s). */
  readonly certPollIntervalMs?: number;
  /** Where the `controller_runtime_webhook_*` and `certwatcher_*` series go; a private registry if absent. */
  readonly registry?: Registry;
  readonly logger?: Logger;
  /** How long a stop waits for in-flight requests before closing their connections (default 10 s). */
  readonly shutdownTimeoutMs?: number;
  /** Upper bound for receiving one request; the API server itself gives up after at most 30 s. */
  readonly requestTimeoutMs?: number;
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

  constructor(private readonly options: WebhookServerOptions = {}) {
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
   * Loads the certificate, listens, and serves until `signal` aborts; then stops accepting connections and waits
   * for in-flight requests (up to `shutdownTimeoutMs`). Rejects if the certificate cannot be loaded or the port bound.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.running) throw new Error('the webhook server is already running');
    if (signal.aborted) return;
    this.running = true;
    this.stopSignal = signal;
    const stopWatching = new AbortController();
    try {
      let server: Server | undefined;
      const tlsMinVersion = this.options.tlsMinVersion ?? 'TLSv1.2';
      const watcher = new CertWatcher({
        certPath: this.certPath,
        keyPath: this.keyPath,
        pollIntervalMs: this.options.certPollIntervalMs ?? 10_000,
        logger: this.logger,
        metrics: this.certMetrics,
        onChange: (certificate) => server?.setSecureContext(secureContextOptions(certificate, tlsMinVersion)),
      });
      const certificate = await watcher.start(stopWatching.signal);
      server = createServer(secureContextOptions(certificate, tlsMinVersion), (request, response) =>
        this.route(request, response),
      );
      this.httpsServer = server;
      server.requestTimeout = this.options.requestTimeoutMs ?? 30_000;
      server.headersTimeout = Math.min(server.headersTimeout, server.requestTimeout);
      server.on('tlsClientError', (error) => this.logger.debug({ err: error }, 'TLS handshake with a client failed'));
      this.listeningAt = await listen(server, this.options.host ?? '', this.options.port ?? DEFAULT_WEBHOOK_PORT);
      server.on('error', (error) => this.logger.error({ err: error }, 'the webhook server failed'));
      this.logger.info({ ...this.listeningAt, paths: this.registeredPaths, tlsMinVersion }, 'serving webhooks');
      await abortion(signal);
      this.listeningAt = undefined;
      await this.shutdown(server);
    } finally {
      stopWatching.abort();
      this.httpsServer = undefined;
      this.listeningAt = undefined;
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
    // A keep-alive connection becomes idle only once its response is written; during a stop, close it then.
    response.once('finish', () => {
      if (this.stopSignal?.aborted) this.httpsServer?.closeIdleConnections();
    });
    void serveReview({ path, handler, metrics: this.metrics, logger: this.logger }, request, response);
  }

  private async shutdown(server: Server): Promise<void> {
    this.logger.info('stopping the webhook server');
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const force = setTimeout(() => {
      this.logger.warn('in-flight webhook requests did not finish in time; closing their connections');
      server.closeAllConnections();
    }, this.options.shutdownTimeoutMs ?? 10_000);
    try {
      await closed;
    } finally {
      clearTimeout(force);
    }
    this.logger.info('webhook server stopped');
  }
}

function secureContextOptions(
  certificate: ServingCertificate,
  minVersion: SecureVersion,
): { cert: string; key: string; minVersion: SecureVersion } {
  return { cert: certificate.certPem, key: certificate.keyPem, minVersion };
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
